// Checks of command-line options that run before any work (and before MPI starts), so that a bad
// value or an output path that cannot be written ends the command at once with exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace parasol::tools {

// Validators for numeric options (CLI11's own accept "nan"): the value must be a finite number
// in the range. Use as app->add_option(...)->check(Positive()).
CLI::Validator Positive();                     // > 0
CLI::Validator NonNegative();                  // >= 0
CLI::Validator Between(double lo, double hi);  // lo <= value <= hi

// That `path` can be created as a file: its folder exists and is writable, and it is not a
// folder. Throws IoError "OPTION PATH: why".
void CheckOutputFile(const std::string& option, const std::string& path);
// That `dir` exists as a writable folder or can be created (it is created). Throws IoError.
void CheckOutputFolder(const std::string& option, const std::string& dir);
// --checkpoint DIR [--checkpoint-every N]: DIR checked as above; N without DIR is an
// InvalidArgumentError; with DIR and no N, N becomes `default_every` (0 keeps it 0).
void CheckCheckpointOptions(const std::string& dir, uint64_t* every, uint64_t default_every);

}  // namespace parasol::tools
