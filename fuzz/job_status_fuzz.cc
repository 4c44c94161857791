// The status file a live job writes.
#include "parasol/core/job_status.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("status", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::ReadJobStatus(path); });
}
