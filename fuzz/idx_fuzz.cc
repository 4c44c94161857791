// MNIST IDX files: the images, then a NUL, then the labels (plain or gzipped).
#include "parasol/dl/idx_file.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  const std::string images = parasol::fuzz::WriteFile("images.idx", parts[0]);
  const std::string labels = parasol::fuzz::WriteFile("labels.idx", parts[1]);
  return parasol::fuzz::Read([&] {
    const parasol::dl::IdxImages im = parasol::dl::ReadIdxImages(images);
    parasol::dl::ReadIdxLabels(labels, im.count);
  });
}
