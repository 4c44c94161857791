#include "parasol/comm/inprocess_transport.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "parasol/comm/memory_region.h"
#include "parasol/core/error.h"
#include "parasol/core/mutex.h"

namespace parasol::comm {

using TimePoint = Clock::TimePoint;

namespace {

struct SendState {
  bool done = false;
};

struct RecvState {
  int src = 0;
  Tag tag = 0;
  std::byte* buf = nullptr;
  size_t bytes = 0;
  bool done = false;
  ErrorCode error = ErrorCode::kInternal;
  std::string error_message;  // non-empty: the receive failed
};

struct Envelope {
  int src;
  Tag tag;
  const std::byte* data;        // the sender's buffer (rendezvous)
  std::vector<std::byte> copy;  // eager copy
  size_t bytes;
  std::shared_ptr<SendState> send;
  TimePoint visible_at;
  bool held = false;  // delayed, and no waiter has been woken for it since it became visible
};

struct Mailbox {
  std::deque<Envelope> inbox;
  std::vector<std::shared_ptr<RecvState>> posted;  // in the order they were posted
  uint64_t epoch = 0;
  CondVar cv;
  std::optional<std::string> failure;
  int duplicates = 0;
  int registrations = 0;
  int splits = 0;
};

// A message space over some of the world's ranks: local rank i is world rank world[i] (faults and
// stopped ranks are the world's).
struct Comm {
  explicit Comm(std::vector<int> ranks) : boxes(ranks.size()), world(std::move(ranks)) {}
  std::vector<Mailbox> boxes;
  std::vector<int> world;
};

// Tags above kMaxUserTag belong to the transport.
constexpr Tag kSplitTag = kMaxUserTag + 2;

struct RegionEntry {
  explicit RegionEntry(int n) : bases(static_cast<size_t>(n), nullptr), sizes(static_cast<size_t>(n), 0) {}
  std::vector<std::byte*> bases;
  std::vector<size_t> sizes;
  int arrived = 0;
  int closed = 0;
};

struct FaultState {
  MessageFault fault;
  int seen = 0;
};

}  // namespace

struct InProcessWorld::Impl {
  Impl(int n, InProcessOptions o)
      : size(n), options(o), clock(options.env.clock()), killed(static_cast<size_t>(n), false) {
    std::vector<int> all(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) all[static_cast<size_t>(r)] = r;
    comms.push_back(std::make_unique<Comm>(std::move(all)));
    if (clock.driven()) listener = clock.AddListener([this] { TimeMoved(); });
  }
  ~Impl() { clock.RemoveListener(listener); }

  Mutex mu;
  const int size;
  InProcessOptions options;
  Clock& clock;  // the delays' clock: options.env's
  uint64_t listener = 0;
  std::vector<std::unique_ptr<Comm>> comms PARASOL_GUARDED_BY(mu);
  std::map<std::pair<int, int>, int> duplicate_of PARASOL_GUARDED_BY(mu);  // (comm, k-th duplicate) -> comm
  std::map<std::tuple<int, int, int>, int> split_of
      PARASOL_GUARDED_BY(mu);  // (comm, k-th split, color) -> comm
  // (comm, k-th registration) -> entry
  std::map<std::pair<int, int>, std::shared_ptr<RegionEntry>> regions PARASOL_GUARDED_BY(mu);
  std::vector<bool> killed PARASOL_GUARDED_BY(mu);
  std::vector<FaultState> faults PARASOL_GUARDED_BY(mu);
  uint64_t messages_sent PARASOL_GUARDED_BY(mu) = 0;
  int waiting PARASOL_GUARDED_BY(mu) = 0;  // calls blocked in WaitForEvent

