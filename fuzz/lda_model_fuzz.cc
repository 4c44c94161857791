// A trained LDA model folder: model.txt, then a NUL, then vocab.txt.
#include "parasol/apps/lda/model_io.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  parasol::fuzz::WriteFile("model.txt", parts[0]);
  parasol::fuzz::WriteFile("vocab.txt", parts[1]);
  return parasol::fuzz::Read([] { parasol::apps::lda::LoadModel(parasol::fuzz::Dir()); });
}
