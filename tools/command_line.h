// The driver every `parasol` entry point shares: parses the command line into one of `commands`,
// validates it, starts MPI if it needs it, runs it, and turns errors into exit codes (2 for bad
// input, 1 for failures) with one line on stderr; under mpirun a failing rank ends the job.
#pragma once

#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/command.h"

namespace parasol::tools {

// Jobs free and allocate the same large buffers every step; keeps freed memory for reuse (see .cc).
void KeepFreedMemory();

// Whether stdout is a terminal a person watches (not a file, a pipe, or mpirun's pseudo-terminal):
// only there does a progress bar redraw its line.
bool StdoutIsATerminal();

// The `parasol` application every entry point parses with: its name, --version, one subcommand.
void ConfigureApp(CLI::App& app);

// `app` holds the commands' subcommands (made with `app` as their parent). Returns the exit code.
int RunCommandLine(CLI::App& app, std::vector<std::unique_ptr<Command>>& commands, int argc, char** argv);

}  // namespace parasol::tools
