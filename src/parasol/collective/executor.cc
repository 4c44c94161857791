#include "parasol/collective/executor.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::collective {

namespace {
constexpr uint32_t kSignatureMask = (1u << kSignatureBits) - 1;
constexpr uint32_t kIndexShift = kSignatureBits;
constexpr uint32_t kChannelShift = kIndexShift + 6;
constexpr uint32_t kSequenceShift = kChannelShift + 5;
static_assert(kSequenceShift + 5 <= 30, "collective tags must stay within comm::kMaxUserTag");
constexpr auto kProbeInterval = std::chrono::milliseconds(1);
// Polling transports: do the slower checks (peer failures, clock, probes) every this many idle
// rounds, so a small message's round trip is not spent on them.
constexpr unsigned kPollChecksEvery = 16;

// Transport errors name the rank first ("rank 3: ..."); put the operation after it.
std::string WithContext(int rank, std::string_view what, std::string_view message) {
  std::string prefix = fmt::format("rank {}: ", rank);
  if (message.substr(0, prefix.size()) == prefix) message.remove_prefix(prefix.size());
  return fmt::format("rank {}: {}: {}", rank, what, message);
}
}  // namespace

comm::Tag MakeTag(uint64_t sequence, uint32_t channel, uint32_t index, uint64_t signature) {
  return static_cast<comm::Tag>(((sequence & 0x1f) << kSequenceShift) | ((channel & 0x1f) << kChannelShift) |
                                ((index & 0x3f) << kIndexShift) | (signature & kSignatureMask));
}
uint32_t TagSequence(comm::Tag tag) { return (tag >> kSequenceShift) & 0x1f; }
uint32_t TagSignature(comm::Tag tag) { return tag & kSignatureMask; }

std::byte* Executor::Ptr(const ExecuteArgs& a, const Region& r) {
  std::byte* base = nullptr;
  switch (r.buffer) {
    case BufferId::kData: base = static_cast<std::byte*>(a.data); break;
    case BufferId::kScratch: base = scratch_.data(); break;
    // Sends and copies only read the input.
    case BufferId::kInput: base = const_cast<std::byte*>(static_cast<const std::byte*>(a.input)); break;
  }
  return base + r.offset * a.elem_size;
}

void Executor::Run(comm::Transport& t, const ExecuteArgs& a) {
  const Program& p = *a.program;
  if (p.ops.empty()) return;
  size_t need = p.scratch_count * a.elem_size;
  if (scratch_.size() < need) scratch_.resize(need);
  state_.Reset(p);
  inflight_ops_.clear();
  inflight_reqs_.clear();
  idle_ = 0;
  last_probe_ = Deadline::Clock::now();
  try {
    Loop(t, a);
  } catch (const Error& e) {
    for (auto& r : inflight_reqs_) t.Cancel(r);
    inflight_ops_.clear();
    inflight_reqs_.clear();
    if (e.code() == ErrorCode::kAborted) throw;
    // Errors raised by the transport lack the operation; errors raised here have it.
    std::string message = !a.what.empty() && std::string_view(e.what()).find(a.what) != std::string_view::npos
                              ? std::string(e.what())
                              : WithContext(t.rank(), a.what, e.what());
    t.NotifyFailure(message);
    ThrowError(e.code(), message);
  }
}

void Executor::Loop(comm::Transport& t, const ExecuteArgs& a) {
  auto apply = [&](uint32_t op) {
    const Op& o = a.program->ops[op];
    if (o.reduce_from_input) {
      Region in{BufferId::kInput, o.region.offset, o.region.count};
      a.reduce3(Ptr(a, o.region), Ptr(a, in), Ptr(a, o.aux), o.region.count);
    } else {
      a.reduce(Ptr(a, o.region), Ptr(a, o.aux), o.region.count);
    }
  };
  while (!state_.done()) {
    while (state_.HasReady()) Issue(t, a, state_.PopReady());
    uint64_t epoch = t.Epoch();
    done_.clear();
    t.TestSome(inflight_reqs_, done_);
    // Remove completed entries back to front so swapping in the last entry keeps indices valid.
    std::sort(done_.begin(), done_.end(), std::greater<>());
    for (size_t i : done_) {
      uint32_t op = inflight_ops_[i];
      inflight_ops_[i] = inflight_ops_.back();
      inflight_reqs_[i] = std::move(inflight_reqs_.back());
      inflight_ops_.pop_back();
      inflight_reqs_.pop_back();
      state_.TransferDone(op, apply);
    }
    if (!done_.empty() || state_.HasReady() || state_.done()) continue;
    Idle(t, a, epoch);
  }
}

