// A parameter-server checkpoint: MANIFEST, then a NUL, then shard 0's file (named for the clock the
// manifest's first "clock N" line gives, else clock 0).
#include "parasol/ps/checkpoint.h"

#include <charconv>
#include <cstdio>
#include <limits>

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  parasol::fuzz::WriteFile("MANIFEST", parts[0]);
  uint64_t clock = 0;
  if (size_t at = parts[0].find("\nclock "); at != std::string::npos) {
    const char* first = parts[0].data() + at + 7;
    std::from_chars(first, parts[0].data() + parts[0].size(), clock);
  }
  static std::string last;  // one shard file at a time in the scratch folder
  if (!last.empty()) std::remove(last.c_str());
  last = parasol::fuzz::WriteFile(parasol::ps::ShardFile(".", 0, clock).substr(2), parts[1]);
  // The tables of `parasol mf --rank 1` on a 3-user, 3-item u.data (the seed's checkpoint).
  using parasol::ps::TableConfig;
  const std::map<uint32_t, TableConfig> tables{
      {1, {.id = 1, .width = 1, .num_rows = 3, .staleness = 3}},
      {2, {.id = 2, .width = 1, .num_rows = 3, .staleness = std::numeric_limits<uint32_t>::max()}}};
  return parasol::fuzz::Read([&] {
    parasol::ps::ReadCheckpoint(parasol::fuzz::Dir(), tables, [](uint32_t, uint64_t, parasol::ps::Row&&) {});
  });
}
