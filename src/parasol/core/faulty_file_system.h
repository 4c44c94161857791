// A FileSystem that fails on purpose, for tests of what a failing disk or a crash leaves behind:
// the local file system, except that the next file created whose path contains a pattern gets
// the fault armed for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "parasol/core/file_system.h"
#include "parasol/core/mutex.h"

namespace parasol {

enum class FileFault {
  kWriteError,  // the first append fails (EIO)
  kDiskFull,    // appends fail (ENOSPC) once the file holds `after_bytes`
  // The process "dies" once the file holds `after_bytes`: the torn file stays on the disk as it is,
  // and every later operation of this file system fails without touching the disk (no clean-up
  // runs in a dead process).
  kCrash,
};

class FaultyFileSystem final : public FileSystem {
 public:
  // Arms `fault` for the next file created whose path contains `pattern`; one fault at a time.
  void Arm(FileFault fault, std::string pattern, uint64_t after_bytes = 0) PARASOL_EXCLUDES(mu_);
  // Faults that have fired.
  int fired() const PARASOL_EXCLUDES(mu_);
  bool crashed() const PARASOL_EXCLUDES(mu_);

  std::unique_ptr<WritableFile> NewWritableFile(const std::string& path) override PARASOL_EXCLUDES(mu_);
  void Rename(const std::string& from, const std::string& to) override PARASOL_EXCLUDES(mu_);
  void SyncFolder(const std::string& path) override PARASOL_EXCLUDES(mu_);
  void RemoveIfExists(const std::string& path) noexcept override PARASOL_EXCLUDES(mu_);

  // For the files it hands out.
  void Fire(bool crash) PARASOL_EXCLUDES(mu_);
  void ThrowIfCrashed(const std::string& path) const PARASOL_EXCLUDES(mu_);

 private:
  LocalFileSystem local_;
  mutable Mutex mu_;
  bool armed_ PARASOL_GUARDED_BY(mu_) = false;
  FileFault fault_ PARASOL_GUARDED_BY(mu_) = FileFault::kWriteError;
  std::string pattern_ PARASOL_GUARDED_BY(mu_);
  uint64_t after_bytes_ PARASOL_GUARDED_BY(mu_) = 0;
  int fired_ PARASOL_GUARDED_BY(mu_) = 0;
  bool crashed_ PARASOL_GUARDED_BY(mu_) = false;
};

}  // namespace parasol
