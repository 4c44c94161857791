// A parameter-server checkpoint: MANIFEST, then a NUL, then shard-00000.ckpt.
#include "parasol/ps/checkpoint.h"

#include <limits>

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  parasol::fuzz::WriteFile("MANIFEST", parts[0]);
  parasol::fuzz::WriteFile("shard-00000.ckpt", parts[1]);
  // The tables of `parasol mf --rank 1` on a 3-user, 3-item u.data (the seed's checkpoint).
  using parasol::ps::TableConfig;
  const std::map<uint32_t, TableConfig> tables{
      {1, {.id = 1, .width = 1, .num_rows = 3, .staleness = 3}},
      {2, {.id = 2, .width = 1, .num_rows = 3, .staleness = std::numeric_limits<uint32_t>::max()}}};
  return parasol::fuzz::Read([&] {
    parasol::ps::ReadCheckpoint(parasol::fuzz::Dir(), tables, [](uint32_t, uint64_t, parasol::ps::Row&&) {});
  });
}
