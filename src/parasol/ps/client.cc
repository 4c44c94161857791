#include "parasol/ps/client.h"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parasol/core/error.h"
#include "parasol/ps/checkpoint.h"
#include "parasol/ps/protocol.h"

namespace parasol::ps {
namespace {

// Every entry is nonzero (a shard replied).
bool AllSet(const std::vector<char>& flags) {
  return std::all_of(flags.begin(), flags.end(), [](char c) { return c != 0; });
}

// True where the cache holds the only reference to `row`, which may then be written in place. The
// worker that held it last let it go with a release decrement (its reads of the row came before);
// use_count() is a relaxed load, so an acquire fence orders those reads before the writes.
bool Unshared(const std::shared_ptr<Row>& row) {
  if (row.use_count() != 1) return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

// The writes to a row Unshared() cleared. ThreadSanitizer does not model fences (gcc says so with
// -Wtsan): scripts/tsan.supp names these two.
__attribute__((noinline)) void AddToUnsharedRow(Row& row, const Row& delta) { row.AddRow(delta); }
__attribute__((noinline)) void DecodeIntoUnsharedRow(Row& row, WireReader& r) { row.DecodeDenseInPlace(r); }

}  // namespace

Client::Client(int rank, int processes, int workers, FileSystem& fs, Sender send, BehindProbe behind)
    : rank_(rank),
      processes_(processes),
      fs_(fs),
      send_(std::move(send)),
      behind_(std::move(behind)),
      open_(static_cast<size_t>(processes)),
      sent_(static_cast<size_t>(processes)),
      seq_(static_cast<size_t>(processes), 0),
      worker_clock_(static_cast<size_t>(workers), 0),
      shard_clock_(static_cast<size_t>(processes), 0),
      synced_(static_cast<size_t>(processes), 0),
      prune_held_(static_cast<size_t>(processes), 0) {}

void Client::AddTable(const TableConfig& config, RowWindow* window) {
  MutexLock lock(mu_);
  tables_[config.id].config = config;
  tables_[config.id].window = window;
}

const TableConfig* Client::Config(uint32_t table) const {
  MutexLock lock(mu_);
  auto it = tables_.find(table);
  return it == tables_.end() ? nullptr : &it->second.config;
}

Client::TableState& Client::StateOf(uint32_t table) {
  auto it = tables_.find(table);
  if (it == tables_.end())
    throw InvalidArgumentError(fmt::format("rank {}: table {} does not exist", rank_, table));
  return it->second;
}

void Client::ThrowIfFailed() {
  if (failure_) ThrowError(failure_->first, failure_->second);
}

bool Client::MustAsk(const CacheEntry& c, uint64_t need) {
  // Not "asked > need": a request at a later clock than this one may wait for this very reader
  // (zero staleness, workers a clock apart) and the process would stop.
  return c.asked != need + 1 && c.asked_low != need + 1;
}

void Client::MarkAsked(CacheEntry& c, uint64_t need) {
  c.asked = std::max(c.asked, need + 1);
  c.asked_low = c.asked_low == 0 ? need + 1 : std::min(c.asked_low, need + 1);
}

void Client::MarkAnswered(CacheEntry& c, uint64_t stamp) {
  if (c.asked <= stamp + 1) {
    c.asked = 0;
    c.asked_low = 0;
  } else if (c.asked_low <= stamp + 1) {
    c.asked_low = c.asked;  // the larger request is still on its way
  }
}

void Client::Ask(TableState& t, uint64_t row, uint64_t need) {
  CacheEntry& c = t.cache[row];
  if (!MustAsk(c, need)) return;
  MarkAsked(c, need);
  std::vector<std::vector<uint64_t>> rows(static_cast<size_t>(processes_));
  rows[static_cast<size_t>(ShardOf(t.config, row, processes_))].push_back(row);
  AddStale(t, need, rows);
  SendGets(t, rows, need);
}

void Client::AddStale(TableState& t, uint64_t need, std::vector<std::vector<uint64_t>>& rows) {
  if (!t.config.refresh_cached_rows || need <= t.refreshed) return;
  t.refreshed = need;
  t.cache.ForEach([&](uint64_t row, CacheEntry& e) {
    if (!e.row || e.stamp >= need || e.asked > need) return;  // refresh ahead only: a reader asks itself
    MarkAsked(e, need);
    rows[static_cast<size_t>(ShardOf(t.config, row, processes_))].push_back(row);
  });
}

void Client::SendGets(const TableState& t, std::vector<std::vector<uint64_t>>& rows, uint64_t need) {
  constexpr size_t kMaxReplyBytes = size_t{1} << 20;
  const size_t row_bytes =
      t.config.kind == RowKind::kDense ? 16 + t.config.width * DTypeSize(t.config.dtype) : 64;
  const size_t per_message = std::max<size_t>(1, kMaxReplyBytes / row_bytes);
  for (int shard = 0; shard < processes_; ++shard) {
    auto& ask = rows[static_cast<size_t>(shard)];
    if (ask.empty()) continue;
    std::sort(ask.begin(), ask.end());
    for (size_t first = 0; first < ask.size(); first += per_message) {
      const size_t n = std::min(per_message, ask.size() - first);
      WireWriter w;
      w.Reserve(32 + 8 * n);
      w.Put(MsgType::kGet);
      w.Put(t.config.id);
      w.Put(need);
      w.Put<uint8_t>(t.config.Pushed());
      w.Put(static_cast<uint32_t>(n));
      for (size_t i = first; i < first + n; ++i) w.Put(ask[i]);
      stats_.gets_sent += n;
      send_(shard, w.Take());
    }
  }
}

Client::Snapshot Client::Get(uint32_t table, uint64_t row, uint64_t need, Deadline deadline, bool* waited) {
  MutexLock lock(mu_);
  TableState& t = StateOf(table);
  const int shard = ShardOf(t.config, row, processes_);
  while (true) {
    ThrowIfFailed();
    if (auto e = row_errors_.find({table, row}); e != row_errors_.end()) {
      std::string why = e->second;
      row_errors_.erase(e);
      throw InvalidArgumentError(why);
    }
    const CacheEntry* c = t.cache.Find(row);
    if (c && c->row && c->stamp >= need) return Snapshot{c->row, c->stamp};
    if (waited && !*waited) {
      *waited = true;
      ++stats_.waits;
    }
    if (t.window) {
      ReadOneSided(t, {row}, need, true, deadline);
      continue;
    }
    Ask(t, row, need);
    // Wake at least every 100 ms: a far deadline must not overflow the clock conversion.
    {
      Waiting waiting(waiters_);
      cv_.WaitUntil(mu_, Deadline::Min(deadline, Deadline::After(std::chrono::milliseconds(100))).time());
    }
    if (deadline.Expired()) throw ShardLate(t, shard, row, need, "did not answer");
  }
}

void Client::Refresh(uint32_t table, FlatMap<Snapshot>& snapshots,
                     std::vector<std::shared_ptr<const Row>>* retired) {
  MutexLock lock(mu_);
  TableState& t = StateOf(table);
  snapshots.ForEach([&](uint64_t row, Snapshot& s) {
    const CacheEntry* c = t.cache.Find(row);
    if (!c || !c->row || c->row == s.row || c->stamp < s.stamp) return;
    if (retired && s.row) retired->push_back(std::move(s.row));
    s = Snapshot{c->row, c->stamp};
  });
}

void Client::Prefetch(uint32_t table, uint64_t row, uint64_t need, Deadline deadline) {
  MutexLock lock(mu_);
  TableState& t = StateOf(table);
  const CacheEntry* c = t.cache.Find(row);
  if (c && c->row && c->stamp >= need) return;
  if (t.window) {
    ReadOneSided(t, {row}, need, false, deadline);
    return;
  }
  Ask(t, row, need);
}

void Client::Prefetch(uint32_t table, std::span<const uint64_t> rows, uint64_t need, Deadline deadline) {
  MutexLock lock(mu_);
  TableState& t = StateOf(table);
  if (t.window) {
    std::vector<uint64_t> stale;
    for (uint64_t row : rows) {
      const CacheEntry* c = t.cache.Find(row);
      if (!c || !c->row || c->stamp < need) stale.push_back(row);
    }
    if (!stale.empty()) ReadOneSided(t, std::move(stale), need, false, deadline);
    return;
  }
  std::vector<std::vector<uint64_t>> ask(static_cast<size_t>(processes_));
  for (uint64_t row : rows) {
    CacheEntry& c = t.cache[row];
    if ((c.row && c.stamp >= need) || !MustAsk(c, need)) continue;
    MarkAsked(c, need);
    ask[static_cast<size_t>(ShardOf(t.config, row, processes_))].push_back(row);
  }
  SendGets(t, ask, need);
}

bool Client::Cached(uint32_t table, uint64_t row, uint64_t need) {
  MutexLock lock(mu_);
  const auto* c = StateOf(table).cache.Find(row);
  return c && c->row && c->stamp >= need;
}

void Client::AddUpdates(uint32_t table, const FlatMap<std::unique_ptr<Row>>& updates,
                        const CachedFn& cached) {
  MutexLock lock(mu_);
  TableState& t = StateOf(table);
  // This table's open batch per shard, sized for an even share of the updates.
  std::vector<FlatMap<Row>*> batches(static_cast<size_t>(processes_));
  for (int shard = 0; shard < processes_; ++shard) {
    FlatMap<Row>& rows = open_[static_cast<size_t>(shard)][table];
    rows.Reserve(rows.size() + updates.size() / static_cast<size_t>(processes_) + 8);
    batches[static_cast<size_t>(shard)] = &rows;
  }
  updates.ForEach([&](uint64_t row, const std::unique_ptr<Row>& delta) {
    if (!delta) return;
    FlatMap<Row>& rows = *batches[static_cast<size_t>(ShardOf(t.config, row, processes_))];
    if (Row* pending = rows.Find(row)) {
      pending->AddRow(*delta);
    } else if (!t.spare.empty()) {
      Row& fresh = rows[row];
      fresh = std::move(t.spare.back());
      t.spare.pop_back();
      fresh.AddRow(*delta);
    } else {
      rows[row] = *delta;
    }
    // The process's own updates show in the cache at once. Copy on write where a worker's
    // snapshot still holds the row; in place where none does.
    if (CacheEntry* c = t.cache.Find(row); c && c->row) {
      if (Unshared(c->row)) {
        AddToUnsharedRow(*c->row, *delta);
      } else {
        c->row = std::make_shared<Row>(*c->row);
        c->row->AddRow(*delta);
      }
      if (cached) cached(row, Snapshot{c->row, c->stamp});
    }
  });
}

void Client::SendBatch(int shard) {
  Batch& open = open_[static_cast<size_t>(shard)];
  std::erase_if(open, [](const auto& entry) { return entry.second.empty(); });
  if (open.empty()) return;
  uint64_t seq = ++seq_[static_cast<size_t>(shard)];
  WireWriter w;
  size_t estimate = 32;
  for (auto& [table, rows] : open) {
    const TableConfig& c = tables_.at(table).config;
    size_t row_bytes = c.kind == RowKind::kDense ? 16 + c.width * DTypeSize(c.dtype) : 64;
    estimate += 16 + rows.size() * row_bytes;
  }
  w.Reserve(estimate);
  w.Put(MsgType::kUpdate);
  w.Put(seq);
  w.Put(static_cast<uint32_t>(open.size()));
  for (auto& [table, rows] : open) {
    w.Put(table);
    w.Put<uint64_t>(rows.size());
    rows.ForEach([&](uint64_t row, const Row& delta) {
      w.Put(row);
      delta.Encode(w);
    });
  }
  ++stats_.update_batches;
  stats_.update_bytes += w.size();
  sent_[static_cast<size_t>(shard)].push_back(Sent{seq, std::move(open)});
  open.clear();
  send_(shard, w.Take());
}

void Client::SendOpen() {
  MutexLock lock(mu_);
  for (int shard = 0; shard < processes_; ++shard) SendBatch(shard);
}

void Client::SendNow(uint32_t table, uint64_t row) {
  MutexLock lock(mu_);
  SendBatch(ShardOf(StateOf(table).config, row, processes_));
}

void Client::Clocked(int worker, uint64_t clock) {
  MutexLock lock(mu_);
  worker_clock_[static_cast<size_t>(worker)] = clock;
  uint64_t lowest = *std::min_element(worker_clock_.begin(), worker_clock_.end());
  if (lowest <= process_clock_) return;
  process_clock_ = lowest;
  for (int shard = 0; shard < processes_; ++shard) {
    SendBatch(shard);  // updates first: the shard applies them before it sees the clock
    WireWriter w;
    w.Put(MsgType::kClock);
    w.Put(process_clock_);
    send_(shard, w.Take());
  }
  // Reads from now on need rows at stamp >= clock - s: ask for the cached rows older than that
  // now, so they come back while the workers compute instead of when they first read them.
  for (auto& [id, t] : tables_) {
    uint64_t s = t.config.ReadStaleness();
    if (t.config.Pushed() || t.window || s >= process_clock_) continue;
    std::vector<std::vector<uint64_t>> rows(static_cast<size_t>(processes_));
    AddStale(t, process_clock_ - s, rows);
    SendGets(t, rows, process_clock_ - s);
  }
}

void Client::Prune(int shard, uint64_t applied) {
  constexpr size_t kMaxSpareRows = 1 << 16;
  if (reads_in_flight_ > 0) {
    uint64_t& held = prune_held_[static_cast<size_t>(shard)];
    held = std::max(held, applied);
    return;
  }
  auto& sent = sent_[static_cast<size_t>(shard)];
  while (!sent.empty() && sent.front().seq <= applied) {
    for (auto& [table, rows] : sent.front().batch) {
      auto it = tables_.find(table);
      if (it == tables_.end()) continue;
      std::vector<Row>& spare = it->second.spare;
      rows.ForEach([&](uint64_t, Row& r) {
        if (spare.size() >= kMaxSpareRows) return;
        r.Clear();
        spare.push_back(std::move(r));
      });
    }
    sent.pop_front();
  }
}

void Client::OnRows(int shard, WireReader& r) {
  auto stamp = r.Get<uint64_t>();
  auto applied = r.Get<uint64_t>();
  auto count = r.Get<uint32_t>();
  Prune(shard, applied);
  // Not the shard's clock (kMinClock says that): a row of a one-update-per-clock table may be ahead.
  for (uint32_t i = 0; i < count; ++i) {
    auto table = r.Get<uint32_t>();
    auto row = r.Get<uint64_t>();
    auto it = tables_.find(table);
    if (it == tables_.end()) r.Fail(fmt::format("rows of unknown table {}", table));
    TableState& t = it->second;
    CacheEntry& c = t.cache[row];
    if (c.asked == 0) ++stats_.rows_pushed;  // nobody asked: a push
    if (c.row && stamp < c.stamp) {
      Row::Decode(r, t.config.kind, t.config.dtype, t.config.width);  // older than what is cached
    } else {
      // Over the cached row itself where no worker holds it (no allocation), else a new one.
      if (c.row && t.config.kind == RowKind::kDense && Unshared(c.row)) {
        DecodeIntoUnsharedRow(*c.row, r);
      } else {
        c.row = std::make_shared<Row>(Row::Decode(r, t.config.kind, t.config.dtype, t.config.width));
      }
      c.stamp = stamp;
      Complete(shard, table, row, *c.row);
    }
    MarkAnswered(c, stamp);
    ++stats_.rows_received;
  }
  if (!r.done()) r.Fail("trailing bytes");
}

// Adds this process's updates for `row` that the shard did not hold when it sent it: the logged
// batches it has not applied and the open one.
void Client::Complete(int shard, uint32_t table, uint64_t row, Row& value, uint64_t applied) {
  for (const Sent& s : sent_[static_cast<size_t>(shard)]) {
    if (s.seq <= applied) continue;
    auto bt = s.batch.find(table);
    if (bt == s.batch.end()) continue;
    if (const Row* d = bt->second.Find(row)) value.AddRow(*d);
  }
  auto open = open_[static_cast<size_t>(shard)].find(table);
  if (open != open_[static_cast<size_t>(shard)].end()) {
    if (const Row* d = open->second.Find(row)) value.AddRow(*d);
  }
}

TimeoutError Client::ShardLate(const TableState& t, int shard, uint64_t row, uint64_t need,
                               std::string_view what) {
  std::string why = fmt::format(
      "rank {}: get row {} of {} at clock {}: shard {} (rank {}) {} by the deadline "
      "(its clock is {}",
      rank_, row, t.config.Describe(), need, shard, shard, what, shard_clock_[static_cast<size_t>(shard)]);
  // The own shard is alive (this process runs it): what it waits for is other processes' clocks.
  std::vector<int> behind = shard == rank_ && behind_ ? behind_(need) : std::vector<int>{};
  std::erase(behind, rank_);
  if (!behind.empty()) why += fmt::format(", held back by rank {}", fmt::join(behind, ", rank "));
  return TimeoutError(why + ")");
}

void Client::WaitForShardClock(const TableState& t, int shard, uint64_t row, uint64_t need,
                               Deadline deadline) {
  Waiting waiting(waiters_);
  while (shard_clock_[static_cast<size_t>(shard)] < need) {
    ThrowIfFailed();
    if (deadline.Expired()) throw ShardLate(t, shard, row, need, "did not reach that clock");
    cv_.WaitUntil(mu_, Deadline::Min(deadline, Deadline::After(std::chrono::milliseconds(100))).time());
  }
}

void Client::ReadOneSided(TableState& t, std::vector<uint64_t> rows, uint64_t need, bool wait,
                          Deadline deadline) {
  std::vector<std::vector<uint64_t>> by_shard(static_cast<size_t>(processes_));
  for (uint64_t row : rows) by_shard[static_cast<size_t>(ShardOf(t.config, row, processes_))].push_back(row);
  // Rows go stale together: read the others the clock made too old in the same rounds (their
  // shards are waited for too; under a bound they all reach the clock at about the same time).
  const bool refresh = t.config.refresh_cached_rows && need > t.refreshed;
  if (refresh) {
    t.cache.ForEach([&](uint64_t row, CacheEntry& e) {
      if (e.row && e.stamp < need)
        by_shard[static_cast<size_t>(ShardOf(t.config, row, processes_))].push_back(row);
    });
  }
  bool skipped = false;
  for (int shard = 0; shard < processes_; ++shard) {
    auto& mine = by_shard[static_cast<size_t>(shard)];
    if (mine.empty() || shard_clock_[static_cast<size_t>(shard)] >= need) continue;
    if (wait) {
      WaitForShardClock(t, shard, mine.front(), need, deadline);
    } else {
      mine.clear();
      skipped = true;
    }
  }
  if (refresh && !skipped) t.refreshed = need;
  ++reads_in_flight_;
  mu_.unlock();
  std::vector<RowWindow::Result> reads(static_cast<size_t>(processes_));
  std::exception_ptr error;
  try {
    for (int shard = 0; shard < processes_; ++shard) {
      auto& mine = by_shard[static_cast<size_t>(shard)];
      if (mine.empty()) continue;
      std::sort(mine.begin(), mine.end());
      mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
      reads[static_cast<size_t>(shard)] = t.window->Read(shard, mine, deadline);
    }
  } catch (...) {
    error = std::current_exception();
  }
  mu_.lock();
  // Complete the rows before the held pruning runs: a batch applied after a row was copied may
  // have been acknowledged meanwhile, and the row still needs it from the log.
  if (!error) {
    for (int shard = 0; shard < processes_; ++shard) {
      if (!by_shard[static_cast<size_t>(shard)].empty())
        CacheRead(t, shard, by_shard[static_cast<size_t>(shard)], reads[static_cast<size_t>(shard)]);
    }
  }
  if (--reads_in_flight_ == 0) {
    for (int shard = 0; shard < processes_; ++shard) {
      uint64_t& held = prune_held_[static_cast<size_t>(shard)];
      if (held) Prune(shard, std::exchange(held, 0));
    }
  }
  if (error) std::rethrow_exception(error);
}

void Client::CacheRead(TableState& t, int shard, std::span<const uint64_t> rows, RowWindow::Result& read) {
  ++stats_.one_sided_reads;
  stats_.one_sided_rows += rows.size();
  stats_.one_sided_retries += read.retries;
  for (size_t i = 0; i < rows.size(); ++i) {
    CacheEntry& c = t.cache[rows[i]];
    if (c.row && c.stamp > read.clock) continue;  // another reader brought a newer one meanwhile
    Complete(shard, t.config.id, rows[i], read.values[i], read.applied[i]);
    c.row = std::make_shared<Row>(std::move(read.values[i]));
    c.stamp = read.clock;
  }
}

void Client::OnMessage(int src, WireReader& r) {
  MutexLock lock(mu_);
  auto type = static_cast<MsgType>(r.Get<uint8_t>());
  switch (type) {
    case MsgType::kRows: OnRows(src, r); break;
    case MsgType::kMinClock: {
      auto stamp = r.Get<uint64_t>();
      auto applied = r.Get<uint64_t>();
      shard_clock_[static_cast<size_t>(src)] = std::max(shard_clock_[static_cast<size_t>(src)], stamp);
      Prune(src, applied);
      break;
    }
    case MsgType::kError: {
      auto table = r.Get<uint32_t>();
      auto row = r.Get<uint64_t>();
      std::string what = r.GetString();
      if (table == kNoTable)
        failure_ = {ErrorCode::kInternal, what};
      else
        row_errors_[{table, row}] = what;
      break;
    }
    case MsgType::kReadReply: OnReadReply(src, r); break;
    case MsgType::kSynced: {
      auto applied = r.Get<uint64_t>();
      Prune(src, applied);
      synced_[static_cast<size_t>(src)] = 1;
      break;
    }
    case MsgType::kCheckpointDone: {
      r.Get<uint64_t>();
      r.Get<uint64_t>();
      std::string error = r.GetString();
      ++checkpoint_done_;
      if (!error.empty() && checkpoint_error_.empty()) checkpoint_error_ = error;
      break;
    }
    case MsgType::kRestoreDone: {
      auto clock = r.Get<uint64_t>();
      restore_done_ = {clock, r.GetString()};
      break;
    }
    default: r.Fail(fmt::format("unexpected message type {} for a client", static_cast<int>(type)));
  }
  cv_.NotifyAll();
}

void Client::Fail(ErrorCode code, const std::string& error) {
  MutexLock lock(mu_);
  if (!failure_) failure_ = {code, error};
  cv_.NotifyAll();
}

std::vector<Row> Client::ReadLatest(uint32_t table, std::span<const uint64_t> rows, Deadline deadline) {
  MutexLock lock(mu_);
  const TableState& t = StateOf(table);
  const uint64_t id = ++next_read_;
  PendingRead& p = reads_[id];
  p.table = table;
  p.rows.resize(rows.size());
  p.answered.assign(static_cast<size_t>(processes_), 1);
  std::vector<std::vector<uint64_t>> ask(static_cast<size_t>(processes_));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= t.config.num_rows) {
      reads_.erase(id);
      throw InvalidArgumentError(
          fmt::format("rank {}: read row {} of {}: out of range", rank_, rows[i], t.config.Describe()));
    }
    auto& at = p.where[rows[i]];
    if (at.empty()) ask[static_cast<size_t>(ShardOf(t.config, rows[i], processes_))].push_back(rows[i]);
    at.push_back(i);
  }
  for (int shard = 0; shard < processes_; ++shard) {
    const auto& mine = ask[static_cast<size_t>(shard)];
    if (mine.empty()) continue;
    p.answered[static_cast<size_t>(shard)] = 0;
    WireWriter w;
    w.Put(MsgType::kRead);
    w.Put(id);
    w.Put(table);
    w.Put(static_cast<uint32_t>(mine.size()));
    for (uint64_t row : mine) w.Put(row);
    send_(shard, w.Take());
  }
  {
    Waiting waiting(waiters_);
    while (!failure_ && !AllSet(p.answered) && cv_.WaitUntil(mu_, deadline.time())) {
    }
  }
  const bool ok = failure_ || AllSet(p.answered);
  PendingRead result = std::move(p);
  reads_.erase(id);
  ThrowIfFailed();
  if (!ok) {
    int silent = static_cast<int>(std::find(result.answered.begin(), result.answered.end(), 0) -
                                  result.answered.begin());
    throw TimeoutError(fmt::format("rank {}: read of {}: shard {} (rank {}) did not answer by the deadline",
                                   rank_, t.config.Describe(), silent, silent));
  }
  return std::move(result.rows);
}

