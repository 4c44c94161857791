#include "tools/command_line.h"

#include <malloc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"

namespace parasol::tools {
namespace {

int ExitCode(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kIo: return 2;
    default: return 1;
  }
}

// Under mpirun every rank parses the same command line: one of them reports a usage error.
bool ReportsUsageErrors() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* rank = std::getenv(var)) return std::string_view(rank) == "0";
  }
  return true;
}

// A usage error: one line (and where to look for the options), exit code 2. The ranks that stay
// silent wait before they exit: mpirun ends the whole job when the first rank fails, and a silent
// rank that failed first would kill the reporting one before it had written its line (seen under
// ASan, whose start-up is slow). mpirun ends the waiting ranks as soon as the reporting one exits.
int UsageError(const CLI::App& app, std::string_view message) {
  if (!ReportsUsageErrors()) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return 2;
  }
  const CLI::App* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
  std::cerr << "parasol" << (sub ? " " + sub->get_name() : "") << ": " << message << " (see 'parasol"
            << (sub ? " " + sub->get_name() : "") << " --help')" << std::endl;
  return 2;
}

// Runs a parsed and validated command; errors end this rank (and under mpirun the job).
int Run(Command& command, int argc, char** argv) {
  std::unique_ptr<comm::MpiRuntime> mpi;
  const std::string name = command.app()->get_name();
  try {
    if (command.NeedsMpi()) mpi = std::make_unique<comm::MpiRuntime>(&argc, &argv);
    return command.Run(mpi.get());
  } catch (const Error& e) {
    std::cerr << "parasol " << name << ": " << e.what() << std::endl;
    // Other ranks may be waiting on this one: end the whole job rather than hang in finalize.
    if (mpi && mpi->size() > 1) mpi->Abort(ExitCode(e));
    return ExitCode(e);
  } catch (const std::filesystem::filesystem_error& e) {
    // A file or folder the system refused (permissions, a full disk): the user's to fix, as an IoError.
    std::cerr << "parasol " << name << ": " << e.path1().string() << ": " << e.code().message() << std::endl;
    if (mpi && mpi->size() > 1) mpi->Abort(2);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "parasol " << name << ": internal error: " << e.what() << std::endl;
    if (mpi && mpi->size() > 1) mpi->Abort(1);
    return 1;
  }
}

}  // namespace

// glibc's defaults hand large freed blocks back to the kernel (mmap above the threshold, heap
// trimming), and every step then faults each page in again and zeroes it: 60% of a VGG step on
// this machine. Freed memory is kept for reuse instead.
void KeepFreedMemory() {
  // Older glibc caps the threshold at 32 MiB and refuses more.
  if (mallopt(M_MMAP_THRESHOLD, 1 << 30) == 0) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void ConfigureApp(CLI::App& app) {
  app.description("parasol: a platform for distributed machine learning");
  app.set_version_flag("--version", std::string("parasol ") + PARASOL_VERSION);
  app.require_subcommand(1);
}

int RunCommandLine(CLI::App& app, std::vector<std::unique_ptr<Command>>& commands, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      const auto all = std::as_const(app).get_subcommands([](const CLI::App*) { return true; });
      for (const CLI::App* sub : all) names += (names.empty() ? "" : ", ") + sub->get_name();
      return UsageError(app, fmt::format("unknown command '{}' (commands: {})", argv[1], names));
    }
    if (app.get_subcommands().empty()) return UsageError(app, "a command is required");
    return UsageError(app, e.what());
  }
  for (auto& command : commands) {
    if (!command->app()->parsed()) continue;
    try {
      command->Validate();
    } catch (const Error& e) {
      return UsageError(app, e.what());
    }
    return Run(*command, argc, argv);
  }
  return 1;
}

}  // namespace parasol::tools
