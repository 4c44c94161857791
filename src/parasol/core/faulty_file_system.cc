#include "parasol/core/faulty_file_system.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "parasol/core/error.h"

namespace parasol {

namespace {

// Passes everything to the real file, until the crash of any file of the file system or, for the
// file a fault is armed for (`fault` set), until the fault's byte count: then fails as the disk would.
class FaultyFile final : public WritableFile {
 public:
  FaultyFile(FaultyFileSystem& fs, std::string path, std::unique_ptr<WritableFile> file,
             std::optional<FileFault> fault, uint64_t after_bytes)
      : fs_(fs), path_(std::move(path)), file_(std::move(file)), fault_(fault), left_(after_bytes) {}

  void Append(std::string_view data) override {
    fs_.ThrowIfCrashed(path_);
    if (!fault_) return file_->Append(data);
    if (*fault_ == FileFault::kWriteError) Fail(false, EIO);
    const size_t keep = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
    file_->Append(data.substr(0, keep));
    left_ -= keep;
    written_ += keep;
    if (keep < data.size()) Fail(*fault_ == FileFault::kCrash, ENOSPC);
  }
  void Sync() override {
    fs_.ThrowIfCrashed(path_);
    file_->Sync();
  }
  void Close() override {
    fs_.ThrowIfCrashed(path_);
    file_->Close();
  }

 private:
  [[noreturn]] void Fail(bool crash, int err) {
    fs_.Fire(crash);
    if (crash) throw IoError(fmt::format("{}: simulated crash after {} bytes", path_, written_));
    throw IoError(fmt::format("{}: write failed: {}", path_, std::strerror(err)));
  }

  FaultyFileSystem& fs_;
  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::optional<FileFault> fault_;
  uint64_t left_;
  uint64_t written_ = 0;
};

}  // namespace

void FaultyFileSystem::Arm(FileFault fault, std::string pattern, uint64_t after_bytes) {
  MutexLock lock(mu_);
  armed_ = true;
  fault_ = fault;
  pattern_ = std::move(pattern);
  after_bytes_ = after_bytes;
}

int FaultyFileSystem::fired() const {
  MutexLock lock(mu_);
  return fired_;
}

bool FaultyFileSystem::crashed() const {
  MutexLock lock(mu_);
  return crashed_;
}

void FaultyFileSystem::Fire(bool crash) {
  MutexLock lock(mu_);
  ++fired_;
  crashed_ = crashed_ || crash;
}

void FaultyFileSystem::ThrowIfCrashed(const std::string& path) const {
  MutexLock lock(mu_);
  if (crashed_) throw IoError(fmt::format("{}: the process has crashed (simulated)", path));
}

std::unique_ptr<WritableFile> FaultyFileSystem::NewWritableFile(const std::string& path) {
  ThrowIfCrashed(path);
  std::unique_ptr<WritableFile> file = local_.NewWritableFile(path);
  MutexLock lock(mu_);
  if (!armed_ || path.find(pattern_) == std::string::npos) {
    return std::make_unique<FaultyFile>(*this, path, std::move(file), std::nullopt, 0);
  }
  armed_ = false;
  return std::make_unique<FaultyFile>(*this, path, std::move(file), fault_, after_bytes_);
}

void FaultyFileSystem::Rename(const std::string& from, const std::string& to) {
  ThrowIfCrashed(to);
  local_.Rename(from, to);
}

void FaultyFileSystem::SyncFolder(const std::string& path) {
  ThrowIfCrashed(path);
  local_.SyncFolder(path);
}

void FaultyFileSystem::RemoveIfExists(const std::string& path) noexcept {
  if (crashed()) return;
  local_.RemoveIfExists(path);
}

}  // namespace parasol
