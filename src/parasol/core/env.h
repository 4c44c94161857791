// What a component reaches the machine through: its files and its clock (LevelDB's Env). Context
// carries one, so a test can hand every writer a FaultyFileSystem and every poll, injected delay
// and timed wait a ManualClock, rank by rank, without a process-wide switch.
#pragma once

#include "parasol/core/clock.h"
#include "parasol/core/file_system.h"

namespace parasol {

// Cheap to copy: it holds pointers, and the machine's own file system and clock (stateless) for
// those left null. What the pointers name must outlive the Env and its copies.
class Env {
 public:
  Env() = default;
  explicit Env(FileSystem* files, Clock* clock = nullptr) : files_(files), clock_(clock) {}

  FileSystem& files() { return files_ != nullptr ? *files_ : local_files_; }
  Clock& clock() { return clock_ != nullptr ? *clock_ : system_clock_; }

 private:
  FileSystem* files_ = nullptr;
  Clock* clock_ = nullptr;
  LocalFileSystem local_files_;
  SystemClock system_clock_;
};

}  // namespace parasol
