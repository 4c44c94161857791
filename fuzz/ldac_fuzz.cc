// LDA-C corpus: the data file, then a NUL, then its vocabulary.
#include "parasol/apps/lda/corpus.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  const std::string corpus = parasol::fuzz::WriteFile("corpus.dat", parts[0]);
  const std::string vocab = parasol::fuzz::WriteFile("vocab.txt", parts[1]);
  return parasol::fuzz::Read([&] { parasol::apps::lda::ReadLdac(corpus, vocab); });
}
