#include "parasol/core/array_file.h"

#include <cassert>

#include "parasol/core/section_file.h"

namespace parasol {

void WriteArrayFile(FileSystem& fs, const std::string& path, std::string_view magic,
                    std::span<const double> values) {
  assert(magic.size() == 8);
  SectionWriter w(magic);
  w.Add("values", values);
  w.Write(fs, path);
}

void WriteArrayFile(const std::string& path, std::string_view magic, std::span<const double> values) {
  LocalFileSystem local;
  WriteArrayFile(local, path, magic, values);
}

std::vector<double> ReadArrayFile(const std::string& path, std::string_view magic, uint64_t count) {
  assert(magic.size() == 8);
  return SectionReader(path, magic).Get<double>("values", count);
}

}  // namespace parasol