void Client::OnReadReply(int shard, WireReader& r) {
  auto id = r.Get<uint64_t>();
  auto count = r.Get<uint32_t>();
  auto it = reads_.find(id);
  if (it == reads_.end()) return;  // the reader gave up (deadline): drop the late answer
  PendingRead& p = it->second;
  const TableConfig& c = StateOf(p.table).config;
  for (uint32_t i = 0; i < count; ++i) {
    auto row = r.Get<uint64_t>();
    Row value = Row::Decode(r, c.kind, c.dtype, c.width);
    auto at = p.where.find(row);
    if (at == p.where.end()) r.Fail(fmt::format("read reply with row {} that was not asked for", row));
    for (size_t pos : at->second) p.rows[pos] = value;
  }
  if (!r.done()) r.Fail("trailing bytes");
  p.answered[static_cast<size_t>(shard)] = 1;
}

void Client::Sync(Deadline deadline) {
  MutexLock lock(mu_);
  std::fill(synced_.begin(), synced_.end(), 0);
  for (int shard = 0; shard < processes_; ++shard) {
    SendBatch(shard);
    WireWriter w;
    w.Put(MsgType::kSync);
    send_(shard, w.Take());
  }
  {
    Waiting waiting(waiters_);
    while (!failure_ && !AllSet(synced_) && cv_.WaitUntil(mu_, deadline.time())) {
    }
  }
  if (!failure_ && !AllSet(synced_)) {
    int silent = static_cast<int>(std::find(synced_.begin(), synced_.end(), 0) - synced_.begin());
    throw TimeoutError(fmt::format(
        "rank {}: barrier: shard {} did not confirm this process's updates by the deadline", rank_, silent));
  }
  ThrowIfFailed();
}

