// LIBSVM sparse samples (label index:value ...), then their column view.
#include "parasol/data/dataset.h"
#include "parasol/data/libsvm_reader.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("train.svm", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] {
    parasol::data::Dataset d = parasol::data::ReadLibsvm(path);
    parasol::data::ToColumns(d, 0, d.rows(), parasol::data::UsedFeatures(d));
  });
}
