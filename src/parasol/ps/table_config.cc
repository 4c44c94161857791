#include "parasol/ps/table_config.h"

#include <vector>

#include <fmt/format.h>

#include "parasol/core/enum_names.h"
#include "parasol/core/error.h"
#include "parasol/core/flat_map.h"
#include "parasol/core/text_fields.h"

namespace parasol::ps {

namespace {

constexpr EnumName<Consistency> kConsistencyNames[] = {{Consistency::kBsp, "bsp"},
                                                       {Consistency::kSsp, "ssp"},
                                                       {Consistency::kEssp, "essp"},
                                                       {Consistency::kVap, "vap"},
                                                       {Consistency::kAsp, "asp"}};

}  // namespace

std::string_view ConsistencyName(Consistency c) { return NameOf(kConsistencyNames, c); }

Consistency ParseConsistency(std::string_view name) {
  return ParseName(kConsistencyNames, name, "consistency model");
}

std::string ConsistencySpec::ToString() const {
  switch (model) {
    case Consistency::kBsp:
    case Consistency::kAsp: return std::string(ConsistencyName(model));
    case Consistency::kVap: return fmt::format("vap:{}:{}", staleness, vap_threshold);
    default: return fmt::format("{}:{}", ConsistencyName(model), staleness);
  }
}

ConsistencySpec ParseConsistencySpec(std::string_view text) {
  auto bad = [&]() {
    return InvalidArgumentError(fmt::format(
        "consistency '{}': expected bsp, ssp:STALENESS, essp:STALENESS, vap:STALENESS:THRESHOLD or asp",
        text));
  };
  const std::vector<std::string_view> parts = SplitFields(text, ':');
  ConsistencySpec spec;
  try {
    spec.model = ParseConsistency(parts[0]);
  } catch (const InvalidArgumentError&) {
    throw bad();
  }
  size_t want = spec.model == Consistency::kVap
                    ? 3
                    : (spec.model == Consistency::kSsp || spec.model == Consistency::kEssp ? 2 : 1);
  if (parts.size() != want) throw bad();
  if (want >= 2) {
    if (!ParseNumber(parts[1], &spec.staleness)) throw bad();
  }
  if (want == 3) {
    if (!ParseNumber(parts[2], &spec.vap_threshold) || !(spec.vap_threshold > 0)) throw bad();
  }
  return spec;
}

uint64_t TableConfig::ReadStaleness() const {
  switch (consistency) {
    case Consistency::kBsp: return 0;
    case Consistency::kAsp: return std::numeric_limits<uint64_t>::max();
    default: return staleness;
  }
}

void TableConfig::Validate() const {
  auto bad = [&](std::string_view what) {
    return InvalidArgumentError(fmt::format("table {}: {}", id, what));
  };
  if (id == ~uint32_t{0}) throw bad("id 2^32-1 is reserved");
  if (kind == RowKind::kDense && (width == 0 || width > (uint64_t{1} << 32)))
    throw bad("dense rows need a width in [1, 2^32]");
  if (num_rows == 0 || num_rows > kMaxRows) throw bad("num_rows must be in [1, 2^63]");
  if (width > kMaxRows) throw bad("width must be at most 2^63");
  if (consistency == Consistency::kVap && !(vap_threshold > 0))
    throw bad("vap needs a positive vap_threshold");
  if (consistency != Consistency::kVap && vap_threshold != 0)
    throw bad("vap_threshold applies to vap tables only");
  if (consistency == Consistency::kBsp && staleness != 0)
    throw bad("bsp reads are never stale: staleness must be 0");
  if (partitioning == Partitioning::kRange && num_rows == kMaxRows)
    throw bad("range partitioning needs num_rows");
  if (one_update_per_clock && consistency != Consistency::kBsp && consistency != Consistency::kSsp) {
    throw bad(
        "one_update_per_clock needs bsp or ssp (other models send a row's updates in pieces or push rows)");
  }
  if (one_sided_reads) {
    if (kind != RowKind::kDense || partitioning != Partitioning::kRange)
      throw bad(
          "one-sided reads need dense rows and range partitioning (a row's place in its shard's memory)");
    if (consistency != Consistency::kBsp && consistency != Consistency::kSsp)
      throw bad("one-sided reads need bsp or ssp (other models push rows or send updates in pieces)");
    if (one_update_per_clock) throw bad("one-sided reads and one_update_per_clock do not go together");
  }
}

uint64_t TableConfig::Fingerprint() const {
  uint64_t h = MixKey(id);
  for (uint64_t v : {static_cast<uint64_t>(kind), static_cast<uint64_t>(dtype), width, num_rows,
                     static_cast<uint64_t>(consistency), static_cast<uint64_t>(staleness),
                     static_cast<uint64_t>(vap_threshold * 1e9), static_cast<uint64_t>(partitioning)}) {
    h = MixKey(h ^ v);
  }
  // Only when off, so that the checkpoints of tables made before the option still match.
  if (!refresh_cached_rows) h = MixKey(h ^ 0x72656672657368);
  if (one_update_per_clock) h = MixKey(h ^ 0x6f6e6365);
  return h;
}

std::string TableConfig::Describe() const {
  std::string model(ConsistencyName(consistency));
  if (consistency == Consistency::kSsp || consistency == Consistency::kEssp ||
      consistency == Consistency::kVap) {
    model += fmt::format("({})", staleness);
  }
  return fmt::format("table {} ({} {} x {}, {})", id, kind == RowKind::kDense ? "dense" : "sparse",
                     DTypeName(dtype), width, model);
}

}  // namespace parasol::ps
