#include "parasol/ps/worker.h"

#include <chrono>

#include "parasol/ps/parameter_server.h"

namespace parasol::ps {

Worker::Worker(ParameterServer* ps, int index) : ps_(ps), client_(&ps->client()), index_(index) {}

Worker::~Worker() = default;

Worker::TableState& Worker::StateOf(uint32_t id, DType dtype) {
  auto it = tables_.find(id);
  if (it == tables_.end()) {
    const TableConfig* config = client_->Config(id);
    if (!config)
      throw InvalidArgumentError(
          fmt::format("rank {}: worker {}: table {} does not exist", ps_->rank(), index_, id));
    auto state = std::make_unique<TableState>();
    state->config = *config;
    state->staleness = config->ReadStaleness();
    it = tables_.emplace(id, std::move(state)).first;
  }
  if (it->second->config.dtype != dtype) {
    throw InvalidArgumentError(fmt::format("rank {}: worker {}: {} holds {} values, not {}", ps_->rank(),
                                           index_, it->second->config.Describe(),
                                           DTypeName(it->second->config.dtype), DTypeName(dtype)));
  }
  return *it->second;
}

const Row& Worker::Fetch(TableState& t, uint64_t row, uint64_t need) {
  bool waited = false;
  auto start = std::chrono::steady_clock::now();
  Client::Snapshot snap = client_->Get(t.config.id, row, need, ps_->DefaultDeadline(), &waited);
  if (waited)
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (waited && need > t.refreshed) {
    // Rows go stale together and are fetched together (once per clock): take all that came in
    // one pass.
    client_->Refresh(t.config.id, t.snapshots, &t.retired);  // views may still use the old rows
    t.refreshed = need;
  }
  LocalRow& l = t.snapshots[row];
  if (l.row) t.retired.push_back(std::move(l.row));
  l = std::move(snap);
  return *l.row;
}

void Worker::Prefetch(TableState& t, uint64_t row, uint64_t need) {
  if (const LocalRow* l = t.snapshots.Find(row); l && l->row && l->stamp >= need) return;
  client_->Prefetch(t.config.id, row, need, ps_->DefaultDeadline());
}

void Worker::PrefetchRows(TableState& t, std::span<const uint64_t> rows, uint64_t need) {
  std::vector<uint64_t> ask;
  ask.reserve(rows.size());
  for (uint64_t row : rows) {
    const LocalRow* l = t.snapshots.Find(row);
    if (!l || !l->row || l->stamp < need) ask.push_back(row);
  }
  client_->Prefetch(t.config.id, ask, need, ps_->DefaultDeadline());
}

bool Worker::Cached(TableState& t, uint64_t row, uint64_t need) {
  if (const LocalRow* l = t.snapshots.Find(row); l && l->row && l->stamp >= need) return true;
  return client_->Cached(t.config.id, row, need);
}

void Worker::SendRowNow(TableState& t, uint64_t row) {
  std::unique_ptr<Row>* u = t.updates.Find(row);
  if (!u || !*u) return;
  // The view of this row (cached + own) must not change: the snapshot goes, the update moves to
  // the process cache, which then holds it.
  if (LocalRow* l = t.snapshots.Find(row); l && l->row) t.retired.push_back(std::move(l->row));
  FlatMap<std::unique_ptr<Row>> one;
  one[row] = std::move(*u);
  client_->AddUpdates(t.config.id, one);
  client_->SendNow(t.config.id, row);
  t.sent.push_back(std::move(one[row]));
}

void Worker::Recycle(TableState& t, std::unique_ptr<Row> row) {
  constexpr size_t kMaxSpareRows = 1 << 14;
  if (!row || t.spare.size() >= kMaxSpareRows) return;
  row->Clear();
  t.spare.push_back(std::move(row));
}

void Worker::AddUnsent(TableState& t, uint64_t row, double magnitude) {
  double& unsent = t.unsent[row];
  unsent += magnitude;
  if (unsent > t.config.vap_threshold) {
    SendRowNow(t, row);
    unsent = 0;
  }
}

void Worker::HandOverUpdates() {
  for (auto& entry : tables_) {  // not a structured binding: lambdas cannot capture those in clang 14
    const auto id = entry.first;
    auto& t = entry.second;
    t->retired.clear();  // views end here
    for (auto& u : t->sent) Recycle(*t, std::move(u));
    t->sent.clear();
    if (!t->updates.empty()) {
      // Snapshots of rows this worker updated must show those updates: drop them (so the process
      // cache can add the updates in place when no other worker holds the row) and take the
      // cache's updated row back.
      t->updates.ForEach([&](uint64_t row, const std::unique_ptr<Row>& u) {
        if (!u) return;
        if (LocalRow* l = t->snapshots.Find(row)) l->row.reset();
      });
      client_->AddUpdates(id, t->updates,
                          [&](uint64_t row, Client::Snapshot snap) { t->snapshots[row] = std::move(snap); });
      t->updates.ForEach([&](uint64_t, std::unique_ptr<Row>& u) { Recycle(*t, std::move(u)); });
      t->updates.Clear();
    }
    t->unsent.Clear();
    // Rows the process cache has received since (pushes, refreshes another worker asked for)
    // replace older snapshots: reads stay within the bound and get fresher.
    client_->Refresh(id, t->snapshots, nullptr);
  }
}

void Worker::Clock() {
  HandOverUpdates();
  ++clock_;
  client_->Clocked(index_, clock_);
}

void Worker::Flush() {
  HandOverUpdates();
  client_->SendOpen();
}

void Worker::GlobalBarrier() {
  for (auto& entry : tables_) {  // not a structured binding: lambdas cannot capture those in clang 14
    const auto id = entry.first;
    auto& t = entry.second;
    t->retired.clear();
    for (auto& u : t->sent) Recycle(*t, std::move(u));
    t->sent.clear();
    t->snapshots.Clear();
    if (!t->updates.empty()) {
      client_->AddUpdates(id, t->updates);
      t->updates.ForEach([&](uint64_t, std::unique_ptr<Row>& u) { Recycle(*t, std::move(u)); });
      t->updates.Clear();
    }
    t->unsent.Clear();
  }
  ps_->Barrier(index_);
}

void Worker::Checkpoint(const std::string& dir) {
  uint64_t clock = clock_;
  ps_->OnePerProcess(index_, [&] { client_->Checkpoint(dir, clock, ps_->DefaultDeadline()); });
  GlobalBarrier();
}

uint64_t Worker::Restore(const std::string& dir) {
  ps_->OnePerProcess(index_, [&] { client_->Restore(dir, ps_->DefaultDeadline()); });
  clock_ = client_->process_clock();
  for (auto& [id, t] : tables_) {
    t->snapshots.Clear();
    t->updates.Clear();
    t->unsent.Clear();
    t->retired.clear();
    t->sent.clear();
  }
  GlobalBarrier();
  return clock_;
}

void Worker::BadRow(const TableState& t, uint64_t row) const {
  throw InvalidArgumentError(fmt::format("rank {}: worker {}: row {} is out of range for {} of {} rows",
                                         ps_->rank(), index_, row, t.config.Describe(), t.config.num_rows));
}

void Worker::BadColumn(const TableState& t, uint64_t col) const {
  throw InvalidArgumentError(fmt::format("rank {}: worker {}: column {} is out of range for {}", ps_->rank(),
                                         index_, col, t.config.Describe()));
}

}  // namespace parasol::ps
