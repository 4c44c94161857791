// The mlr.txt of an MLR checkpoint.
#include "fuzz/fuzz_input.h"
#include "parasol/apps/mlr/mlr_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parasol::fuzz::WriteFile("mlr.txt", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([] { parasol::apps::mlr::ReadMlrMeta(parasol::fuzz::Dir()); });
}
