// The IDX files of MNIST-style data sets (images and labels), gzipped or plain. Kept apart from
// the tensors so that the reader can be fuzzed without libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parasol::dl {

// The largest IDX file read (uncompressed): MNIST-sized sets are 50 MB; a gzip stream that
// inflates past this is refused rather than allowed to fill memory.
inline constexpr size_t kMaxIdxBytes = size_t{4} << 30;

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> file;  // the whole file; pixels() skips the header
  const uint8_t* pixels() const { return file.data() + 16; }
};

// Throws ParseError "path:0: what is wrong" for a bad magic number, a header that disagrees with
// the file's size, corrupt gzip data or more than kMaxIdxBytes; IoError when it cannot be opened.
IdxImages ReadIdxImages(const std::string& path);
// `count` labels, each a digit 0-9.
std::vector<uint8_t> ReadIdxLabels(const std::string& path, int64_t count);

}  // namespace parasol::dl