void Client::DropCache() {
  MutexLock lock(mu_);
  for (auto& [id, t] : tables_) t.cache.Clear();
}

void Client::Checkpoint(const std::string& dir, uint64_t clock, Deadline deadline) {
  MutexLock lock(mu_);
  for (uint64_t c : worker_clock_) {
    if (c != clock) {
      throw InvalidArgumentError(fmt::format(
          "rank {}: checkpoint: workers are at different clocks ({} and {}); checkpoint at a clock boundary",
          rank_, c, clock));
    }
  }
  checkpoint_done_ = 0;
  checkpoint_error_.clear();
  for (int shard = 0; shard < processes_; ++shard) {
    SendBatch(shard);
    WireWriter w;
    w.Put(MsgType::kCheckpoint);
    w.Put(clock);
    w.PutString(dir);
    send_(shard, w.Take());
  }
  while (!failure_ && checkpoint_done_ != processes_ && cv_.WaitUntil(mu_, deadline.time())) {
  }
  if (!failure_ && checkpoint_done_ != processes_) {
    throw TimeoutError(
        fmt::format("rank {}: checkpoint at clock {}: {} of {} shards wrote theirs by the deadline", rank_,
                    clock, checkpoint_done_, processes_));
  }
  ThrowIfFailed();
  if (!checkpoint_error_.empty()) throw IoError(checkpoint_error_);
  if (rank_ == 0) {
    std::map<uint32_t, TableConfig> configs;
    for (const auto& [id, t] : tables_) {
      if (t.config.checkpointed) configs[id] = t.config;
    }
    WriteManifest(fs_, dir, clock, processes_, configs);
  }
}

uint64_t Client::Restore(const std::string& dir, Deadline deadline) {
  MutexLock lock(mu_);
  restore_done_.reset();
  WireWriter w;
  w.Put(MsgType::kRestore);
  w.PutString(dir);
  send_(rank_, w.Take());
  while (!failure_ && !restore_done_ && cv_.WaitUntil(mu_, deadline.time())) {
  }
  if (!failure_ && !restore_done_) {
    throw TimeoutError(
        fmt::format("rank {}: restore from {}: the shard did not finish by the deadline", rank_, dir));
  }
  ThrowIfFailed();
  if (!restore_done_->second.empty()) ThrowError(ErrorCode::kParse, restore_done_->second);
  uint64_t clock = restore_done_->first;
  for (auto& [id, t] : tables_) t.cache.Clear();
  for (auto& b : open_) b.clear();
  for (auto& s : sent_) s.clear();
  std::fill(worker_clock_.begin(), worker_clock_.end(), clock);
  std::fill(shard_clock_.begin(), shard_clock_.end(), clock);
  process_clock_ = clock;
  return clock;
}

PsStats Client::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

uint64_t Client::process_clock() const {
  MutexLock lock(mu_);
  return process_clock_;
}

}  // namespace parasol::ps
