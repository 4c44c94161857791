#include "parasol/core/array_file.h"

#include <fmt/format.h>

#include <cassert>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "parasol/core/atomic_file.h"
#include "parasol/core/checksum.h"
#include "parasol/core/error.h"

namespace parasol {

namespace {
constexpr size_t kMagicBytes = 8;
constexpr size_t kHeaderBytes = kMagicBytes + sizeof(uint64_t);
}  // namespace

void WriteArrayFile(const std::string& path, std::string_view magic, std::span<const double> values) {
  assert(magic.size() == kMagicBytes);
  const uint64_t count = values.size();
  std::string bytes(kHeaderBytes + count * sizeof(double) + sizeof(uint64_t), '\0');
  std::memcpy(bytes.data(), magic.data(), kMagicBytes);
  std::memcpy(bytes.data() + kMagicBytes, &count, sizeof(count));
  if (count > 0) std::memcpy(bytes.data() + kHeaderBytes, values.data(), count * sizeof(double));
  const uint64_t sum = Fnv1a64(bytes.data(), bytes.size() - sizeof(sum));
  std::memcpy(bytes.data() + bytes.size() - sizeof(sum), &sum, sizeof(sum));
  WriteFileAtomically(
      path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

std::vector<double> ReadArrayFile(const std::string& path, std::string_view magic, uint64_t count) {
  assert(magic.size() == kMagicBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open", path));
  const uint64_t want = kHeaderBytes + count * sizeof(double) + sizeof(uint64_t);
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || size < kHeaderBytes)
    throw ParseError(path, 0, fmt::format("{} bytes: too short to be an array", size));
  std::string bytes(kHeaderBytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(kHeaderBytes));
  if (std::memcmp(bytes.data(), magic.data(), kMagicBytes) != 0)
    throw ParseError(path, 0, fmt::format("not a file of kind {}", magic));
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + kMagicBytes, sizeof(stored));
  if (stored != count)
    throw ParseError(path, 0, fmt::format("holds {} values; this problem needs {}", stored, count));
  if (size != want)
    throw ParseError(path, 0,
                     fmt::format("{} bytes; {} values need {}: truncated or padded", size, count, want));
  bytes.resize(want);
  in.read(bytes.data() + kHeaderBytes, static_cast<std::streamsize>(want - kHeaderBytes));
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + want - sizeof(sum), sizeof(sum));
  if (!in || Fnv1a64(bytes.data(), want - sizeof(sum)) != sum)
    throw ParseError(path, 0, "checksum mismatch: the file is corrupt or truncated");
  std::vector<double> values(count);
  if (count > 0) std::memcpy(values.data(), bytes.data() + kHeaderBytes, count * sizeof(double));
  return values;
}

}  // namespace parasol
