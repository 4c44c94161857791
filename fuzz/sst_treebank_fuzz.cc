// Sentiment treebank lines (PTB brackets, labels 0-4), read as `parasol train --model tree-lstm`
// reads them: growing the vocabulary, then against a fixed one.
#include <unordered_map>

#include "fuzz/fuzz_input.h"
#include "parasol/dl/dynamic/sst_treebank.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("trees.txt", {reinterpret_cast<const char*>(data), size});
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  parasol::fuzz::Read([&] { parasol::dl::dynamic::ReadTreebank(path, vocab, true); });
  return parasol::fuzz::Read([&] { parasol::dl::dynamic::ReadTreebank(path, vocab, false); });
}