  Mailbox& box(int comm, int rank) PARASOL_REQUIRES(mu) {
    return comms[static_cast<size_t>(comm)]->boxes[static_cast<size_t>(rank)];
  }
  // The world rank of `rank` of `comm`.
  int World(int comm, int rank) PARASOL_REQUIRES(mu) {
    return comms[static_cast<size_t>(comm)]->world[static_cast<size_t>(rank)];
  }
  bool Killed(int comm, int rank) PARASOL_REQUIRES(mu) {
    return killed[static_cast<size_t>(World(comm, rank))];
  }
  // World rank `rank` is gone (see KillRank).
  void Kill(int rank) PARASOL_REQUIRES(mu);

  static void Bump(Mailbox& b) {
    ++b.epoch;
    b.cv.NotifyAll();
  }

  // A driven clock moved: delayed messages it reached become visible and their waiters wake, as
  // the waiters of the machine's clock wake at the messages' times.
  void TimeMoved() PARASOL_EXCLUDES(mu) {
    MutexLock lock(mu);
    const TimePoint now = clock.Now();
    for (size_t c = 0; c < comms.size(); ++c) {
      auto& boxes = comms[c]->boxes;
      for (size_t r = 0; r < boxes.size(); ++r) {
        for (auto& e : boxes[r].inbox) {
          if (e.held && e.visible_at <= now) {
            e.held = false;
            Bump(boxes[r]);
          }
        }
        Deliver(static_cast<int>(c), static_cast<int>(r), now);
      }
    }
  }

  void BumpAll() PARASOL_REQUIRES(mu) {
    for (auto& c : comms) {
      for (auto& b : c->boxes) Bump(b);
    }
  }

  // The first fault rule that claims this message, if any.
  const MessageFault* ClaimFault(int src, int dst, Tag tag) PARASOL_REQUIRES(mu) {
    for (auto& fs : faults) {
      const auto& f = fs.fault;
      if (f.src != kAnyRank && f.src != src) continue;
      if (f.dst != kAnyRank && f.dst != dst) continue;
      if ((tag & f.tag_mask) != f.tag_value) continue;
      int index = fs.seen++;
      if (index < f.skip) continue;
      if (f.count >= 0 && index >= f.skip + f.count) continue;
      return &f;
    }
    return nullptr;
  }

  // Matches posted receives of (comm, rank) with visible messages, in MPI order: per (src, tag)
  // the first message goes to the first receive; a delayed message holds back later ones from
  // the same sender and tag.
  void Deliver(int comm, int rank, TimePoint now) PARASOL_REQUIRES(mu) {
    Mailbox& b = box(comm, rank);
    std::set<std::pair<int, Tag>> blocked;
    bool changed = false;
    for (size_t i = 0; i < b.posted.size();) {
      RecvState& r = *b.posted[i];
      auto key = std::make_pair(r.src, r.tag);
      if (blocked.count(key)) {
        ++i;
        continue;
      }
      auto it = std::find_if(b.inbox.begin(), b.inbox.end(),
                             [&](const Envelope& e) { return e.src == r.src && e.tag == r.tag; });
      if (it == b.inbox.end()) {
        if (Killed(comm, r.src)) {
          r.error = ErrorCode::kPeerGone;
          r.error_message = fmt::format("rank {}: peer {} is gone (receive of {} bytes, tag {})", rank, r.src,
                                        r.bytes, r.tag);
          r.done = true;
          b.posted.erase(b.posted.begin() + static_cast<long>(i));
          changed = true;
          continue;
        }
        ++i;
        continue;
      }
      if (it->visible_at > now) {
        blocked.insert(key);
        ++i;
        continue;
      }
      Complete(comm, r, *it, rank);
      b.inbox.erase(it);
      b.posted.erase(b.posted.begin() + static_cast<long>(i));
      changed = true;
    }
    if (changed) Bump(b);
  }

