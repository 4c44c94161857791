// A graph for `parasol gnn`: NAME.content and its edges, read once as a text NAME.cites and once
// as a binary NAME.edges (parts: content, then edges, split at a NUL byte).
#include "fuzz/fuzz_input.h"
#include "parasol/apps/gnn/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  const std::string content = parasol::fuzz::WriteFile("g.content", parts[0]);
  const std::string cites = parasol::fuzz::WriteFile("g.cites", parts[1]);
  const std::string edges = parasol::fuzz::WriteFile("g.edges", parts[1]);
  parasol::fuzz::Read([&] { parasol::apps::gnn::ReadPlanetoid(content, cites); });
  return parasol::fuzz::Read([&] { parasol::apps::gnn::ReadPlanetoid(content, edges); });
}
