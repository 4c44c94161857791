// One rank's server shard: the rows the partitioner assigns to this rank, the clock of every
// process, reads held until the clock allows them, subscriptions for ESSP pushes, checkpoints.
//
// Threading: used by the communication thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "parasol/core/file_system.h"
#include "parasol/core/flat_map.h"
#include "parasol/core/wire.h"
#include "parasol/ps/protocol.h"
#include "parasol/ps/row.h"
#include "parasol/ps/row_window.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

// Messages to send: (destination rank, bytes).
using Outbox = std::vector<std::pair<int, std::vector<std::byte>>>;

class ServerShard {
 public:
  // Checkpoints are written through `fs`, which must outlive the shard.
  ServerShard(int rank, int processes, FileSystem& fs);

  // `window` (one-sided tables; it outlives the shard) receives every change of the table's rows.
  void AddTable(const TableConfig& config, RowWindow* window = nullptr);
  // Handles one message from `src`, appending replies to `out`. A message that does not decode
  // or asks for something invalid gets a kError reply (when it can be addressed); the shard keeps
  // serving.
  void Handle(int src, WireReader& r, Outbox& out);

  uint64_t min_clock() const { return min_clock_; }
  // The processes whose finished clocks are below `need`: those a read at `need` waits for.
  std::vector<int> Behind(uint64_t need) const;
  // Rows this shard holds, over all tables (for tests and statistics).
  uint64_t rows() const;
  // Reads a row's value, for tests. Nullptr if the row has never been touched.
  const Row* Peek(uint32_t table, uint64_t row) const;

 private:
  struct Table {
    TableConfig config;
    RowWindow* window = nullptr;  // one-sided reads: the rows as readers see them
    FlatMap<Row> rows;
    FlatMap<std::vector<uint64_t>> subscribers;  // row -> bitset of processes (ESSP)
    FlatMap<char> dirty;                         // rows changed since the last push
    // one_update_per_clock: per row and process, the clocks below which all its updates of the
    // row are in (its last update's clock + 1), and the reads held for a row until then.
    FlatMap<std::vector<uint64_t>> updated_through;
    std::unordered_map<uint64_t, std::vector<std::pair<int, uint64_t>>> waiting;  // row -> (src, need)
  };
  struct PendingGet {
    int src;
    uint32_t table;
    uint64_t row;
    uint64_t need;
  };
  using Replies = std::vector<std::vector<std::pair<uint32_t, uint64_t>>>;  // per process: (table, row)
  using Updates = std::vector<std::tuple<Table*, uint64_t, Row>>;  // a decoded batch: (table, row, delta)

  Table& TableOrFail(uint32_t id, WireReader& r);
  Row& RowOf(Table& t, uint64_t row);
  void OnUpdate(int src, WireReader& r, Outbox& out);
  // one_update_per_clock: refuses a batch that sends a row twice in `src`'s clock; records the
  // batch's rows and answers the reads they complete.
  void CheckOncePerClock(int src, const Updates& rows, WireReader& r) const;
  void MarkUpdated(int src, uint32_t id, Table& t, uint64_t row, Replies& replies,
                   std::vector<uint64_t>& stamps);
  // The stamp a reply of `row` may carry: every update of clocks below it is in the row.
  uint64_t RowStamp(const Table& t, uint64_t row) const;
  void OnClock(int src, WireReader& r, Outbox& out);
  void OnGet(int src, WireReader& r, Outbox& out);
  void OnCheckpoint(int src, WireReader& r, Outbox& out);
  void OnRestore(int src, WireReader& r, Outbox& out);
  void OnSync(int src, WireReader& r, Outbox& out);
  void OnRead(int src, WireReader& r, Outbox& out);
  void Advance(Outbox& out);
  void ReplyRows(int dst, const std::vector<std::pair<uint32_t, uint64_t>>& rows, uint64_t stamp,
                 Outbox& out);
  void Subscribe(Table& t, uint64_t row, int src);

  int rank_;
  int processes_;
  FileSystem& fs_;
  std::map<uint32_t, Table> tables_;
  std::vector<uint64_t> clock_;    // per process: clocks it has finished
  std::vector<uint64_t> applied_;  // per process: last update batch applied
  uint64_t min_clock_ = 0;
  std::vector<PendingGet> pending_;
  // Checkpoints: requests gathered until every process has asked for the same one.
  std::map<std::pair<uint64_t, std::string>, int> checkpoint_votes_;
};

}  // namespace parasol::ps
