// A multi-task CSV (`parasol mtrl --data`): task and target columns, features.
#include "fuzz/fuzz_input.h"
#include "parasol/apps/mtrl/task_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("tasks.csv", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::apps::mtrl::ReadTaskCsv(path); });
}
