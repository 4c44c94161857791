// The mtrl.txt of an MTRL checkpoint, read for 2 tasks x 3 features x 5 samples; its arrays are
// valid, so a meta file that passes reaches them.
#include <vector>

#include "fuzz/fuzz_input.h"
#include "parasol/apps/mtrl/mtrl_checkpoint.h"
#include "parasol/core/array_file.h"
#include "parasol/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool arrays = [] {
    parasol::WriteArrayFile(parasol::fuzz::Dir() + "/alpha.bin", "PSMTRLA1", std::vector<double>(5, 0.5));
    parasol::WriteArrayFile(parasol::fuzz::Dir() + "/omega.bin", "PSMTRLO1",
                            std::vector<double>{0.5, 0, 0, 0.5});
    return true;
  }();
  (void)arrays;
  parasol::fuzz::WriteFile("mtrl.txt", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([] {
    try {
      parasol::apps::mtrl::ReadMtrlCheckpoint(parasol::fuzz::Dir(), 2, 3, 5);
    } catch (const parasol::InvalidArgumentError&) {
      // A checkpoint of another shape: refused by design, as the header says.
    }
  });
}
