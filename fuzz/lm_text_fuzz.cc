// A language model's text (characters, then words), and a language-model checkpoint's lm.txt.
#include "fuzz/fuzz_input.h"
#include "parasol/dl/lm_checkpoint.h"
#include "parasol/dl/text_tokens.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = parasol::fuzz::WriteFile("text.txt", bytes);
  parasol::fuzz::Read([&] { parasol::dl::ReadTextTokens(path, parasol::dl::TextLevel::kChar, 0.1, 4); });
  parasol::fuzz::Read([&] { parasol::dl::ReadTextTokens(path, parasol::dl::TextLevel::kWord, 0.1, 4); });
  parasol::fuzz::WriteFile("lm.txt", bytes);
  return parasol::fuzz::Read([&] { parasol::dl::ReadLmMeta(parasol::fuzz::Dir()); });
}