  void Complete(int comm, RecvState& r, Envelope& e, int rank) PARASOL_REQUIRES(mu) {
    if (e.bytes != r.bytes) {
      r.error = ErrorCode::kMismatch;
      r.error_message =
          fmt::format("rank {}: message from peer {} (tag {}) has {} bytes where {} were expected", rank,
                      e.src, e.tag, e.bytes, r.bytes);
    } else if (e.bytes > 0) {
      std::memcpy(r.buf, e.copy.empty() ? e.data : e.copy.data(), e.bytes);
    }
    r.done = true;
    if (!e.send->done) {
      e.send->done = true;
      Bump(box(comm, e.src));
    }
  }
};

namespace {

class InProcessMemoryRegion;

class InProcessTransport : public Transport {
 public:
  InProcessTransport(std::shared_ptr<InProcessWorld::Impl> w, int comm, int rank, int size)
      : w_(std::move(w)), comm_(comm), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view name() const override { return "inprocess"; }

  Request Isend(int peer, Tag tag, const void* data, size_t bytes) override {
    MutexLock lock(w_->mu);
    CheckAlive("send");
    CheckPeer(peer, "send");
    ++w_->messages_sent;
    auto state = std::make_shared<SendState>();
    Request req{Request::Kind::kSend, peer, tag, bytes, 0, state};
    const MessageFault* fault = w_->ClaimFault(w_->World(comm_, rank_), w_->World(comm_, peer), tag);
    if (fault && fault->action == MessageFault::Action::kKillSender) {
      w_->Kill(w_->World(comm_, rank_));
      CheckAlive("send");  // throws: this rank is gone, its message with it
    }
    if (w_->Killed(comm_, peer) || (fault && fault->action == MessageFault::Action::kDrop)) {
      state->done = true;  // it left this rank and was lost on the way
      return req;
    }
    Envelope e{rank_, tag, static_cast<const std::byte*>(data), {}, bytes, state, w_->clock.Now()};
    if (fault) {
      e.visible_at += fault->delay_ms;
      e.held = true;
    }
    if (w_->options.eager) {
      e.copy.assign(e.data, e.data + bytes);
      state->done = true;
    }
    Mailbox& dst = w_->box(comm_, peer);
    dst.inbox.push_back(std::move(e));
    InProcessWorld::Impl::Bump(dst);
    w_->Deliver(comm_, peer, w_->clock.Now());
    return req;
  }

  Request Irecv(int peer, Tag tag, void* data, size_t bytes) override {
    MutexLock lock(w_->mu);
    CheckAlive("receive");
    CheckPeer(peer, "receive");
    auto state = std::make_shared<RecvState>();
    state->src = peer;
    state->tag = tag;
    state->buf = static_cast<std::byte*>(data);
    state->bytes = bytes;
    w_->box(comm_, rank_).posted.push_back(state);
    w_->Deliver(comm_, rank_, w_->clock.Now());
    return Request{Request::Kind::kRecv, peer, tag, bytes, 0, state};
  }

  bool Test(Request& req) override {
    MutexLock lock(w_->mu);
    CheckAlive("test");
    if (req.kind == Request::Kind::kSend) {
      if (!std::static_pointer_cast<SendState>(req.state)->done) return false;
      req.Reset();
      return true;
    }
    if (req.kind != Request::Kind::kRecv) throw InvalidArgumentError("Test: not a transport request");
    w_->Deliver(comm_, rank_, w_->clock.Now());
    auto r = std::static_pointer_cast<RecvState>(req.state);
    if (!r->done) return false;
    req.Reset();
    if (!r->error_message.empty()) {
      if (r->error == ErrorCode::kPeerGone) throw PeerGoneError(r->error_message);
      throw MismatchError(r->error_message);
    }
    return true;
  }

  std::optional<Message> TryReceive(Tag tag) override {
    MutexLock lock(w_->mu);
    CheckAlive("receive");
    Mailbox& b = w_->box(comm_, rank_);
    auto now = w_->clock.Now();
    // The first message with this tag from each sender is the only one of that sender's that may
    // be taken (a delayed one holds back the ones behind it).
    std::set<int> seen;
    for (auto it = b.inbox.begin(); it != b.inbox.end(); ++it) {
      if (it->tag != tag || !seen.insert(it->src).second) continue;
      if (it->visible_at > now) continue;
      Message m;
      m.src = it->src;
      const std::byte* from = it->copy.empty() ? it->data : it->copy.data();
      m.data.assign(from, from + it->bytes);
      if (!it->send->done) {
        it->send->done = true;
        InProcessWorld::Impl::Bump(w_->box(comm_, it->src));
      }
      b.inbox.erase(it);
      return m;
    }
    return std::nullopt;
  }

