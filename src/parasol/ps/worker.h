// A worker thread's view of the parameter server: typed table handles with Get/Inc, its clock,
// barriers and checkpoints.
//
// Threading: a Worker belongs to the thread it was created for; its tables, views and futures
// are used by that thread only. A RowView stays valid until that worker's next Clock() or
// GlobalBarrier().
//
// Reads: Get(row) at clock c returns a view that holds every update of clocks <= c - s - 1 from
// every worker (s: the table's staleness; BSP: 0; ASP: no bound) and all of this worker's own
// updates. It blocks only when the cached row is older than that allows.
// Updates: Inc/BatchInc/IncRow add to this worker's buffer, coalesced per entry, and leave with
// Clock() (VAP: earlier, before a row's unsent magnitude would pass the threshold).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "parasol/core/dtype.h"
#include "parasol/core/error.h"
#include "parasol/core/flat_map.h"
#include "parasol/ps/client.h"
#include "parasol/ps/row.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

class ParameterServer;
template <typename V>
class Table;

class Worker {
 public:
  Worker(ParameterServer* ps, int index);
  ~Worker();

  int index() const { return index_; }
  // Clocks this worker has finished.
  uint64_t clock() const { return clock_; }
  // Time this worker's reads spent waiting for shards.
  double wait_seconds() const { return wait_seconds_; }

  // A typed handle. Throws InvalidArgumentError if the table does not exist or holds another type.
  template <typename V>
  Table<V> GetTable(uint32_t id);

  // Ends this worker's clock: its updates leave (batched per shard), views taken before become
  // invalid, reads after it may require fresher rows.
  void Clock();
  // Sends this worker's (and the process's) updates now, one message per shard, without ending
  // the clock: to overlap sending with computing (a deep-learning engine pushes each layer's
  // gradient as backward finishes it). Views taken before become invalid.
  void Flush();
  // Returns once every worker of every process has called it. Every update made before it, by
  // any worker, is then at its shard, and reads after it see them (whatever the model: ASP too).
  void GlobalBarrier();
  // Collective over all workers at the same clock: every shard writes its rows; returns when
  // the checkpoint is complete. Throws if any shard failed to write.
  void Checkpoint(const std::string& dir);
  // Collective over all workers, before any update: loads a checkpoint; returns its clock, which
  // becomes every worker's clock.
  uint64_t Restore(const std::string& dir);

  // The core the typed handles use.
  using LocalRow = Client::Snapshot;  // no row: none, or dropped because it is out of date
  struct TableState {
    TableConfig config;
    uint64_t staleness = 0;
    FlatMap<LocalRow> snapshots;
    FlatMap<std::unique_ptr<Row>> updates;
    FlatMap<double> unsent;                           // VAP: magnitude of each row's unsent updates
    std::vector<std::shared_ptr<const Row>> retired;  // snapshots replaced this clock (views may hold them)
    uint64_t refreshed = 0;                   // the need of the last refresh of all snapshots after a wait
    std::vector<std::unique_ptr<Row>> sent;   // VAP: updates sent mid-clock (views may hold them)
    std::vector<std::unique_ptr<Row>> spare;  // zeroed update rows for the next clock
  };
  uint64_t Need(const TableState& t) const { return clock_ >= t.staleness ? clock_ - t.staleness : 0; }
  // Fetches a row at stamp >= need through the process cache (blocking if it must).
  const Row& Fetch(TableState& t, uint64_t row, uint64_t need);
  Row& UpdateRow(TableState& t, uint64_t row) {
    std::unique_ptr<Row>& u = t.updates[row];
    if (!u) {
      if (t.spare.empty()) {
        u = std::make_unique<Row>(t.config.kind, t.config.dtype, t.config.width);
      } else {
        u = std::move(t.spare.back());
        t.spare.pop_back();
      }
    }
    return *u;
  }
  // VAP: account for `magnitude` more unsent update on `row`, sending it first if needed.
  void AddUnsent(TableState& t, uint64_t row, double magnitude);
  void Prefetch(TableState& t, uint64_t row, uint64_t need);
  void PrefetchRows(TableState& t, std::span<const uint64_t> rows, uint64_t need);
  bool Cached(TableState& t, uint64_t row, uint64_t need);
  [[noreturn]] void BadRow(const TableState& t, uint64_t row) const;
  [[noreturn]] void BadColumn(const TableState& t, uint64_t col) const;

 private:
  TableState& StateOf(uint32_t id, DType dtype);
  // Hands this worker's buffered updates to the process's client (they join the open batches).
  void HandOverUpdates();
  void SendRowNow(TableState& t, uint64_t row);
  void Recycle(TableState& t, std::unique_ptr<Row> row);

