// A data set as CSV with a header naming the label column.
#include "parasol/data/csv_design.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("train.csv", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::data::ReadCsvDesign(path, "y"); });
}