  void Cancel(Request& req) override {
    MutexLock lock(w_->mu);
    if (req.kind == Request::Kind::kRecv) {
      auto& posted = w_->box(comm_, rank_).posted;
      posted.erase(std::remove(posted.begin(), posted.end(), req.state), posted.end());
    } else if (req.kind == Request::Kind::kSend) {
      // In-process a send can be retracted, so the caller's buffer is free at once.
      auto& inbox = w_->box(comm_, req.peer).inbox;
      auto state = std::static_pointer_cast<SendState>(req.state);
      inbox.erase(
          std::remove_if(inbox.begin(), inbox.end(), [&](const Envelope& e) { return e.send == state; }),
          inbox.end());
    }
    req.Reset();
  }

  uint64_t Epoch() override {
    MutexLock lock(w_->mu);
    return w_->box(comm_, rank_).epoch;
  }

  void WaitForEvent(uint64_t epoch, Deadline until) override {
    MutexLock lock(w_->mu);
    Mailbox& b = w_->box(comm_, rank_);
    // A delayed message becoming visible is an event like an arrival: the caller may have looked
    // (tested its receives, polled) just before, and would otherwise sleep past it to the deadline.
    auto now = w_->clock.Now();
    auto wake = until.time();
    for (auto& e : b.inbox) {
      if (!e.held) continue;
      if (e.visible_at > now) {
        // A driven clock's time is not the machine's: its move wakes this wait (TimeMoved).
        if (!w_->clock.driven()) wake = std::min(wake, e.visible_at);
      } else {
        e.held = false;
        InProcessWorld::Impl::Bump(b);
      }
    }
    if (b.epoch != epoch || wake <= now) return;
    ++w_->waiting;
    while (b.epoch == epoch && b.cv.WaitUntil(w_->mu, wake)) {
    }
    --w_->waiting;
  }

  bool WaitSleeps() const override { return true; }

  std::optional<Tag> ProbeUnexpected(int peer) override {
    MutexLock lock(w_->mu);
    auto now = w_->clock.Now();
    for (const auto& e : w_->box(comm_, rank_).inbox) {
      if (e.src == peer && e.visible_at <= now) return e.tag;
    }
    return std::nullopt;
  }

  void NotifyFailure(const std::string& message) override {
    MutexLock lock(w_->mu);
    for (int p = 0; p < size_; ++p) {
      if (p == rank_ || w_->Killed(comm_, p)) continue;
      Mailbox& b = w_->box(comm_, p);
      if (!b.failure) b.failure = message;
      InProcessWorld::Impl::Bump(b);
    }
  }

  std::optional<std::string> PeerFailure() override {
    MutexLock lock(w_->mu);
    return w_->box(comm_, rank_).failure;
  }

  std::unique_ptr<MemoryRegion> RegisterMemory(void* base, size_t bytes, Deadline deadline) override;

  std::unique_ptr<Transport> Duplicate(Deadline) override {
    MutexLock lock(w_->mu);
    CheckAlive("duplicate");
    auto key = std::make_pair(comm_, w_->box(comm_, rank_).duplicates++);
    auto it = w_->duplicate_of.find(key);
    int id;
    if (it != w_->duplicate_of.end()) {
      id = it->second;
    } else {
      id = static_cast<int>(w_->comms.size());
      w_->comms.push_back(std::make_unique<Comm>(w_->comms[static_cast<size_t>(comm_)]->world));
      w_->duplicate_of[key] = id;
    }
    return std::make_unique<InProcessTransport>(w_, id, rank_, size_);
  }

