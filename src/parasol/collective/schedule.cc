#include "parasol/collective/schedule.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::collective {

// Tracks, per element range of a buffer, the last op that wrote it and the ops that read it
// since, so each new op can be given exactly the dependencies it needs.
struct ProgramBuilder::Tracker {
  struct Segment {
    uint64_t end;
    int64_t writer = -1;
    std::vector<uint32_t> readers;
    bool defined = true;  // holds a value (out of place, data starts undefined)
  };
  using Map = std::map<uint64_t, Segment>;

  explicit Tracker(bool data_defined) {
    for (auto& m : buffers) m.emplace(0, Segment{UINT64_MAX, -1, {}, true});
    buffers[static_cast<size_t>(BufferId::kData)].begin()->second.defined = data_defined;
  }

  // The undefined sub-ranges of data region r.
  std::vector<Region> Undefined(Region r) {
    Map& m = buffers[static_cast<size_t>(BufferId::kData)];
    Split(m, r.offset);
    Split(m, r.offset + r.count);
    std::vector<Region> out;
    for (auto it = m.find(r.offset); it != m.end() && it->first < r.offset + r.count; ++it) {
      if (it->second.defined) continue;
      uint64_t end = std::min(it->second.end, r.offset + r.count);
      if (!out.empty() && out.back().offset + out.back().count == it->first) {
        out.back().count = end - out.back().offset;
      } else {
        out.push_back(Region{BufferId::kData, it->first, end - it->first});
      }
    }
    return out;
  }

  void Define(Region r) {
    Map& m = buffers[static_cast<size_t>(BufferId::kData)];
    Split(m, r.offset);
    Split(m, r.offset + r.count);
    for (auto it = m.find(r.offset); it != m.end() && it->first < r.offset + r.count; ++it)
      it->second.defined = true;
  }

  // Splits the segment containing `at` so that a segment starts there.
  static void Split(Map& m, uint64_t at) {
    auto it = m.upper_bound(at);
    --it;
    if (it->first == at) return;
    Segment right = it->second;
    it->second.end = at;
    m.emplace(at, std::move(right));
  }

  void Access(Region r, bool write, uint32_t op, std::vector<uint32_t>& deps) {
    Map& m = buffers[static_cast<size_t>(r.buffer)];
    Split(m, r.offset);
    Split(m, r.offset + r.count);
    for (auto it = m.find(r.offset); it != m.end() && it->first < r.offset + r.count; ++it) {
      Segment& s = it->second;
      if (s.writer >= 0) deps.push_back(static_cast<uint32_t>(s.writer));
      if (write) {
        deps.insert(deps.end(), s.readers.begin(), s.readers.end());
        s.writer = op;
        s.readers.clear();
      } else {
        s.readers.push_back(op);
      }
    }
  }

  std::map<uint64_t, Segment> buffers[3];
  // Scratch slots: per (channel, peer) ring, which op used each slot last and the largest count
  // it held. Rings per peer, so receives from one peer never wait for staging space that
  // receives from another hold (which can deadlock two neighbours waiting on each other).
  struct Slot {
    int64_t last_user = -1;
    uint64_t max_count = 0;
  };
  struct Ring {
    std::vector<Slot> slots = std::vector<Slot>(kScratchSlotsPerChannel);
    uint32_t next = 0;
    uint64_t base = 0;  // laid out by Finish
  };
  std::map<std::pair<int, int>, Ring> rings;  // (channel, peer)
};

ProgramBuilder::ProgramBuilder(int rank, int nranks) : ProgramBuilder(rank, nranks, false, 0) {}

ProgramBuilder::ProgramBuilder(int rank, int nranks, bool from_input, uint64_t data_count)
    : rank_(rank),
      nranks_(nranks),
      from_input_(from_input),
      data_count_(data_count),
      tracker_(std::make_unique<Tracker>(!from_input)) {
  program_.rank = rank;
  program_.nranks = nranks;
}

bool ProgramBuilder::DefineFromInput(Region r, bool* none_written) {
  *none_written = false;
  if (!from_input_ || r.buffer != BufferId::kData) return true;
  auto undefined = tracker_->Undefined(r);
  if (undefined.size() == 1 && undefined[0].count == r.count) {
    *none_written = true;
    return false;
  }
  for (const Region& u : undefined) Copy(u, Region{BufferId::kInput, u.offset, u.count});
  return true;
}

ProgramBuilder::~ProgramBuilder() = default;
ProgramBuilder::ProgramBuilder(ProgramBuilder&&) noexcept = default;
ProgramBuilder& ProgramBuilder::operator=(ProgramBuilder&&) noexcept = default;

