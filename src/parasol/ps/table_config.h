// A table's typed configuration: its rows, value type, consistency model and sharding.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "parasol/core/dtype.h"

namespace parasol::ps {

enum class Consistency : uint8_t {
  kBsp,   // a read at clock c sees every update from clocks < c
  kSsp,   // a read at clock c sees every update from clocks <= c - s - 1, and the reader's own
  kEssp,  // SSP, and servers push fresh rows to the processes that read them when clocks advance
  kVap,   // SSP, and a worker sends a row's updates before their magnitude exceeds a threshold
  kAsp,   // no bound: reads never wait for fresher rows; shards push changed rows as clocks advance
};
std::string_view ConsistencyName(Consistency c);
// "bsp", "ssp", "essp", "vap", "asp"; throws InvalidArgumentError otherwise.
Consistency ParseConsistency(std::string_view name);

// A model with its parameters, as written on command lines: "bsp", "ssp:3", "essp:3",
// "vap:3:0.5" (staleness, then threshold), "asp".
struct ConsistencySpec {
  Consistency model = Consistency::kSsp;
  uint32_t staleness = 0;
  double vap_threshold = 0;
  std::string ToString() const;
};
// Throws InvalidArgumentError naming `text` and the expected forms.
ConsistencySpec ParseConsistencySpec(std::string_view text);

enum class RowKind : uint8_t { kDense, kSparse };
enum class Partitioning : uint8_t { kHash, kRange };

inline constexpr uint64_t kMaxRows = uint64_t{1} << 63;

struct TableConfig {
  uint32_t id = 0;
  RowKind kind = RowKind::kDense;
  DType dtype = DType::kFloat32;
  // Dense: columns per row. Sparse: column ids are below this (0: any id below 2^63).
  uint64_t width = 0;
  uint64_t num_rows = kMaxRows;  // row ids in [0, num_rows)
  Consistency consistency = Consistency::kSsp;
  uint32_t staleness = 0;    // s for SSP, ESSP and VAP
  double vap_threshold = 0;  // VAP: magnitude (L1) of a row's unsent updates
  Partitioning partitioning = Partitioning::kHash;
  // When a read needs a fresher row than the process holds, also ask again for every other cached
  // row that is as stale: right for apps that read the same rows every clock (MF, LDA), wasted
  // for apps whose rows change from clock to clock (MLR's minibatches touch other features).
  bool refresh_cached_rows = true;
  // False for a table that is not part of the model (an application's progress reports): left out
  // of checkpoints, and empty after a restore.
  bool checkpointed = true;
  // The process promises to send each row at most once per clock (a deep-learning engine's
  // gradient rows, each pushed as backward finishes it). A shard then answers a read of a row as
  // soon as every process's update of it for the clocks the read needs is in, before their clock
  // messages: replies for the rows pushed first overlap the rest of the step. A second update of
  // a row in one clock is refused. BSP and SSP only, and one worker per process (a process clock
  // then is its worker's, so a shard knows which clock an update belongs to).
  bool one_update_per_clock = false;
  // Processes read rows straight from their shard's registered memory (comm::MemoryRegion gets,
  // see row_window.h) instead of asking the shard's thread. Dense rows, range partitioning, BSP
  // or SSP; not with one_update_per_clock. A read path, not part of the model: checkpoints made
  // either way restore either way.
  bool one_sided_reads = false;

  // Staleness reads are held to: 0 for BSP, none for ASP.
  uint64_t ReadStaleness() const;
  bool Bounded() const { return consistency != Consistency::kAsp; }
  // Shards push the rows a process reads when they change (ESSP; ASP, whose reads never ask).
  bool Pushed() const { return consistency == Consistency::kEssp || consistency == Consistency::kAsp; }
  // Throws InvalidArgumentError naming the table and the bad field.
  void Validate() const;
  // Equal on every rank that created the same table.
  uint64_t Fingerprint() const;
  std::string Describe() const;  // "table 3 (dense float32 x 16, ssp(3))"
};

}  // namespace parasol::ps
