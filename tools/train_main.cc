// The entry point of libparasol_train.so: `parasol train ...`, handed over by parasol_main.cc.
// Only this module links libtorch.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/command.h"
#include "tools/command_line.h"

extern "C" __attribute__((visibility("default"))) int ParasolTrainMain(int argc, char** argv) {
  parasol::tools::KeepFreedMemory();
  CLI::App app;
  parasol::tools::ConfigureApp(app);
  std::vector<std::unique_ptr<parasol::tools::Command>> commands;
  commands.push_back(parasol::tools::MakeTrainCommand(app));
  return parasol::tools::RunCommandLine(app, commands, argc, argv);
}
