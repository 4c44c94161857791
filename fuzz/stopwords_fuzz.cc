// A stop-word list (one word per line, # comments).
#include "parasol/apps/lda/corpus.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("stop.txt", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::apps::lda::ReadStopWords(path); });
}
