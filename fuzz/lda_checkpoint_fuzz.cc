// The meta.txt of an LDA checkpoint.
#include "parasol/apps/lda/lda_checkpoint.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parasol::fuzz::WriteFile("meta.txt", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([] { parasol::apps::lda::ReadMeta(parasol::fuzz::Dir()); });
}
