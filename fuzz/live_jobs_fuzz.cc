// A live-cluster job file (name,time,num_replicas,batch_size,steps,train_args).
#include "parasol/sched/live_job.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("jobs.csv", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::sched::ReadLiveJobs(path); });
}
