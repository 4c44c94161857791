// Parameter-server messages and how rows map to shards. One transport tag carries every message,
// so per pair of ranks they arrive in the order sent: a process's updates always reach a shard
// before the clock message that follows them.
//
//   kUpdate  client -> shard  [seq u64][tables u32]{[table u32][rows u64]{[row u64][Row]}}
//   kClock   client -> shard  [clock u64]                       the process finished clock-1
//   kGet     client -> shard  [table u32][need u64][subscribe u8][count u32]{[row u64]}
//   kRows    shard -> client  [stamp u64][applied u64][count u32]{[table u32][row u64][Row]}
//   kMinClock shard -> client [stamp u64][applied u64]          after the shard's clock advanced
//   kCheckpoint client -> shard [clock u64][dir]   kCheckpointDone shard -> client [clock u64][rows
//   u64][error] kRestore client -> shard [dir]                 kRestoreDone shard -> client [clock
//   u64][error] kError   shard -> client  [table u32][row u64][message] kSync    client -> shard  [] kSynced
//   shard -> client [applied u64]  (barriers: everything
//            the client sent before is applied, and every row the shard sent before has arrived)
//   kRead    client -> shard  [request u64][table u32][count u32]{[row u64]}
//   kReadReply shard -> client [request u64][count u32]{[row u64][Row]}   current values, no clock
// stamp: every update of clocks < stamp from every process is in the rows. applied: the last
// update batch (seq) of the receiving process the shard had applied.
#pragma once

#include <cstdint>

#include "parasol/comm/transport.h"
#include "parasol/core/flat_map.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

inline constexpr comm::Tag kPsTag = 7;
// kError about no particular table (a message that did not decode).
inline constexpr uint32_t kNoTable = ~uint32_t{0};

enum class MsgType : uint8_t {
  kUpdate = 1,
  kClock,
  kGet,
  kRows,
  kMinClock,
  kCheckpoint,
  kCheckpointDone,
  kRestore,
  kRestoreDone,
  kError,
  kSync,
  kSynced,
  kRead,
  kReadReply,
};

// Hash (default): rows spread evenly whatever their ids, and hot low ids of different tables do
// not share a shard. Range: contiguous id ranges.
inline int ShardOf(const TableConfig& c, uint64_t row, int shards) {
  if (c.partitioning == Partitioning::kRange) {
    uint64_t block =
        c.num_rows / static_cast<uint64_t>(shards) + (c.num_rows % static_cast<uint64_t>(shards) != 0);
    return static_cast<int>(row / block);
  }
  return static_cast<int>(MixKey(row ^ (static_cast<uint64_t>(c.id) << 44)) % static_cast<uint64_t>(shards));
}

}  // namespace parasol::ps
