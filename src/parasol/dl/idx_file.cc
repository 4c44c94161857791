#include "parasol/dl/idx_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

// Reads a gzip or plain file whole (zlib reads both).
std::vector<uint8_t> ReadAll(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IoError(fmt::format("{}: cannot open", path));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.insert(out.end(), buf, buf + n);
    if (out.size() > kMaxIdxBytes) {
      gzclose(f);
      throw ParseError(path, 0, fmt::format("more than {} bytes uncompressed", kMaxIdxBytes));
    }
  }
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw ParseError(path, 0, "corrupt gzip data");
  return out;
}

uint32_t BigEndian32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | b[at + 3];
}

}  // namespace

IdxImages ReadIdxImages(const std::string& path) {
  IdxImages im;
  im.file = ReadAll(path);
  if (im.file.size() < 16 || BigEndian32(im.file, 0) != 0x803) {
    throw ParseError(path, 0, "not an IDX image file (magic 0x00000803 expected)");
  }
  im.count = BigEndian32(im.file, 4);
  im.rows = BigEndian32(im.file, 8);
  im.cols = BigEndian32(im.file, 12);
  // Each factor is below 2^32 and the file below 2^33 bytes: check the image size before the
  // product (which could overflow) is formed.
  const int64_t pixels = static_cast<int64_t>(im.file.size()) - 16;
  if (im.rows < 1 || im.cols < 1 || im.rows > 65536 || im.cols > 65536 || pixels % (im.rows * im.cols) != 0 ||
      pixels / (im.rows * im.cols) != im.count) {
    throw ParseError(path, 0,
                     fmt::format("{} bytes, but the header promises {} images of {}x{}", im.file.size(),
                                 im.count, im.rows, im.cols));
  }
  return im;
}

std::vector<uint8_t> ReadIdxLabels(const std::string& path, int64_t count) {
  std::vector<uint8_t> lab = ReadAll(path);
  if (lab.size() < 8 || BigEndian32(lab, 0) != 0x801) {
    throw ParseError(path, 0, "not an IDX label file (magic 0x00000801 expected)");
  }
  if (BigEndian32(lab, 4) != count || lab.size() != static_cast<size_t>(8 + count)) {
    throw ParseError(path, 0, fmt::format("expected {} labels", count));
  }
  lab.erase(lab.begin(), lab.begin() + 8);
  for (int64_t i = 0; i < count; ++i) {
    if (lab[i] > 9) throw ParseError(path, 0, fmt::format("label {} of image {} is not a digit", lab[i], i));
  }
  return lab;
}

}  // namespace parasol::dl
