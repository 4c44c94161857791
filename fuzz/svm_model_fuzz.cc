// An SVM model file (LIBSVM's format), then a prediction with it.
#include "fuzz/fuzz_input.h"
#include "parasol/apps/svm/svm_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("svm.model", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] {
    const parasol::apps::svm::SvmModel m = parasol::apps::svm::ReadSvmModel(path);
    parasol::data::Dataset x;
    x.cols = 4;
    const uint32_t ids[] = {0, 3};
    const double values[] = {0.5, -1};
    x.AddRow(1, ids, values);
    parasol::apps::svm::Predict(m, x);
  });
}
