// The svm.txt of an SVM checkpoint, read for 5 samples of 3 features in 3 classes (machines of 3, 4
// and 3 samples), RBF gamma 0.5, C 1, fingerprint 42. Valid array files for 0 to 3 machines done
// and for machine 1 after 5 iterations are in place, so a meta file that passes reaches them.
#include <vector>

#include "fuzz/fuzz_input.h"
#include "parasol/apps/svm/svm_checkpoint.h"
#include "parasol/core/array_file.h"
#include "parasol/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool arrays = [] {
    const size_t values[] = {0, 6, 13, 19};
    for (size_t done = 0; done < 4; ++done) {
      parasol::WriteArrayFile(parasol::fuzz::Dir() + "/pairs-" + std::to_string(done) + ".bin", "PSSVMP01",
                              std::vector<double>(values[done], 0.5));
    }
    parasol::WriteArrayFile(parasol::fuzz::Dir() + "/current-1-5.bin", "PSSVMC01",
                            std::vector<double>(4, 0.25));
    return true;
  }();
  (void)arrays;
  parasol::fuzz::WriteFile("svm.txt", {reinterpret_cast<const char*>(data), size});
  const parasol::apps::svm::SvmCheckpointKey key{
      .samples = 5,
      .features = 3,
      .classes = 3,
      .data_fingerprint = 42,
      .kernel = {.type = parasol::apps::svm::KernelType::kRbf, .gamma = 0.5},
      .c = 1};
  const uint64_t pair_samples[] = {3, 4, 3};
  return parasol::fuzz::Read([&] {
    try {
      parasol::apps::svm::ReadSvmCheckpoint(parasol::fuzz::Dir(), key, pair_samples);
    } catch (const parasol::InvalidArgumentError&) {
      // A checkpoint of another problem: refused by design, as the header says.
    } catch (const parasol::IoError&) {
      // svm.txt naming array files that are not there (another count of machines or iterations).
    }
  });
}
