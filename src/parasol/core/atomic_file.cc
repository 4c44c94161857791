#include "parasol/core/atomic_file.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

void WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(fmt::format("{}: cannot create file", tmp));
    fill(out);
    if (!out.flush()) throw IoError(fmt::format("{}: write failed", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("{}: cannot move into place: {}", path, ec.message()));
}

}  // namespace parasol
