// One document per line (optionally ID<TAB>text).
#include "parasol/apps/lda/corpus.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("docs.txt", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::apps::lda::ReadLines(path, {.min_count = 1}); });
}
