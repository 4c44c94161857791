// UCI bag of words: docword.f.txt, then a NUL, then vocab.f.txt.
#include "parasol/apps/lda/corpus.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  parasol::fuzz::WriteFile("docword.f.txt", parts[0]);
  parasol::fuzz::WriteFile("vocab.f.txt", parts[1]);
  return parasol::fuzz::Read([] { parasol::apps::lda::ReadUci(parasol::fuzz::Dir()); });
}