void Executor::Issue(comm::Transport& t, const ExecuteArgs& a, uint32_t op) {
  const Op& o = a.program->ops[op];
  size_t bytes = o.region.count * a.elem_size;
  comm::Tag tag = MakeTag(a.sequence, o.channel, o.stream_pos, a.signature);
  switch (o.kind) {
    case OpKind::kSend:
      inflight_reqs_.push_back(t.Isend(o.peer, tag, Ptr(a, o.region), bytes));
      inflight_ops_.push_back(op);
      break;
    case OpKind::kRecv:
      inflight_reqs_.push_back(t.Irecv(o.peer, tag, Ptr(a, o.region), bytes));
      inflight_ops_.push_back(op);
      break;
    case OpKind::kRecvReduce:
      inflight_reqs_.push_back(t.Irecv(o.peer, tag, Ptr(a, o.aux), bytes));
      inflight_ops_.push_back(op);
      break;
    case OpKind::kCopy:
      std::memcpy(Ptr(a, o.region), Ptr(a, o.aux), bytes);
      state_.MarkIssued(op);
      state_.TransferDone(op, [](uint32_t) {});
      return;
  }
  state_.MarkIssued(op);
}

void Executor::Idle(comm::Transport& t, const ExecuteArgs& a, uint64_t epoch) {
  if (t.WaitSleeps() || ++idle_ % kPollChecksEvery == 0) {
    if (auto failure = t.PeerFailure()) {
      throw AbortedError(fmt::format("rank {}: {}: aborted because {}", t.rank(), a.what, *failure));
    }
    auto now = Deadline::Clock::now();
    if (a.deadline.ExpiredAt(now)) ThrowTimeout(t, a);
    // A sleeping transport wakes only on events, so probe every time it goes idle.
    if (t.WaitSleeps() || now - last_probe_ >= kProbeInterval) {
      ProbeMismatch(t, a);
      last_probe_ = now;
    }
  }
  t.WaitForEvent(epoch, a.deadline);
}

void Executor::ThrowTimeout(comm::Transport& t, const ExecuteArgs& a) {
  // Name the earliest step still waiting, preferring a receive: that peer is the one missing.
  size_t best = inflight_reqs_.size();
  for (size_t i = 0; i < inflight_reqs_.size(); ++i) {
    const auto& r = inflight_reqs_[i];
    bool is_recv = r.kind == comm::Request::Kind::kRecv;
    bool better = best == inflight_reqs_.size() ||
                  (is_recv && inflight_reqs_[best].kind != comm::Request::Kind::kRecv) ||
                  (r.kind == inflight_reqs_[best].kind && inflight_ops_[i] < inflight_ops_[best]);
    if (better) best = i;
  }
  if (best == inflight_reqs_.size()) {
    throw InternalError(WithContext(t.rank(), a.what, "schedule stuck with nothing in flight"));
  }
  const comm::Request& r = inflight_reqs_[best];
  throw TimeoutError(fmt::format(
      "rank {}: {}: deadline passed after {} ms waiting for peer {} ({} of {} bytes, step {} of {})",
      t.rank(), a.what, a.timeout_ms.count(), r.peer, comm::RequestKindName(r.kind), r.bytes,
      inflight_ops_[best] + 1, a.program->ops.size()));
}

void Executor::ProbeMismatch(comm::Transport& t, const ExecuteArgs& a) {
  uint32_t seq = static_cast<uint32_t>(a.sequence & 0x1f);
  uint32_t sig = static_cast<uint32_t>(a.signature & kSignatureMask);
  for (const auto& r : inflight_reqs_) {
    if (r.kind != comm::Request::Kind::kRecv) continue;
    auto tag = t.ProbeUnexpected(r.peer);
    // Tags above kMaxUserTag are the transport's own (a split's or a duplicate's handshake): read as
    // a collective's they would name sequence 0 and a signature of their low bits.
    if (tag && *tag <= comm::kMaxUserTag && TagSequence(*tag) == seq && TagSignature(*tag) != sig) {
      throw MismatchError(
          fmt::format("rank {}: {}: peer {} called this collective with other arguments or another "
                      "collective (count, type, op, root or algorithm differ)",
                      t.rank(), a.what, r.peer));
    }
  }
}

}  // namespace parasol::collective
