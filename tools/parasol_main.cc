// `parasol <command> ...`: alone, a one-process job; under `mpirun -np N`, one of N ranks.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <thread>
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"
#include "tools/command.h"

namespace {

int ExitCode(const parasol::Error& e) {
  switch (e.code()) {
    case parasol::ErrorCode::kInvalidArgument:
    case parasol::ErrorCode::kParse:
    case parasol::ErrorCode::kIo: return 2;
    default: return 1;
  }
}

}  // namespace

// OpenMP reads its wait policy when the library loads: ranks that share cores must not spin in
// it, so `train` restarts itself once with OMP_WAIT_POLICY=PASSIVE unless the user chose one.
void PassiveOpenMp(char** argv) {
  if (argv[1] == nullptr || std::string_view(argv[1]) != "train" || std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then go on with the active policy
}

// Jobs free and allocate the same large buffers every step (a model's activations and gradients,
// a parameter server's messages). glibc's defaults hand such blocks back to the kernel (mmap
// above the threshold, heap trimming), and every step then faults each page in again and zeroes
// it: 60% of a VGG step on this machine. Freed memory is kept for reuse instead.
void KeepFreedMemory() {
  // Older glibc caps the threshold at 32 MiB and refuses more.
  if (mallopt(M_MMAP_THRESHOLD, 1 << 30) == 0) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
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

int main(int argc, char** argv) {
  PassiveOpenMp(argv);
  KeepFreedMemory();
  CLI::App app{"parasol: a platform for distributed machine learning"};
  app.set_version_flag("--version", std::string("parasol ") + PARASOL_VERSION);
  app.require_subcommand(1);
  std::vector<std::unique_ptr<parasol::tools::Command>> commands;
  commands.push_back(parasol::tools::MakeAllreduceBench(app));
  commands.push_back(parasol::tools::MakeCluster(app));
  commands.push_back(parasol::tools::MakeClusterSim(app));
  commands.push_back(parasol::tools::MakeCollectiveSim(app));
  commands.push_back(parasol::tools::MakeGnnCommand(app));
  commands.push_back(parasol::tools::MakeLassoCommand(app));
  commands.push_back(parasol::tools::MakeLogregCommand(app));
  commands.push_back(parasol::tools::MakeLdaCommand(app));
  commands.push_back(parasol::tools::MakeLdaCorpusCommand(app));
  commands.push_back(parasol::tools::MakeLdaInferCommand(app));
  commands.push_back(parasol::tools::MakeMakeDesignCommand(app));
  commands.push_back(parasol::tools::MakeMakeGraphCommand(app));
  commands.push_back(parasol::tools::MakeMfCommand(app));
  commands.push_back(parasol::tools::MakeMlrCommand(app));
  commands.push_back(parasol::tools::MakeMtrlCommand(app));
  commands.push_back(parasol::tools::MakePsBench(app));
  commands.push_back(parasol::tools::MakeSvmCommand(app));
  commands.push_back(parasol::tools::MakeSvmPredictCommand(app));
  commands.push_back(parasol::tools::MakeTrainCommand(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const auto& c : commands) names += (names.empty() ? "" : ", ") + c->app()->get_name();
      return UsageError(app, fmt::format("unknown command '{}' (commands: {})", argv[1], names));
    }
    if (app.get_subcommands().empty()) return UsageError(app, "a command is required");
    return UsageError(app, e.what());
  }
  for (auto& command : commands) {
    if (!command->app()->parsed()) continue;
    try {
      command->Validate();
    } catch (const parasol::Error& e) {
      return UsageError(app, e.what());
    }
    std::unique_ptr<parasol::comm::MpiRuntime> mpi;
    try {
      if (command->NeedsMpi()) mpi = std::make_unique<parasol::comm::MpiRuntime>(&argc, &argv);
      return command->Run(mpi.get());
    } catch (const parasol::Error& e) {
      std::cerr << "parasol " << command->app()->get_name() << ": " << e.what() << std::endl;
      // Other ranks may be waiting on this one: end the whole job rather than hang in finalize.
      if (mpi && mpi->size() > 1) mpi->Abort(ExitCode(e));
      return ExitCode(e);
    } catch (const std::filesystem::filesystem_error& e) {
      // A file or folder the system refused (permissions, a full disk): the user's to fix, as an IoError.
      std::cerr << "parasol " << command->app()->get_name() << ": " << e.path1().string() << ": "
                << e.code().message() << std::endl;
      if (mpi && mpi->size() > 1) mpi->Abort(2);
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "parasol " << command->app()->get_name() << ": internal error: " << e.what() << std::endl;
      if (mpi && mpi->size() > 1) mpi->Abort(1);
      return 1;
    }
  }
  return 1;
}
