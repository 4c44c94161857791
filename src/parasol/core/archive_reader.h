// Reads the files of an archive (.tar, .tar.gz, .tar.xz, .tar.bz2, .zip) with libarchive, which
// checks headers and compressed streams: a corrupt or truncated archive is an error, never a
// shorter input.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace parasol {

// Whether `path` is named like an archive ForEachArchiveFile reads.
bool IsArchivePath(const std::string& path);

// Calls fn(name, contents) for every regular file of the archive, in archive order. Throws
// IoError when the file cannot be opened, ParseError "path:0: ..." when the archive is corrupt or
// truncated or a file in it is larger than `max_file_bytes` (checked while reading, whatever the
// header claims), and whatever fn throws.
void ForEachArchiveFile(const std::string& path, uint64_t max_file_bytes,
                        const std::function<void(const std::string&, std::string)>& fn);

}  // namespace parasol
