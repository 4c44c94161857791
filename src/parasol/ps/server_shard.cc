#include "parasol/ps/server_shard.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/ps/checkpoint.h"

namespace parasol::ps {

namespace {

std::vector<std::byte> ErrorMessage(uint32_t table, uint64_t row, const std::string& what) {
  WireWriter w;
  w.Put(MsgType::kError);
  w.Put(table);
  w.Put(row);
  w.PutString(what);
  return w.Take();
}

}  // namespace

ServerShard::ServerShard(int rank, int processes, FileSystem& fs)
    : rank_(rank),
      processes_(processes),
      fs_(fs),
      clock_(static_cast<size_t>(processes), 0),
      applied_(static_cast<size_t>(processes), 0) {}

void ServerShard::AddTable(const TableConfig& config, RowWindow* window) {
  Table& t = tables_[config.id];
  t.config = config;
  t.window = window;
}

uint64_t ServerShard::rows() const {
  uint64_t n = 0;
  for (const auto& [id, t] : tables_) n += t.rows.size();
  return n;
}

const Row* ServerShard::Peek(uint32_t table, uint64_t row) const {
  auto it = tables_.find(table);
  return it == tables_.end() ? nullptr : it->second.rows.Find(row);
}

ServerShard::Table& ServerShard::TableOrFail(uint32_t id, WireReader& r) {
  auto it = tables_.find(id);
  if (it == tables_.end()) r.Fail(fmt::format("table {} does not exist on shard {}", id, rank_));
  return it->second;
}

Row& ServerShard::RowOf(Table& t, uint64_t row) {
  Row* found = t.rows.Find(row);
  if (found) return *found;
  Row& fresh = t.rows[row];
  fresh = Row(t.config.kind, t.config.dtype, t.config.width);
  return fresh;
}

void ServerShard::Handle(int src, WireReader& r, Outbox& out) {
  if (src < 0 || src >= processes_) return;  // not one of ours: nothing to answer
  auto type = static_cast<MsgType>(r.Get<uint8_t>());
  try {
    switch (type) {
      case MsgType::kUpdate: OnUpdate(src, r, out); break;
      case MsgType::kClock: OnClock(src, r, out); break;
      case MsgType::kGet: OnGet(src, r, out); break;
      case MsgType::kCheckpoint: OnCheckpoint(src, r, out); break;
      case MsgType::kRestore: OnRestore(src, r, out); break;
      case MsgType::kSync: OnSync(src, r, out); break;
      case MsgType::kRead: OnRead(src, r, out); break;
      default: r.Fail(fmt::format("unexpected message type {} for a shard", static_cast<int>(type)));
    }
  } catch (const MalformedMessage& e) {
    out.emplace_back(src, ErrorMessage(kNoTable, 0, fmt::format("shard {}: {}", rank_, e.what())));
  }
}

void ServerShard::OnUpdate(int src, WireReader& r, Outbox& out) {
  auto seq = r.Get<uint64_t>();
  auto tables = r.Get<uint32_t>();
  // Decode everything before applying anything: a malformed batch changes nothing.
  Updates rows;
  for (uint32_t i = 0; i < tables; ++i) {
    Table& t = TableOrFail(r.Get<uint32_t>(), r);
    auto n = r.Get<uint64_t>();
    for (uint64_t j = 0; j < n; ++j) {
      auto row = r.Get<uint64_t>();
      if (row >= t.config.num_rows)
        r.Fail(fmt::format("row {} of {} is out of range", row, t.config.Describe()));
      if (ShardOf(t.config, row, processes_) != rank_)
        r.Fail(fmt::format("row {} does not belong to shard {}", row, rank_));
      rows.emplace_back(&t, row, Row::Decode(r, t.config.kind, t.config.dtype, t.config.width));
    }
  }
  if (!r.done()) r.Fail("trailing bytes");
  CheckOncePerClock(src, rows, r);
  Replies replies(static_cast<size_t>(processes_));
  std::vector<uint64_t> stamps(static_cast<size_t>(processes_), ~uint64_t{0});
  for (auto& [t, row, delta] : rows) {
    Row& value = RowOf(*t, row);
    value.AddRow(delta);
    if (t->window) t->window->Publish(row, value, src, seq);
    if (t->config.Pushed()) t->dirty[row] = 1;
    if (t->config.one_update_per_clock) MarkUpdated(src, t->config.id, *t, row, replies, stamps);
  }
  applied_[static_cast<size_t>(src)] = seq;
  for (int p = 0; p < processes_; ++p) {
    const auto i = static_cast<size_t>(p);
    if (!replies[i].empty()) ReplyRows(p, replies[i], stamps[i], out);
  }
}

// An update from `src` belongs to its clock clock_[src]: its clock message comes after its updates.
void ServerShard::CheckOncePerClock(int src, const Updates& rows, WireReader& r) const {
  const uint64_t through = clock_[static_cast<size_t>(src)] + 1;
  std::vector<std::pair<const Table*, uint64_t>> seen;
  auto fail = [&](const Table& t, uint64_t row) {
    r.Fail(fmt::format(
        "process {} updated row {} of {} twice in clock {}, which takes one update per row per clock", src,
        row, t.config.Describe(), through - 1));
  };
  for (const auto& [t, row, delta] : rows) {
    if (!t->config.one_update_per_clock) continue;
    const auto* u = t->updated_through.Find(row);
    if (u && (*u)[static_cast<size_t>(src)] >= through) fail(*t, row);
    seen.emplace_back(t, row);
  }
  std::sort(seen.begin(), seen.end());
  if (auto twice = std::adjacent_find(seen.begin(), seen.end()); twice != seen.end()) {
    fail(*twice->first, twice->second);
  }
}

void ServerShard::MarkUpdated(int src, uint32_t id, Table& t, uint64_t row, Replies& replies,
                              std::vector<uint64_t>& stamps) {
  auto& through = t.updated_through[row];
  if (through.empty()) through.assign(static_cast<size_t>(processes_), 0);
  through[static_cast<size_t>(src)] = clock_[static_cast<size_t>(src)] + 1;
  auto it = t.waiting.find(row);
  if (it == t.waiting.end()) return;
  const uint64_t stamp = RowStamp(t, row);
  auto& readers = it->second;
  std::erase_if(readers, [&](const std::pair<int, uint64_t>& w) {
    if (w.second > stamp) return false;
    replies[static_cast<size_t>(w.first)].emplace_back(id, row);
    stamps[static_cast<size_t>(w.first)] = std::min(stamps[static_cast<size_t>(w.first)], stamp);
    return true;
  });
  if (readers.empty()) t.waiting.erase(it);
}

uint64_t ServerShard::RowStamp(const Table& t, uint64_t row) const {
  const auto* through = t.updated_through.Find(row);
  if (!through) return min_clock_;
  return std::max(min_clock_, *std::min_element(through->begin(), through->end()));
}

void ServerShard::OnClock(int src, WireReader& r, Outbox& out) {
  auto clock = r.Get<uint64_t>();
  if (!r.done()) r.Fail("trailing bytes");
  clock_[static_cast<size_t>(src)] = std::max(clock_[static_cast<size_t>(src)], clock);
  uint64_t lowest = *std::min_element(clock_.begin(), clock_.end());
  if (lowest > min_clock_) {
    min_clock_ = lowest;
    Advance(out);
  }
}

// The clock advanced: answer the reads it now allows, push fresh subscribed rows (ESSP), and tell
// every process the new clock and which of its updates are in.
std::vector<int> ServerShard::Behind(uint64_t need) const {
  std::vector<int> behind;
  for (int p = 0; p < processes_; ++p) {
    if (clock_[static_cast<size_t>(p)] < need) behind.push_back(p);
  }
  return behind;
}

void ServerShard::Advance(Outbox& out) {
  // Rows read one-sided from now on may carry the new clock (every update below it is in them).
  for (auto& [id, t] : tables_) {
    if (t.window) t.window->PublishClock(min_clock_);
  }
  std::vector<PendingGet> still;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> replies(static_cast<size_t>(processes_));
  for (const auto& g : pending_) {
    if (g.need <= min_clock_)
      replies[static_cast<size_t>(g.src)].emplace_back(g.table, g.row);
    else
      still.push_back(g);
  }
  pending_.swap(still);
  for (auto& entry : tables_) {
    const uint32_t id = entry.first;  // not a structured binding: lambdas cannot capture those in clang 14
    auto& t = entry.second;
    for (auto it = t.waiting.begin(); it != t.waiting.end();) {
      std::erase_if(it->second, [&](const std::pair<int, uint64_t>& w) {
        if (w.second > min_clock_) return false;
        replies[static_cast<size_t>(w.first)].emplace_back(id, it->first);
        return true;
      });
      it = it->second.empty() ? t.waiting.erase(it) : std::next(it);
    }
    if (!t.config.Pushed()) continue;
    t.dirty.ForEach([&](uint64_t row, char) {
      const auto* subs = t.subscribers.Find(row);
      if (!subs) return;
      for (int p = 0; p < processes_; ++p) {
        if ((*subs)[static_cast<size_t>(p) / 64] >> (p % 64) & 1)
          replies[static_cast<size_t>(p)].emplace_back(id, row);
      }
    });
    t.dirty.Clear();
  }
  for (int p = 0; p < processes_; ++p) {
    const auto i = static_cast<size_t>(p);
    if (!replies[i].empty()) ReplyRows(p, replies[i], min_clock_, out);
    WireWriter w;
    w.Put(MsgType::kMinClock);
    w.Put(min_clock_);
    w.Put(applied_[static_cast<size_t>(p)]);
    out.emplace_back(p, w.Take());
  }
}

// One kRows message per at most kMaxReplyBytes of rows, in the order asked: a large read (a
// whole model after a clock) then arrives in pieces a reader can use as they come.
void ServerShard::ReplyRows(int dst, const std::vector<std::pair<uint32_t, uint64_t>>& rows, uint64_t stamp,
                            Outbox& out) {
  constexpr size_t kMaxReplyBytes = size_t{1} << 20;
  size_t i = 0;
  while (i < rows.size()) {
    WireWriter w;
    w.Put(MsgType::kRows);
    w.Put(stamp);
    w.Put(applied_[static_cast<size_t>(dst)]);
    const size_t count_at = w.size();
    w.Put<uint32_t>(0);
    uint32_t count = 0;
    for (; i < rows.size() && (count == 0 || w.size() < kMaxReplyBytes); ++i, ++count) {
      const auto& [table, row] = rows[i];
      Table& t = tables_.at(table);
      w.Put(table);
      w.Put(row);
      RowOf(t, row).Encode(w);
    }
    w.PatchAt(count_at, count);
    out.emplace_back(dst, w.Take());
  }
}

void ServerShard::Subscribe(Table& t, uint64_t row, int src) {
  auto& bits = t.subscribers[row];
  if (bits.empty()) bits.assign((static_cast<size_t>(processes_) + 63) / 64, 0);
  bits[static_cast<size_t>(src) / 64] |= uint64_t{1} << (src % 64);
}

void ServerShard::OnGet(int src, WireReader& r, Outbox& out) {
  auto table = r.Get<uint32_t>();
  auto need = r.Get<uint64_t>();
  bool subscribe = r.Get<uint8_t>() != 0;
  auto count = r.Get<uint32_t>();
  if (r.remaining() != uint64_t{count} * sizeof(uint64_t))
    r.Fail("row count does not match the message size");
  std::vector<uint64_t> rows(count);
  for (auto& row : rows) row = r.Get<uint64_t>();
  auto it = tables_.find(table);
  if (it == tables_.end()) {
    for (uint64_t row : rows)
      out.emplace_back(src, ErrorMessage(table, row, fmt::format("table {} does not exist", table)));
    return;
  }
  Table& t = it->second;
  std::vector<std::pair<uint32_t, uint64_t>> now;
  uint64_t now_stamp = ~uint64_t{0};  // the oldest of the rows answered now
  for (uint64_t row : rows) {
    if (row >= t.config.num_rows || ShardOf(t.config, row, processes_) != rank_) {
      out.emplace_back(
          src,
          ErrorMessage(table, row, fmt::format("row {} is out of range or not on shard {}", row, rank_)));
      continue;
    }
    if (subscribe) Subscribe(t, row, src);
    const uint64_t stamp = t.config.one_update_per_clock ? RowStamp(t, row) : min_clock_;
    if (need <= stamp) {
      now.emplace_back(table, row);
      now_stamp = std::min(now_stamp, stamp);
    } else if (t.config.one_update_per_clock) {
      t.waiting[row].emplace_back(src, need);
    } else {
      pending_.push_back(PendingGet{src, table, row, need});
    }
  }
  if (!now.empty()) ReplyRows(src, now, now_stamp, out);
}

void ServerShard::OnSync(int src, WireReader& r, Outbox& out) {
  if (!r.done()) r.Fail("trailing bytes");
  WireWriter w;
  w.Put(MsgType::kSynced);
  w.Put(applied_[static_cast<size_t>(src)]);
  out.emplace_back(src, w.Take());
}

void ServerShard::OnRead(int src, WireReader& r, Outbox& out) {
  auto request = r.Get<uint64_t>();
  auto table = r.Get<uint32_t>();
  auto count = r.Get<uint32_t>();
  if (r.remaining() != uint64_t{count} * sizeof(uint64_t))
    r.Fail("row count does not match the message size");
  auto it = tables_.find(table);
  std::vector<uint64_t> rows(count);
  for (auto& row : rows) {
    row = r.Get<uint64_t>();
    if (it != tables_.end() &&
        (row >= it->second.config.num_rows || ShardOf(it->second.config, row, processes_) != rank_)) {
      out.emplace_back(
          src, ErrorMessage(table, row,
                            fmt::format("read: row {} is out of range or not on shard {}", row, rank_)));
      return;
    }
  }
  if (it == tables_.end()) {
    out.emplace_back(src, ErrorMessage(table, rows.empty() ? 0 : rows[0],
                                       fmt::format("read: table {} does not exist", table)));
    return;
  }
  WireWriter w;
  w.Put(MsgType::kReadReply);
  w.Put(request);
  w.Put(count);
  for (uint64_t row : rows) {
    w.Put(row);
    RowOf(it->second, row).Encode(w);
  }
  out.emplace_back(src, w.Take());
}

void ServerShard::OnCheckpoint(int src, WireReader& r, Outbox& out) {
  auto clock = r.Get<uint64_t>();
  std::string dir = r.GetString();
  if (!r.done()) r.Fail("trailing bytes");
  // Every process asks after its clock message and updates: with all asks in, the rows are the
  // consistent cut at `clock`.
  int votes = ++checkpoint_votes_[{clock, dir}];
  if (votes < processes_) return;
  checkpoint_votes_.erase({clock, dir});
  std::string error;
  uint64_t written = 0;
  try {
    CheckpointWriter writer(fs_, dir, rank_, clock);
    for (auto& [id, t] : tables_) {
      if (!t.config.checkpointed) continue;
      writer.BeginTable(t.config, t.rows.size());
      t.rows.ForEach([&](uint64_t row, const Row& value) { writer.AddRow(row, value); });
      written += t.rows.size();
    }
    writer.Commit();
  } catch (const std::exception& e) {  // std::filesystem errors too: the file's error goes back
    error = e.what();
  }
  for (int p = 0; p < processes_; ++p) {
    WireWriter w;
    w.Put(MsgType::kCheckpointDone);
    w.Put(clock);
    w.Put(written);
    w.PutString(error);
    out.emplace_back(p, w.Take());
  }
  (void)src;
}

void ServerShard::OnRestore(int src, WireReader& r, Outbox& out) {
  std::string dir = r.GetString();
  if (!r.done()) r.Fail("trailing bytes");
  std::string error;
  uint64_t clock = 0;
  try {
    std::map<uint32_t, TableConfig> configs;
    for (const auto& [id, t] : tables_) configs[id] = t.config;
    for (auto& [id, t] : tables_) t.rows.Clear();
    clock = ReadCheckpoint(dir, configs, [&](uint32_t table, uint64_t row, Row&& value) {
      Table& t = tables_.at(table);
      if (ShardOf(t.config, row, processes_) == rank_) t.rows[row] = std::move(value);
    });
    std::fill(clock_.begin(), clock_.end(), clock);
    min_clock_ = clock;
    for (auto& entry : tables_) {
      RowWindow* window = entry.second.window;  // not a structured binding: clang 14's lambdas
      if (!window) continue;
      window->Reset();
      entry.second.rows.ForEach([&](uint64_t row, const Row& value) { window->Publish(row, value, -1, 0); });
      window->PublishClock(clock);
    }
    pending_.clear();
    for (auto& [id, t] : tables_) {
      t.updated_through.Clear();
      t.waiting.clear();
    }
  } catch (const std::exception& e) {  // std::filesystem errors too: the file's error goes back
    error = e.what();
  }
  WireWriter w;
  w.Put(MsgType::kRestoreDone);
  w.Put(clock);
  w.PutString(error);
  out.emplace_back(src, w.Take());
}

}  // namespace parasol::ps