  ParameterServer* ps_;
  Client* client_;
  int index_;
  uint64_t clock_ = 0;
  double wait_seconds_ = 0;
  std::map<uint32_t, std::unique_ptr<TableState>> tables_;
};

// The values a Get returned: the cached row plus this worker's own unsent updates.
template <typename V>
class RowView {
 public:
  RowView(const Row* cached, const Row* own)
      : cached_(cached),
        own_(own),
        dense_(cached->DenseData<V>()),
        own_dense_(own ? own->DenseData<V>() : nullptr) {}

  V operator[](uint64_t col) const {
    V v = dense_ ? dense_[col] : cached_->Get<V>(col);
    if (own_) v += own_dense_ ? own_dense_[col] : own_->Get<V>(col);
    return v;
  }
  // Dense rows: writes every column to out (out.size() == the table's width), in one pass that
  // the compiler vectorises; for inner loops that read a whole row.
  void CopyTo(std::span<V> out) const {
    V* o = out.data();
    const size_t n = out.size();
    if (!dense_) {
      for (size_t c = 0; c < n; ++c) o[c] = (*this)[c];
      return;
    }
    if (own_dense_) {
      for (size_t c = 0; c < n; ++c) o[c] = dense_[c] + own_dense_[c];
    } else {
      for (size_t c = 0; c < n; ++c) o[c] = dense_[c];
    }
  }
  // Sparse rows: calls fn(col, value) for the stored entries of the cached row (this worker's
  // unsent updates to other columns are not visited).
  template <typename Fn>
  void ForEachStored(Fn&& fn) const {
    if (const auto* m = cached_->SparseData<V>()) m->ForEach([&](uint64_t col, V) { fn(col, (*this)[col]); });
  }

 private:
  const Row* cached_;
  const Row* own_;
  const V* dense_;
  const V* own_dense_;
};

// Adds deltas to `own`, the worker's update of dense `row`, in one pass the compiler vectorises;
// under VAP, accounts for their magnitude (which may send the update).
template <typename V>
void AddDense(Worker& w, Worker::TableState& t, uint64_t row, V* own, std::span<const V> deltas) {
  const V* d = deltas.data();
  const size_t n = deltas.size();
  for (size_t c = 0; c < n; ++c) own[c] += d[c];
  if (t.config.consistency == Consistency::kVap) {
    double magnitude = 0;
    for (size_t c = 0; c < n; ++c) magnitude += std::fabs(static_cast<double>(d[c]));
    w.AddUnsent(t, row, magnitude);
  }
}

// A read-modify-write of one dense row by its worker (Table::Update): the row as Get returns it,
// and this worker's update of it, found once for both. Valid until the worker's next call on the
// table, Clock, Flush or GlobalBarrier; Add comes last (under VAP it may send the update).
template <typename V>
class RowUpdate {
 public:
  RowUpdate(Worker* w, Worker::TableState* t, uint64_t row, const Row* cached, Row* own)
      : w_(w), t_(t), row_(row), cached_(cached->DenseData<V>()), own_(own->MutableDenseData<V>()) {}

  // The row's values (the cache's plus this worker's unsent updates) into out (the table's width).
  void CopyTo(std::span<V> out) const {
    CheckWidth("CopyTo", out.size());
    V* o = out.data();
    const size_t n = out.size();
    for (size_t c = 0; c < n; ++c) o[c] = cached_[c] + own_[c];
  }
  // As IncRow: adds deltas[c] to column c of this worker's update.
  void Add(std::span<const V> deltas) {
    CheckWidth("Add", deltas.size());
    AddDense(*w_, *t_, row_, own_, deltas);
  }

 private:
  void CheckWidth(const char* what, size_t n) const {
    if (n != t_->config.width) {
      throw InvalidArgumentError(
          fmt::format("{}: {} needs {} columns, got {}", what, t_->config.Describe(), t_->config.width, n));
    }
  }

  Worker* w_;
  Worker::TableState* t_;
  uint64_t row_;
  const V* cached_;
  V* own_;
};

// An asynchronous Get: the request leaves when the future is made.
template <typename V>
class RowFuture {
 public:
  RowFuture(Worker* w, Worker::TableState* t, uint64_t row, uint64_t need)
      : w_(w), t_(t), row_(row), need_(need) {
    w_->Prefetch(*t_, row_, need_);
  }
  bool Ready() const { return w_->Cached(*t_, row_, need_); }
  // Blocks until the row is there (or the deadline passes: TimeoutError).
  RowView<V> Wait() {
    const Row& r = w_->Fetch(*t_, row_, need_);
    std::unique_ptr<Row>* own = t_->updates.Find(row_);
    return RowView<V>(&r, own ? own->get() : nullptr);
  }

