#include "parasol/core/file_system.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "parasol/core/error.h"

namespace parasol {

namespace {

std::string Failure(const std::string& path, const char* what, int err) {
  return fmt::format("{}: {}: {}", path, what, std::strerror(err));
}

// Unbuffered: WriteFileAtomically's stream buffers, and a write's error then names its cause.
class LocalFile final : public WritableFile {
 public:
  LocalFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~LocalFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Append(std::string_view data) override {
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError(Failure(path_, "write failed", errno));
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  void Sync() override {
    if (::fsync(fd_) != 0) throw IoError(Failure(path_, "sync failed", errno));
  }

  void Close() override {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) throw IoError(Failure(path_, "close failed", errno));
  }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

std::unique_ptr<WritableFile> LocalFileSystem::NewWritableFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(Failure(path, "cannot create file", errno));
  return std::make_unique<LocalFile>(path, fd);
}

void LocalFileSystem::Rename(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) throw IoError(Failure(to, "cannot move into place", errno));
}

// Without it a power cut after the rename can leave the new name pointing at blocks never written.
void LocalFileSystem::SyncFolder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw IoError(Failure(path, "cannot open to sync", errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError(Failure(path, "sync failed", err));
}

void LocalFileSystem::RemoveIfExists(const std::string& path) noexcept { ::unlink(path.c_str()); }

}  // namespace parasol
