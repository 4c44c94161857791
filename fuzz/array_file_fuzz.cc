// A checkpoint's array file (core/array_file.h), read as 4 values.
#include "fuzz/fuzz_input.h"
#include "parasol/core/array_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("array.bin", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::ReadArrayFile(path, "PSMTRLA1", 4); });
}
