// The process's side of the parameter server: the row cache its workers share, the updates they
// hand over (coalesced per shard into batches), and the process clock.
//
// Consistency bookkeeping: a cached row carries a stamp (every update of clocks < stamp, from
// every process, is in it). The process's own updates show at once: when a worker hands updates
// over they are added to the cached rows, kept per shard in the open batch and, once sent, in a
// log of batches by sequence number until the shard reports it has applied them; a row the shard
// sends later is completed with the logged and open updates it does not hold yet.
//
// Threading: workers call the worker-facing methods, the communication thread the message
// handlers; one mutex guards the state and workers wait on one condition variable.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/core/deadline.h"
#include "parasol/core/error.h"
#include "parasol/core/file_system.h"
#include "parasol/core/flat_map.h"
#include "parasol/core/mutex.h"
#include "parasol/core/wire.h"
#include "parasol/ps/row.h"
#include "parasol/ps/row_window.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

struct PsStats {
  uint64_t update_batches = 0;  // update messages sent
  uint64_t update_bytes = 0;
  uint64_t gets_sent = 0;          // row requests sent (cache misses or stale rows)
  uint64_t rows_received = 0;      // rows received in replies and pushes
  uint64_t rows_pushed = 0;        // of those, pushed by shards (ESSP) without a request
  uint64_t waits = 0;              // reads that had to wait for a shard
  uint64_t bytes_out = 0;          // every parameter-server message this rank sent to another rank
  uint64_t reply_bytes_out = 0;    // of those, row replies its shard sent
  uint64_t reply_bytes_in = 0;     // row replies (and pushes) it received from other ranks' shards
  uint64_t one_sided_reads = 0;    // one-sided reads of a shard's rows (three rounds of gets each)
  uint64_t one_sided_rows = 0;     // rows they read
  uint64_t one_sided_retries = 0;  // rows read again because their shard was writing them
};

class Client {
 public:
  using Sender = std::function<void(int dst, std::vector<std::byte> bytes)>;
  // This rank's own shard's processes whose finished clocks are below `need` (ServerShard::Behind):
  // a read of the own shard that times out names them, since the shard only waits for others.
  // Called with the client's lock held, so it must not call back into the client.
  using BehindProbe = std::function<std::vector<int>(uint64_t need)>;

  // The manifest of a checkpoint is written through `fs`, which must outlive the client.
  Client(int rank, int processes, int workers, FileSystem& fs, Sender send, BehindProbe behind = {});

  // `window`: the table's rows in registered memory, where it is read one-sided (it outlives the
  // client).
  void AddTable(const TableConfig& config, RowWindow* window = nullptr);
  // Nullptr if the table does not exist.
  const TableConfig* Config(uint32_t table) const;

  struct Snapshot {
    std::shared_ptr<const Row> row;
    uint64_t stamp = 0;
  };
  // The row at stamp >= need, from the cache or fetched from its shard; blocks until `deadline`
  // (TimeoutError naming the shard) or a failure (the error the shard or transport reported).
  // *waited (if given) tells whether it had to wait for a shard.
  Snapshot Get(uint32_t table, uint64_t row, uint64_t need, Deadline deadline, bool* waited = nullptr);
  // Replaces each snapshot with the cached row where the cache holds a newer one; the rows
  // replaced go to *retired if given.
  void Refresh(uint32_t table, FlatMap<Snapshot>& snapshots,
               std::vector<std::shared_ptr<const Row>>* retired);
  // Asks for the row without waiting (nothing if cached fresh enough or already asked for).
  // One-sided tables: reads the row now if its shard's clock allows (until `deadline` if it is
  // being written), else does nothing.
  void Prefetch(uint32_t table, uint64_t row, uint64_t need, Deadline deadline = Deadline::Never());
  // The same for many rows, in one message per shard. REQUIRES: rows < the table's num_rows.
  void Prefetch(uint32_t table, std::span<const uint64_t> rows, uint64_t need,
                Deadline deadline = Deadline::Never());
  bool Cached(uint32_t table, uint64_t row, uint64_t need);