int64_t ProgramBuilder::Add(Op op, std::vector<uint32_t> issue_deps, std::vector<uint32_t> apply_deps) {
  auto dedupe = [](std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  dedupe(issue_deps);
  dedupe(apply_deps);
  program_.ops.push_back(op);
  issue_deps_.push_back(std::move(issue_deps));
  apply_deps_.push_back(std::move(apply_deps));
  return static_cast<int64_t>(program_.ops.size() - 1);
}

int64_t ProgramBuilder::Send(int peer, Region region, int channel) {
  assert(peer >= 0 && peer < nranks_ && peer != rank_ && channel < kMaxChannels);
  if (region.count == 0) return -1;
  bool untouched = false;
  DefineFromInput(region, &untouched);
  if (untouched) region.buffer = BufferId::kInput;  // still the input's values: send those
  auto id = static_cast<uint32_t>(program_.ops.size());
  std::vector<uint32_t> deps;
  tracker_->Access(region, /*write=*/false, id, deps);
  return Add(Op{OpKind::kSend, static_cast<uint8_t>(channel), 0, false, peer, region, {}}, std::move(deps),
             {});
}

int64_t ProgramBuilder::Recv(int peer, Region region, int channel) {
  assert(peer >= 0 && peer < nranks_ && peer != rank_ && channel < kMaxChannels);
  assert(region.buffer == BufferId::kData);
  if (region.count == 0) return -1;
  auto id = static_cast<uint32_t>(program_.ops.size());
  std::vector<uint32_t> deps;
  tracker_->Access(region, /*write=*/true, id, deps);
  tracker_->Define(region);
  return Add(Op{OpKind::kRecv, static_cast<uint8_t>(channel), 0, false, peer, region, {}}, std::move(deps),
             {});
}

int64_t ProgramBuilder::RecvReduce(int peer, Region region, int channel) {
  assert(peer >= 0 && peer < nranks_ && peer != rank_ && channel < kMaxChannels);
  assert(region.buffer == BufferId::kData);
  if (region.count == 0) return -1;
  bool from_input = false;
  DefineFromInput(region, &from_input);
  tracker_->Define(region);
  auto id = static_cast<uint32_t>(program_.ops.size());
  // The receive may start once its scratch slot is free; the reduction waits for the region.
  auto& ring = tracker_->rings[{channel, peer}];
  uint32_t slot = ring.next++ % kScratchSlotsPerChannel;
  std::vector<uint32_t> issue;
  if (ring.slots[slot].last_user >= 0) issue.push_back(static_cast<uint32_t>(ring.slots[slot].last_user));
  ring.slots[slot].last_user = id;
  ring.slots[slot].max_count = std::max(ring.slots[slot].max_count, region.count);
  std::vector<uint32_t> apply;
  tracker_->Access(region, /*write=*/true, id, apply);
  // aux.offset holds the slot until Finish lays scratch out.
  Region aux{BufferId::kScratch, slot, region.count};
  return Add(Op{OpKind::kRecvReduce, static_cast<uint8_t>(channel), 0, from_input, peer, region, aux},
             std::move(issue), std::move(apply));
}

int64_t ProgramBuilder::Copy(Region dst, Region src) {
  assert(dst.count == src.count && dst.buffer == BufferId::kData);
  if (dst.count == 0) return -1;
  bool untouched = false;
  DefineFromInput(src, &untouched);
  if (untouched) src.buffer = BufferId::kInput;
  auto id = static_cast<uint32_t>(program_.ops.size());
  std::vector<uint32_t> deps;
  tracker_->Access(src, /*write=*/false, id, deps);
  tracker_->Access(dst, /*write=*/true, id, deps);
  tracker_->Define(dst);
  return Add(Op{OpKind::kCopy, 0, 0, false, -1, dst, src}, std::move(deps), {});
}

namespace {

// CSR successor lists from per-op predecessor lists.
void BuildSuccessors(size_t n, const std::vector<std::vector<uint32_t>>& preds, std::vector<uint32_t>& begin,
                     std::vector<uint32_t>& succ) {
  begin.assign(n + 1, 0);
  for (const auto& p : preds) {
    for (uint32_t d : p) ++begin[d + 1];
  }
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  succ.assign(begin[n], 0);
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t d : preds[i]) succ[fill[d]++] = static_cast<uint32_t>(i);
  }
}

}  // namespace

