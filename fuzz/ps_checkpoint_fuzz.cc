// A parameter-server checkpoint: MANIFEST, then a NUL, then shard 0's file (named for the clock the
// manifest's "clock N" line gives, else clock 0).
#include "parasol/ps/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "fuzz/fuzz_input.h"
#include "parasol/core/text_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = parasol::fuzz::Split(data, size, 2);
  parasol::fuzz::WriteFile("MANIFEST", parts[0]);
  // The clock as the reader finds it: the line whose first word is "clock" (a second is refused).
  uint64_t clock = 0;
  for (size_t start = 0; start <= parts[0].size();) {
    const size_t end = std::min(parts[0].find('\n', start), parts[0].size());
    const std::string_view line(parts[0].data() + start, end - start);
    size_t pos = 0;
    if (parasol::NextField(line, pos) == "clock" &&
        parasol::ParseNumber(parasol::NextField(line, pos), &clock))
      break;
    clock = 0;
    start = end + 1;
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