  // Adds a worker's updates to a table (null entries are skipped; the rows are only read). For
  // each updated row the cache holds, calls cached(row, snapshot) with the row as it now is, so
  // the worker can keep reading it without asking again.
  using CachedFn = std::function<void(uint64_t row, Snapshot snapshot)>;
  void AddUpdates(uint32_t table, const FlatMap<std::unique_ptr<Row>>& updates,
                  const CachedFn& cached = nullptr);
  // Sends the open batch of the shard holding `row` now (VAP).
  void SendNow(uint32_t table, uint64_t row);
  // Sends every shard's open batch now (Worker::Flush).
  void SendOpen();
  // Worker `worker` finished a clock; when all workers of the process have, the batches go out,
  // then the new process clock, to every shard, then requests for the cached rows the new clock
  // makes too old (they arrive while the workers compute).
  void Clocked(int worker, uint64_t clock);

  // The values the shards hold now, outside the consistency model: no clock is waited for and
  // the cache is not touched. For monitoring and evaluation. Any thread.
  std::vector<Row> ReadLatest(uint32_t table, std::span<const uint64_t> rows, Deadline deadline);

  // One caller per process: sends the open batches, then waits until every shard has applied
  // them and every row a shard sent before has arrived. Throws TimeoutError naming a silent shard.
  void Sync(Deadline deadline);
  // Forgets every cached row (after a barrier: rows cached before may miss others' updates).
  void DropCache();

  // One caller per process, all processes at the same clock: every shard writes its rows; rank 0
  // writes the manifest. Throws what a shard reported, or TimeoutError.
  void Checkpoint(const std::string& dir, uint64_t clock, Deadline deadline);
  // One caller per process, before any update: this rank's shard loads its rows. Returns the clock.
  uint64_t Restore(const std::string& dir, Deadline deadline);

  // From the communication thread.
  void OnMessage(int src, WireReader& r);
  // The transport failed: every waiting and later call throws `error`.
  void Fail(ErrorCode code, const std::string& error);

  PsStats stats() const;
  uint64_t process_clock() const;
  // Whether a worker is blocked on an answer from a shard (any thread may ask).
  bool HasWaiters() const { return waiters_.load(std::memory_order_relaxed) > 0; }

 private:
  struct CacheEntry {
    std::shared_ptr<Row> row;  // changed in place only while nobody else holds it
    uint64_t stamp = 0;
    // Requests on their way, as need + 1 (0: none): the largest and the smallest. Workers of a
    // process may be a clock apart, and a request for the later clock is answered only after
    // the slower worker has clocked, so it must not stand in for the slower worker's own.
    uint64_t asked = 0;
    uint64_t asked_low = 0;
  };
  using Batch = std::map<uint32_t, FlatMap<Row>>;  // table -> row -> delta
  struct Sent {
    uint64_t seq;
    Batch batch;
  };
  struct TableState {
    TableConfig config;
    FlatMap<CacheEntry> cache;
    uint64_t refreshed = 0;       // the largest need a whole-cache refresh was asked for
    std::vector<Row> spare;       // zeroed rows of acknowledged batches, reused by the next ones
    RowWindow* window = nullptr;  // one-sided reads
  };

  TableState& StateOf(uint32_t table) PARASOL_REQUIRES(mu_);  // throws for unknown tables
  // Whether a request for `row` at `need` must be sent: none for exactly this need is on its way.
  static bool MustAsk(const CacheEntry& c, uint64_t need);
  static void MarkAsked(CacheEntry& c, uint64_t need);
  // A row at `stamp` came: the requests it satisfies are done.
  static void MarkAnswered(CacheEntry& c, uint64_t stamp);
  // Asks for `row` at stamp >= need. The first time a need is not met, every cached row of the
  // table older than `need` is asked for too, one message per shard: rows go stale together, so
  // a worker waits for one round trip per clock instead of one per row.
  void Ask(TableState& t, uint64_t row, uint64_t need) PARASOL_REQUIRES(mu_);
  // The first time `need` is seen: adds every cached row older than need, not yet asked for,
  // to rows[its shard].
  void AddStale(TableState& t, uint64_t need, std::vector<std::vector<uint64_t>>& rows) PARASOL_REQUIRES(mu_);
  // kGets to each shard with rows to ask for, in row order, each for at most kMaxReplyBytes of
  // rows (so a large read comes back in pieces that the reader can use as they arrive).
  void SendGets(const TableState& t, std::vector<std::vector<uint64_t>>& rows, uint64_t need)
      PARASOL_REQUIRES(mu_);
  void SendBatch(int shard) PARASOL_REQUIRES(mu_);
  void OnRows(int shard, WireReader& r) PARASOL_REQUIRES(mu_);
  // Adds this process's updates for `row` that its shard did not hold: the logged batches after
  // `applied` and the open one.
  void Complete(int shard, uint32_t table, uint64_t row, Row& value, uint64_t applied = 0)
      PARASOL_REQUIRES(mu_);
  void Prune(int shard, uint64_t applied) PARASOL_REQUIRES(mu_);
  // One-sided tables: reads `rows` (those of a shard whose clock is below `need` only if `wait`,
  // after waiting for it) from the shards' memory, with the table's other cached rows older than
  // `need` where the table refreshes them, and caches them. Steps out of mu_ while reading.
  void ReadOneSided(TableState& t, std::vector<uint64_t> rows, uint64_t need, bool wait, Deadline deadline)
      PARASOL_REQUIRES(mu_);
  // Waits until `shard` has reported clock `need`; TimeoutError names it and `row`.
  void WaitForShardClock(const TableState& t, int shard, uint64_t row, uint64_t need, Deadline deadline)
      PARASOL_REQUIRES(mu_);
  void CacheRead(TableState& t, int shard, std::span<const uint64_t> rows, RowWindow::Result& read)
      PARASOL_REQUIRES(mu_);
  void ThrowIfFailed() PARASOL_REQUIRES(mu_);
  // The TimeoutError of a read of `row` at `need` that `shard` did not serve (`what`: what it failed
  // to do), naming the processes that hold back this rank's own shard.
  TimeoutError ShardLate(const TableState& t, int shard, uint64_t row, uint64_t need, std::string_view what)
      PARASOL_REQUIRES(mu_);

