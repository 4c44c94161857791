#include "parasol/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

namespace {

// Flushes a file or folder to the disk: without it a power cut after the rename can leave the new
// name pointing at blocks never written.
void Sync(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open to sync: {}", path, std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError(fmt::format("{}: sync failed: {}", path, std::strerror(err)));
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".tmp";
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw IoError(fmt::format("{}: cannot create file: {}", tmp, std::strerror(errno)));
      fill(out);
      out.close();  // flushes; a full disk shows here
      if (!out) throw IoError(fmt::format("{}: write failed: {}", tmp, std::strerror(errno)));
    }
    Sync(tmp, O_WRONLY);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);  // nothing half-written stays behind
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("{}: cannot move into place: {}", path, ec.message()));
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  Sync(folder.empty() ? "." : folder.string(), O_RDONLY | O_DIRECTORY);
}

}  // namespace parasol
