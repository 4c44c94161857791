// A cluster-simulator workload (name,time,application,num_replicas,batch_size).
#include "parasol/sched/simulator.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      parasol::fuzz::WriteFile("workload.csv", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::sched::ReadWorkload(path); });
}