  std::unique_ptr<Transport> Split(int color, Deadline deadline) override {
    const std::vector<int> colors = ExchangeColors(*this, kSplitTag, color, deadline);
    MutexLock lock(w_->mu);
    CheckAlive("split");
    std::vector<int> members;  // local ranks of this comm with my color
    for (int r = 0; r < size_; ++r) {
      if (colors[static_cast<size_t>(r)] == color) members.push_back(r);
    }
    const int local = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
    Comm& parent = *w_->comms[static_cast<size_t>(comm_)];
    auto key = std::make_tuple(comm_, w_->box(comm_, rank_).splits++, color);
    auto it = w_->split_of.find(key);
    int id;
    if (it != w_->split_of.end()) {
      id = it->second;
    } else {
      std::vector<int> world;
      for (int r : members) world.push_back(parent.world[static_cast<size_t>(r)]);
      id = static_cast<int>(w_->comms.size());
      w_->comms.push_back(std::make_unique<Comm>(std::move(world)));
      w_->split_of[key] = id;
    }
    return std::make_unique<InProcessTransport>(w_, id, local, static_cast<int>(members.size()));
  }

  void CheckAlive(std::string_view op) const PARASOL_REQUIRES(w_->mu) {
    if (w_->Killed(comm_, rank_)) {
      throw PeerGoneError(fmt::format("rank {}: {}: this rank was stopped", rank_, op));
    }
  }
  void CheckPeer(int peer, std::string_view op) const {
    if (peer < 0 || peer >= size_) {
      throw InvalidArgumentError(
          fmt::format("rank {}: {}: no rank {} (job has {} ranks)", rank_, op, peer, size_));
    }
  }

  std::shared_ptr<InProcessWorld::Impl> w_;
  const int comm_;
  const int rank_;
  const int size_;  // of this comm
};

class InProcessMemoryRegion : public MemoryRegion {
 public:
  InProcessMemoryRegion(InProcessTransport& t, std::shared_ptr<RegionEntry> entry, int rank)
      : MemoryRegion(entry->bases[static_cast<size_t>(rank)], entry->sizes[static_cast<size_t>(rank)],
                     entry->sizes),
        w_(t.w_),
        comm_(t.comm_),
        rank_(rank),
        size_(t.size_),
        entry_(std::move(entry)) {}

  Request Put(int peer, size_t offset, const void* src, size_t bytes) override {
    CheckRange("put", rank_, peer, offset, bytes);
    MutexLock lock(w_->mu);
    CheckPeerAlive(peer, "put");
    if (bytes) std::memcpy(entry_->bases[static_cast<size_t>(peer)] + offset, src, bytes);
    return Request{Request::Kind::kPut, peer, 0, bytes, 0, nullptr};
  }

  Request Get(int peer, size_t offset, void* dst, size_t bytes) override {
    CheckRange("get", rank_, peer, offset, bytes);
    MutexLock lock(w_->mu);
    CheckPeerAlive(peer, "get");
    if (bytes) std::memcpy(dst, entry_->bases[static_cast<size_t>(peer)] + offset, bytes);
    return Request{Request::Kind::kGet, peer, 0, bytes, 0, nullptr};
  }

  void GetFlushed(int peer, size_t offset, void* dst, size_t bytes) override {
    Get(peer, offset, dst, bytes);
  }

  bool Test(Request& req) override {
    req.Reset();
    return true;
  }

  void Flush(Deadline) override {}

  void Close(Deadline deadline) override {
    MutexLock lock(w_->mu);
    if (closed_) return;
    closed_ = true;
    ++entry_->closed;
    w_->BumpAll();
    Mailbox& b = w_->box(comm_, rank_);
    while (entry_->closed != size_ && b.cv.WaitUntil(w_->mu, deadline.time())) {
    }
    if (entry_->closed != size_) {
      throw TimeoutError(
          fmt::format("rank {}: close memory region: deadline passed with {} of {} ranks closed", rank_,
                      entry_->closed, size_));
    }
  }