  const int rank_;
  const int processes_;
  FileSystem& fs_;
  Sender send_;
  BehindProbe behind_;
  mutable Mutex mu_;
  CondVar cv_;
  std::atomic<int> waiters_{0};  // workers inside a wait on cv_ for a shard's answer
  // Counts its holder among waiters_ while it lives.
  class Waiting {
   public:
    explicit Waiting(std::atomic<int>& n) : n_(n) { n_.fetch_add(1, std::memory_order_relaxed); }
    ~Waiting() { n_.fetch_sub(1, std::memory_order_relaxed); }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    std::atomic<int>& n_;
  };
  std::map<uint32_t, TableState> tables_ PARASOL_GUARDED_BY(mu_);
  std::vector<Batch> open_ PARASOL_GUARDED_BY(mu_);             // per shard
  std::vector<std::deque<Sent>> sent_ PARASOL_GUARDED_BY(mu_);  // per shard
  std::vector<uint64_t> seq_ PARASOL_GUARDED_BY(mu_);           // per shard
  std::vector<uint64_t> worker_clock_ PARASOL_GUARDED_BY(mu_);
  uint64_t process_clock_ PARASOL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> shard_clock_ PARASOL_GUARDED_BY(mu_);  // latest stamp each shard reported
  std::map<std::pair<uint32_t, uint64_t>, std::string> row_errors_ PARASOL_GUARDED_BY(mu_);
  std::optional<std::pair<ErrorCode, std::string>> failure_ PARASOL_GUARDED_BY(mu_);
  struct PendingRead {
    uint32_t table = 0;
    std::map<uint64_t, std::vector<size_t>> where;  // row -> positions in the result
    std::vector<Row> rows;
    std::vector<char> answered;  // per shard: 1 once it replied, or had nothing to send
  };
  void OnReadReply(int shard, WireReader& r) PARASOL_REQUIRES(mu_);
  std::map<uint64_t, PendingRead> reads_ PARASOL_GUARDED_BY(mu_);
  uint64_t next_read_ PARASOL_GUARDED_BY(mu_) = 0;
  // Sync, checkpoint and restore replies.
  std::vector<char> synced_ PARASOL_GUARDED_BY(mu_);
  int checkpoint_done_ PARASOL_GUARDED_BY(mu_) = 0;
  std::string checkpoint_error_ PARASOL_GUARDED_BY(mu_);
  std::optional<std::pair<uint64_t, std::string>> restore_done_ PARASOL_GUARDED_BY(mu_);
  PsStats stats_ PARASOL_GUARDED_BY(mu_);
  // One-sided reads under way, and the pruning held back meanwhile: a read that began before a
  // batch was applied still needs that batch from the log.
  int reads_in_flight_ PARASOL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> prune_held_ PARASOL_GUARDED_BY(mu_);  // per shard
};

}  // namespace parasol::ps
