// A child process in its own process group (so a launcher such as mpirun and the ranks it starts
// can be signalled together), its output appended to a log file. The destructor kills the group
// and reaps the child: a Subprocess never leaves a zombie or an orphaned rank behind.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "parasol/core/deadline.h"

namespace parasol {

class Subprocess {
 public:
  // Starts argv[0] (searched in PATH) with `env` added to this process's environment
  // ("NAME=value" each). Throws IoError naming the program when it cannot be started.
  Subprocess(const std::vector<std::string>& argv, const std::string& log_path,
             const std::vector<std::string>& env = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // The exit status once the child has ended (128 + signal number when a signal ended it);
  // nullopt while it runs. Never blocks.
  std::optional<int> Poll();
  // Polls until the child ends or `deadline` passes (nullopt then).
  std::optional<int> Wait(Deadline deadline);
  // Sends `signal` to the child's whole process group (nothing once it has been reaped).
  void Signal(int signal);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace parasol
