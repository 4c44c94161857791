// A dense table's rows in registered memory, read one-sided: a process gets rows from the shard
// that owns them without the shard's communication thread taking part.
//
// Each shard registers one region per table, laid out as
//   [clock u64][version u64 x rows][slot x rows],  slot = [applied u64 x processes][values]
// where rows are the shard's block of the range partitioning (a row's place is row - first row).
// The owner writes a row as a seqlock: its version turns odd, the slot is written, the version
// turns even again. applied[p] is the sequence number of the last update batch of process p that
// changed the row, so a reader knows which of its own logged batches the values hold. The clock
// word is the shard's clock (every update of clocks below it is in every row); it is written
// after the rows, so rows read after it hold at least that much.
//
// A read takes three rounds, each completed before the next starts: the clock and the versions,
// then the slots, then the versions again. A row whose version was odd or moved is read again.
//
// Threading: Publish and PublishClock from the shard's thread only; Read from any thread (reads
// of one process run one at a time). Close is collective.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "parasol/comm/memory_region.h"
#include "parasol/core/deadline.h"
#include "parasol/core/mutex.h"
#include "parasol/ps/row.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

class RowWindow {
 public:
  // Collective over `transport`'s ranks, which are the table's shards. REQUIRES: a dense table
  // with range partitioning (TableConfig::Validate checks one_sided_reads asks for that).
  RowWindow(comm::Transport& transport, const TableConfig& config, Deadline deadline);
  // Frees the region if Close ran; otherwise leaves its memory allocated (another rank may still
  // be reading it: a failed job must not turn into a read of freed memory).
  ~RowWindow();
  RowWindow(const RowWindow&) = delete;
  RowWindow& operator=(const RowWindow&) = delete;

  // The owner's side. `row` belongs to this shard; `src` (-1: none) is the process whose batch
  // `seq` changed it.
  void Publish(uint64_t row, const Row& value, int src, uint64_t seq);
  void PublishClock(uint64_t clock);
  // Every row back to zero (a restore publishes the rows it loads after this).
  void Reset();
  // Half of Publish, for tests that read while a write is under way.
  void BeginWrite(uint64_t row);
  void EndWrite(uint64_t row);

  struct Result {
    uint64_t clock = 0;             // the shard's clock before the rows were read
    std::vector<Row> values;        // in the order asked
    std::vector<uint64_t> applied;  // this process's last batch in each row
    uint64_t retries = 0;           // rows read again because they changed while read
  };
  // Reads `rows` (each in `shard`'s block) from `shard`. Throws TimeoutError naming the shard if
  // a row is still changing at the deadline, PeerGoneError for a gone shard.
  Result Read(int shard, std::span<const uint64_t> rows, Deadline deadline);

  // Collective: every rank stops reading, then the region is freed.
  void Close(Deadline deadline);

  // The shard that holds `row` and the first row of a shard's block.
  uint64_t FirstRow(int shard) const { return block_ * static_cast<uint64_t>(shard); }

 private:
  uint64_t RowsOf(int shard) const;
  Result ReadRounds(int shard, std::span<const uint64_t> rows, Deadline deadline);
  size_t VersionOffset(uint64_t index) const { return 8 * (1 + index); }
  // Offsets in `shard`'s region, whose block may be shorter than this rank's.
  size_t SlotOffset(int shard, uint64_t index) const { return 8 * (1 + RowsOf(shard) + index * slot_words_); }
  std::atomic_ref<uint64_t> Version(uint64_t index);
  // One get of a round: a memcpy where `shard` is this rank, else a get the round's end completes.
  void Copy(int shard, size_t offset, void* dst, size_t bytes);
  void EndRound(int shard, Deadline deadline);
  // Gets the clock word into *clock (when given) and the versions of rows[i] for i in `which`.
  void GetVersions(int shard, const std::vector<uint64_t>& index, const std::vector<size_t>& which,
                   uint64_t* clock, std::vector<uint64_t>& out, Deadline deadline);

  const TableConfig config_;
  const int rank_;
  const int processes_;
  const uint64_t block_;      // rows per shard
  const uint64_t rows_;       // rows of this shard
  const size_t value_bytes_;  // width * dtype size
  const size_t slot_words_;   // processes + value words
  std::unique_ptr<uint64_t[]> memory_;
  std::unique_ptr<comm::MemoryRegion> region_;
  bool closed_ = false;
  Mutex read_mu_;  // one read at a time: MPI's one-sided components differ on concurrent flushes
};

}  // namespace parasol::ps
