// A folder of text documents in an archive (libarchive: tar, tar.gz, tar.xz, zip...).
#include "parasol/apps/lda/corpus.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("docs.tar", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::apps::lda::ReadText(path, {.min_count = 1}); });
}
