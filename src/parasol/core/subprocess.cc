#include "parasol/core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/error.h"

extern char** environ;

namespace parasol {
namespace {

// posix_spawn's file actions and attributes, released however spawning ends.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& log_path,
                       const std::vector<std::string>& env) {
  if (argv.empty()) throw InvalidArgumentError("Subprocess: empty command");
  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&s.actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&s.actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&s.attr, 0);
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, argv[0].c_str(), &s.actions, &s.attr, args.data(), envp.data());
  if (rc != 0) throw IoError(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
}

Subprocess::~Subprocess() {
  if (status_) return;
  Signal(SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
}

std::optional<int> Subprocess::Poll() {
  if (status_) return status_;
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    // Ranks a launcher left behind would hold "GPUs" the scheduler has handed out again.
    kill(-pid_, SIGKILL);
  }
  return status_;
}

std::optional<int> Subprocess::Wait(Deadline deadline) {
  while (!Poll() && !deadline.Expired()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return status_;
}

void Subprocess::Signal(int signal) {
  if (!status_) kill(-pid_, signal);
}

}  // namespace parasol
