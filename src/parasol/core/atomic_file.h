// Writing a file whole or not at all: the contents go to PATH.tmp, which is synced to the disk and
// renamed over PATH only once complete (then the folder is synced), so a crash, a power cut or an
// error leaves the previous file (or none), never half.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "parasol/core/file_system.h"

namespace parasol {

// Calls fill(stream) on PATH.tmp (binary), then renames it into place. Throws IoError naming the
// file when it cannot be created, written (a full disk), synced or moved; PATH.tmp is removed then.
// Whatever fill throws is rethrown after that too.
void WriteFileAtomically(FileSystem& fs, const std::string& path,
                         const std::function<void(std::ostream&)>& fill);
// The same on the local file system.
void WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace parasol
