// A language model's text (characters, then words), and a training checkpoint's checkpoint.txt.
#include "fuzz/fuzz_input.h"
#include "parasol/dl/rank_checkpoint.h"
#include "parasol/dl/text_tokens.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = parasol::fuzz::WriteFile("text.txt", bytes);
  parasol::fuzz::Read([&] { parasol::dl::ReadTextTokens(path, parasol::dl::TextLevel::kChar, 0.1, 4); });
  parasol::fuzz::Read([&] { parasol::dl::ReadTextTokens(path, parasol::dl::TextLevel::kWord, 0.1, 4); });
  parasol::fuzz::WriteFile("checkpoint.txt", bytes);
  return parasol::fuzz::Read([&] { parasol::dl::ReadCheckpointMeta(parasol::fuzz::Dir()); });
}