 private:
  Worker* w_;
  Worker::TableState* t_;
  uint64_t row_;
  uint64_t need_;
};

template <typename V>
class Table {
 public:
  Table(Worker* w, Worker::TableState* t) : w_(w), t_(t) {}

  const TableConfig& config() const { return t_->config; }

  RowView<V> Get(uint64_t row) {
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    uint64_t need = w_->Need(*t_);
    const Worker::LocalRow* l = t_->snapshots.Find(row);
    const Row* cached = l && l->row && l->stamp >= need ? l->row.get() : &w_->Fetch(*t_, row, need);
    std::unique_ptr<Row>* own = t_->updates.Find(row);
    return RowView<V>(cached, own ? own->get() : nullptr);
  }

  // Asks for every row not cached fresh enough, without waiting: one message per shard. For
  // warming the cache before a pass over many rows.
  void Prefetch(std::span<const uint64_t> rows) {
    for (uint64_t row : rows) {
      if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    }
    w_->PrefetchRows(*t_, rows, w_->Need(*t_));
  }
  // Asks for the rows as the reads after this worker's next Clock() will need them. For a table
  // of one update per clock, after this worker's updates of them: each comes back as soon as
  // every process has sent its update, while this clock's work goes on.
  void PrefetchNextClock(std::span<const uint64_t> rows) {
    for (uint64_t row : rows) {
      if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    }
    const uint64_t next = w_->clock() + 1;
    w_->PrefetchRows(*t_, rows, next >= t_->staleness ? next - t_->staleness : 0);
  }

  // Dense rows: Get and IncRow of one row with one lookup of the cache and of the updates (a
  // pass that reads and changes each row it visits, as SGD does).
  RowUpdate<V> Update(uint64_t row) {
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    if (t_->config.kind != RowKind::kDense)
      throw InvalidArgumentError(fmt::format("Update: {} is not dense", t_->config.Describe()));
    const uint64_t need = w_->Need(*t_);
    const Worker::LocalRow* l = t_->snapshots.Find(row);
    const Row* cached = l && l->row && l->stamp >= need ? l->row.get() : &w_->Fetch(*t_, row, need);
    return RowUpdate<V>(w_, t_, row, cached, &w_->UpdateRow(*t_, row));
  }

  RowFuture<V> GetAsync(uint64_t row) {
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    return RowFuture<V>(w_, t_, row, w_->Need(*t_));
  }

  void Inc(uint64_t row, uint64_t col, V delta) {
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    if (t_->config.width != 0 && col >= t_->config.width) w_->BadColumn(*t_, col);
    w_->UpdateRow(*t_, row).Add<V>(col, delta);
    if (t_->config.consistency == Consistency::kVap)
      w_->AddUnsent(*t_, row, std::fabs(static_cast<double>(delta)));
  }

  void BatchInc(uint64_t row, std::span<const uint64_t> cols, std::span<const V> deltas) {
    if (cols.size() != deltas.size())
      throw InvalidArgumentError("BatchInc: cols and deltas differ in length");
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    Row& u = w_->UpdateRow(*t_, row);
    double magnitude = 0;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (t_->config.width != 0 && cols[i] >= t_->config.width) w_->BadColumn(*t_, cols[i]);
      u.Add<V>(cols[i], deltas[i]);
      magnitude += std::fabs(static_cast<double>(deltas[i]));
    }
    if (t_->config.consistency == Consistency::kVap) w_->AddUnsent(*t_, row, magnitude);
  }

  // Dense rows: adds deltas[c] to column c, for every column.
  void IncRow(uint64_t row, std::span<const V> deltas) {
    if (row >= t_->config.num_rows) w_->BadRow(*t_, row);
    if (t_->config.kind != RowKind::kDense || deltas.size() != t_->config.width) {
      throw InvalidArgumentError(fmt::format("IncRow: {} needs {} deltas for a dense row, got {}",
                                             t_->config.Describe(), t_->config.width, deltas.size()));
    }
    AddDense(*w_, *t_, row, w_->UpdateRow(*t_, row).MutableDenseData<V>(), deltas);
  }

 private:
  Worker* w_;
  Worker::TableState* t_;
};

template <typename V>
Table<V> Worker::GetTable(uint32_t id) {
  return Table<V>(this, &StateOf(id, DTypeOf<V>));
}

}  // namespace parasol::ps
