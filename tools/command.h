// A subcommand of `parasol`: registers its options on the command line and runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "parasol/comm/mpi_runtime.h"

namespace parasol::tools {

class Command {
 public:
  virtual ~Command() = default;
  // Whether Run needs MPI (a multi-process job). Commands that do not skip MPI start-up.
  virtual bool NeedsMpi() const = 0;
  // Alone (no mpirun or srun), a command runs as one rank over an in-process transport, without
  // MPI's start-up (OpenMPI's singleton forks orted: 0.3 s). One that calls MPI itself says so.
  virtual comm::MpiStart MpiStartAlone() const { return comm::MpiStart::kUnderLauncher; }
  // Checks the options' values together and that every output path can be written, before MPI
  // starts and before any work: a failure here ends the command with exit code 2 and one line
  // (under mpirun, from rank 0 only). Throws InvalidArgumentError or IoError.
  virtual void Validate() {}
  // `mpi` is null unless NeedsMpi(). Returns the exit code; throws parasol::Error on failure.
  virtual int Run(comm::MpiRuntime* mpi) = 0;
  CLI::App* app() const { return app_; }

 protected:
  CLI::App* app_ = nullptr;
};

std::unique_ptr<Command> MakeAllreduceBench(CLI::App& parent);
std::unique_ptr<Command> MakeCluster(CLI::App& parent);
std::unique_ptr<Command> MakeClusterSim(CLI::App& parent);
std::unique_ptr<Command> MakeCollectiveSim(CLI::App& parent);
std::unique_ptr<Command> MakeGnnCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLassoCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLogregCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLdaCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLdaCorpusCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLdaInferCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMakeDesignCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMakeGraphCommand(CLI::App& parent);
std::unique_ptr<Command> MakeLinearPredictCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMfCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMfPredictCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMlrCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMlrPredictCommand(CLI::App& parent);
std::unique_ptr<Command> MakeMtrlCommand(CLI::App& parent);
std::unique_ptr<Command> MakePsBench(CLI::App& parent);
std::unique_ptr<Command> MakeSvmCommand(CLI::App& parent);
std::unique_ptr<Command> MakeSvmPredictCommand(CLI::App& parent);
std::unique_ptr<Command> MakeTrainCommand(CLI::App& parent);

}  // namespace parasol::tools