 private:
  void CheckPeerAlive(int peer, std::string_view op) PARASOL_REQUIRES(w_->mu) {
    if (w_->Killed(comm_, peer)) {
      throw PeerGoneError(fmt::format("rank {}: {}: peer {} is gone", rank_, op, peer));
    }
  }

  std::shared_ptr<InProcessWorld::Impl> w_;
  int comm_;
  int rank_;
  int size_;
  std::shared_ptr<RegionEntry> entry_;
  bool closed_ = false;
};

std::unique_ptr<MemoryRegion> InProcessTransport::RegisterMemory(void* base, size_t bytes,
                                                                 Deadline deadline) {
  MutexLock lock(w_->mu);
  CheckAlive("register memory");
  auto key = std::make_pair(comm_, w_->box(comm_, rank_).registrations++);
  auto& slot = w_->regions[key];
  if (!slot) slot = std::make_shared<RegionEntry>(size_);
  std::shared_ptr<RegionEntry> entry = slot;
  entry->bases[static_cast<size_t>(rank_)] = static_cast<std::byte*>(base);
  entry->sizes[static_cast<size_t>(rank_)] = bytes;
  ++entry->arrived;
  w_->BumpAll();
  Mailbox& b = w_->box(comm_, rank_);
  while (entry->arrived != size_ && b.cv.WaitUntil(w_->mu, deadline.time())) {
  }
  if (entry->arrived != size_) {
    throw TimeoutError(fmt::format("rank {}: register memory: deadline passed with {} of {} ranks registered",
                                   rank_, entry->arrived, size_));
  }
  lock.Unlock();
  return std::make_unique<InProcessMemoryRegion>(*this, entry, rank_);
}

}  // namespace

InProcessWorld::InProcessWorld(int size, InProcessOptions options)
    : impl_(std::make_shared<Impl>(size, options)) {
  if (size < 1) throw InvalidArgumentError(fmt::format("in-process world of {} ranks", size));
}

InProcessWorld::~InProcessWorld() = default;

int InProcessWorld::size() const { return impl_->size; }

std::unique_ptr<Transport> InProcessWorld::CreateTransport(int rank) {
  if (rank < 0 || rank >= impl_->size) {
    throw InvalidArgumentError(fmt::format("no rank {} in a world of {}", rank, impl_->size));
  }
  return std::make_unique<InProcessTransport>(impl_, 0, rank, impl_->size);
}

void InProcessWorld::AddFault(const MessageFault& fault) {
  MutexLock lock(impl_->mu);
  impl_->faults.push_back(FaultState{fault, 0});
}

void InProcessWorld::KillRank(int rank) {
  MutexLock lock(impl_->mu);
  impl_->Kill(rank);
}

void InProcessWorld::Impl::Kill(int rank) {
  killed[static_cast<size_t>(rank)] = true;
  for (size_t c = 0; c < comms.size(); ++c) {
    const std::vector<int>& world = comms[c]->world;
    const auto local = std::find(world.begin(), world.end(), rank);
    if (local == world.end()) continue;  // not a rank of this comm
    Mailbox& dead = box(static_cast<int>(c), static_cast<int>(local - world.begin()));
    for (auto& e : dead.inbox) {
      if (!e.send->done) {
        e.send->done = true;
        Bump(box(static_cast<int>(c), e.src));
      }
    }
    dead.inbox.clear();
    for (int r = 0; r < static_cast<int>(world.size()); ++r) Deliver(static_cast<int>(c), r, clock.Now());
  }
  BumpAll();
}

int InProcessWorld::waiting() const {
  MutexLock lock(impl_->mu);
  return impl_->waiting;
}

uint64_t InProcessWorld::messages_sent() const {
  MutexLock lock(impl_->mu);
  return impl_->messages_sent;
}

}  // namespace parasol::comm
