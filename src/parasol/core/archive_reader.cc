#include "parasol/core/archive_reader.h"

#include <archive.h>
#include <archive_entry.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

namespace {

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;

[[noreturn]] void Corrupt(const std::string& path, archive* a, std::string_view where) {
  const char* why = archive_error_string(a);
  throw ParseError(path, 0, fmt::format("{}: {}", where, why ? why : "corrupt archive"));
}

}  // namespace

bool IsArchivePath(const std::string& path) {
  for (const char* ext : {".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".zip"}) {
    if (path.ends_with(ext)) return true;
  }
  return false;
}

void ForEachArchiveFile(const std::string& path, uint64_t max_file_bytes,
                        const std::function<void(const std::string&, std::string)>& fn) {
  ArchivePtr a(archive_read_new(), archive_read_free);
  if (!a) throw InternalError("libarchive: out of memory");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
    if (archive_errno(a.get()) == ENOENT || archive_errno(a.get()) == EACCES) {
      throw IoError(fmt::format("{}: cannot open: {}", path, std::strerror(archive_errno(a.get()))));
    }
    Corrupt(path, a.get(), "not a readable archive");
  }
  archive_entry* entry = nullptr;
  std::array<char, 1 << 16> buf;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) Corrupt(path, a.get(), "bad entry header");
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    std::string body;
    for (;;) {
      const la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) Corrupt(path, a.get(), fmt::format("'{}'", name));
      if (body.size() + static_cast<uint64_t>(n) > max_file_bytes) {
        throw ParseError(path, 0, fmt::format("'{}' is larger than {} bytes", name, max_file_bytes));
      }
      body.append(buf.data(), static_cast<size_t>(n));
    }
    fn(name, std::move(body));
  }
}

}  // namespace parasol
