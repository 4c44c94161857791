// MovieLens ratings (u.data: user, item, rating, time).
#include "parasol/apps/mf/ratings.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("u.data", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::apps::mf::ReadMovieLens(path); });
}
