// An application profile folder: validation-32.csv, placements.csv, scalability.csv (NUL between).
#include "parasol/sched/application.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 3);
  parasol::fuzz::WriteFile("validation-32.csv", parts[0]);
  parasol::fuzz::WriteFile("placements.csv", parts[1]);
  parasol::fuzz::WriteFile("scalability.csv", parts[2]);
  return parasol::fuzz::Read([] { parasol::sched::Application::Load(parasol::fuzz::Dir()); });
}
