// A network topology file (nodes N; link A B GBITS [LATENCY_US]).
#include "parasol/collective/topology.h"

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasol::fuzz::WriteFile("net.topo", {reinterpret_cast<const char*>(data), size});
  return parasol::fuzz::Read([&] { parasol::collective::Topology::Load(path); });
}