Program ProgramBuilder::Finish() && {
  // Out of place, what this rank never wrote still has the input's values.
  if (from_input_ && data_count_ > 0) {
    for (const Region& u : tracker_->Undefined(Region{BufferId::kData, 0, data_count_})) {
      Copy(u, Region{BufferId::kInput, u.offset, u.count});
    }
  }
  Program& p = program_;
  const size_t n = p.ops.size();
  // Lay the rings' slots out one after another.
  uint64_t scratch = 0;
  std::vector<std::vector<uint64_t>> slot_offset;
  for (auto& [key, ring] : tracker_->rings) {
    ring.base = slot_offset.size();
    slot_offset.emplace_back();
    for (const auto& slot : ring.slots) {
      slot_offset.back().push_back(scratch);
      scratch += slot.max_count;
    }
  }
  p.scratch_count = scratch;
  for (auto& op : p.ops) {
    if (op.kind != OpKind::kRecvReduce) continue;
    const auto& ring = tracker_->rings.at({op.channel, op.peer});
    op.aux.offset = slot_offset[ring.base][op.aux.offset];
  }
  // Flatten dependencies.
  p.deps.clear();
  for (size_t i = 0; i < n; ++i) {
    p.ops[i].dep_begin = static_cast<uint32_t>(p.deps.size());
    p.deps.insert(p.deps.end(), issue_deps_[i].begin(), issue_deps_[i].end());
    p.ops[i].dep_apply = static_cast<uint32_t>(p.deps.size());
    p.deps.insert(p.deps.end(), apply_deps_[i].begin(), apply_deps_[i].end());
    p.ops[i].dep_end = static_cast<uint32_t>(p.deps.size());
  }
  // Streams: (peer, channel, direction).
  p.queue_prev.assign(n, -1);
  p.queue_next.assign(n, -1);
  std::map<std::tuple<int, int, bool>, int32_t> last;
  for (size_t i = 0; i < n; ++i) {
    Op& op = p.ops[i];
    if (op.kind == OpKind::kCopy) continue;
    auto key = std::make_tuple(op.peer, static_cast<int>(op.channel), op.kind == OpKind::kSend);
    auto it = last.find(key);
    if (it != last.end()) {
      p.queue_prev[i] = it->second;
      p.queue_next[static_cast<size_t>(it->second)] = static_cast<int32_t>(i);
      op.stream_pos = static_cast<uint16_t>(p.ops[static_cast<size_t>(it->second)].stream_pos + 1);
    }
    last[key] = static_cast<int32_t>(i);
  }
  BuildSuccessors(n, issue_deps_, p.issue_succ_begin, p.issue_succ);
  BuildSuccessors(n, apply_deps_, p.apply_succ_begin, p.apply_succ);
  return std::move(program_);
}

uint64_t Program::SentBytes(size_t elem_size) const {
  uint64_t total = 0;
  for (const auto& op : ops) {
    if (op.kind == OpKind::kSend) total += op.region.count * elem_size;
  }
  return total;
}

std::string Program::Describe() const {
  static const char* kKinds[] = {"send", "recv", "recv-reduce", "copy"};
  static const char* kBufs[] = {"data", "scratch", "input"};
  std::string out;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    out +=
        fmt::format("{:4} {:11} peer {:3} ch {:2} {}[{}, +{})", i, kKinds[static_cast<int>(op.kind)], op.peer,
                    op.channel, kBufs[static_cast<int>(op.region.buffer)], op.region.offset, op.region.count);
    out += " deps";
    for (uint32_t d = op.dep_begin; d < op.dep_end; ++d) {
      out += fmt::format("{}{}", d == op.dep_apply ? " |" : " ", deps[d]);
    }
    out += "\n";
  }
  return out;
}

std::vector<uint64_t> BalancedOffsets(uint64_t count, int parts) {
  std::vector<uint64_t> off(static_cast<size_t>(parts) + 1, 0);
  uint64_t base = count / static_cast<uint64_t>(parts);
  uint64_t extra = count % static_cast<uint64_t>(parts);
  for (int i = 0; i < parts; ++i) {
    off[static_cast<size_t>(i) + 1] =
        off[static_cast<size_t>(i)] + base + (static_cast<uint64_t>(i) < extra ? 1 : 0);
  }
  return off;
}

std::vector<uint64_t> WeightedOffsets(uint64_t count, const std::vector<double>& weights) {
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (!(total > 0)) throw InvalidArgumentError("WeightedOffsets: weights sum to zero");
  std::vector<uint64_t> off(weights.size() + 1, 0);
  double acc = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    off[i + 1] =
        i + 1 == weights.size() ? count : static_cast<uint64_t>(static_cast<double>(count) * acc / total);
    off[i + 1] = std::max(off[i + 1], off[i]);
  }
  return off;
}

}  // namespace parasol::collective
