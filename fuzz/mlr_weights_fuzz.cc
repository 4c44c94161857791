// The weights.bin of an MLR checkpoint, read for 3 features x 2 classes.
#include "fuzz/fuzz_input.h"
#include "parasol/apps/mlr/mlr_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parasol::fuzz::WriteFile("weights.bin", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([] {
    std::vector<double> v, b;
    parasol::apps::mlr::ReadMlrWeights(parasol::fuzz::Dir(), 3, 2, &v, &b);
  });
}
