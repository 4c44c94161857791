#include "parasol/collective/simulator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "parasol/collective/program_state.h"
#include "parasol/core/error.h"

namespace parasol::collective {

namespace {

// An event is an op's transfer ending at a rank (rank >= 0), or a flow's head message leaving
// the network interface (rank < 0, op = flow id, version guards against stale rescheduling).
struct Event {
  double t;
  uint64_t seq;
  int rank;
  uint32_t op;
  int32_t payload;
  uint64_t version;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Stream {  // messages from one rank to another on one channel, as the receiver sees them
  std::deque<std::pair<double, int32_t>> arrived;  // (arrival time, payload)
  std::deque<std::pair<uint32_t, double>> posted;  // (receive op, post time)
};

struct Message {
  int rank;  // sender
  uint32_t op;
  double bytes;
  int32_t payload;
};

// One (src, dst, channel) flow: its messages leave one after another at the rate its links give.
struct Flow {
  int src = 0, dst = 0, channel = 0;
  std::vector<uint32_t> path;
  double latency = 0;
  std::deque<Message> queue;
  bool busy = false;
  Message head{};
  double remaining = 0;  // bytes of the head still to send
  double rate = 0;       // bytes/s
  double last = 0;       // time `remaining` was last brought up to date
  uint64_t version = 0;
};

class Simulation {
 public:
  Simulation(const Topology& topo, const std::vector<Program>& programs, const SimulationOptions& o,
             const SimulationData* data)
      : topo_(topo),
        programs_(programs),
        o_(o),
        data_(data),
        states_(programs.size()),
        link_flows_(topo.num_link_ids()),
        link_busy_(topo.num_link_ids(), 0.0) {
    if (data_) {
      scratch_.resize(programs.size());
      for (size_t r = 0; r < programs.size(); ++r)
        scratch_[r].resize(programs[r].scratch_count * o.elem_size);
    }
  }

  SimulationResult Run() {
    const int n = static_cast<int>(programs_.size());
    result_.rank_done_s.assign(programs_.size(), 0.0);
    for (int r = 0; r < n; ++r) {
      states_[static_cast<size_t>(r)].Reset(programs_[static_cast<size_t>(r)]);
      IssueReady(r, 0.0);
    }
    double now = 0;
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      if (e.rank < 0) {
        if (e.version == flows_[e.op].version) HeadLeft(e.op, e.t);
        continue;
      }
      now = e.t;
      Deliver(e);
      states_[static_cast<size_t>(e.rank)].TransferDone(e.op, [&](uint32_t op) { Apply(e.rank, op); });
      RecordChannel(programs_[static_cast<size_t>(e.rank)].ops[e.op].channel, now);
      if (o_.on_complete) o_.on_complete(e.rank, e.op, now);
      result_.rank_done_s[static_cast<size_t>(e.rank)] = now;
      IssueReady(e.rank, now);
    }
    for (int r = 0; r < n; ++r) {
      const ProgramState& st = states_[static_cast<size_t>(r)];
      if (!st.done()) {
        throw InternalError(fmt::format("simulation stuck: rank {} completed {} of {} steps", r,
                                        st.completed(), programs_[static_cast<size_t>(r)].ops.size()));
      }
    }
    result_.time_s = now;
    for (size_t l = 0; l < link_busy_.size(); ++l) {
      result_.max_link_busy_s = std::max(result_.max_link_busy_s, link_busy_[l]);
    }
    return result_;
  }

 private:
  std::byte* Ptr(int rank, const Region& r) {
    std::byte* base = nullptr;
    switch (r.buffer) {
      case BufferId::kData: base = (*data_->data)[static_cast<size_t>(rank)].data(); break;
      case BufferId::kScratch: base = scratch_[static_cast<size_t>(rank)].data(); break;
      case BufferId::kInput:
        base = const_cast<std::byte*>((*data_->input)[static_cast<size_t>(rank)].data());
        break;
    }
    return base + r.offset * o_.elem_size;
  }

  void Push(double t, int rank, uint32_t op, int32_t payload = -1, uint64_t version = 0) {
    events_.push(Event{t, seq_++, rank, op, payload, version});
  }

  static uint64_t Key(size_t n, int src, int dst, int channel) {
    return (static_cast<uint64_t>(src) * n + static_cast<uint64_t>(dst)) << 8 |
           static_cast<uint64_t>(channel);
  }

  void IssueReady(int rank, double now) {
    ProgramState& st = states_[static_cast<size_t>(rank)];
    const Program& p = programs_[static_cast<size_t>(rank)];
    while (st.HasReady()) {
      uint32_t op = st.PopReady();
      const Op& o = p.ops[op];
      st.MarkIssued(op);
      switch (o.kind) {
        case OpKind::kSend: Send(rank, op, o, now); break;
        case OpKind::kRecv:
        case OpKind::kRecvReduce: {
          Stream& s = streams_[Key(programs_.size(), o.peer, rank, o.channel)];
          s.posted.emplace_back(op, now);
          Match(s, rank);
          break;
        }
        case OpKind::kCopy:
          if (data_) std::memcpy(Ptr(rank, o.region), Ptr(rank, o.aux), o.region.count * o_.elem_size);
          Push(now, rank, op);
          break;
      }
    }
  }

  uint32_t FlowOf(int src, int dst, int channel) {
    auto [it, added] =
        flow_ids_.emplace(Key(programs_.size(), src, dst, channel), static_cast<uint32_t>(flows_.size()));
    if (added) {
      Flow f;
      f.src = src;
      f.dst = dst;
      f.channel = channel;
      f.path = topo_.Route(src, dst);
      for (uint32_t l : f.path) f.latency += topo_.link(l).latency_s;
      flows_.push_back(std::move(f));
    }
    return it->second;
  }

  void Send(int rank, uint32_t op, const Op& o, double now) {
    double bytes = static_cast<double>(o.region.count * o_.elem_size);
    ++result_.messages;
    result_.bytes_sent += o.region.count * o_.elem_size;
    int32_t payload = -1;
    if (data_) {
      payload = static_cast<int32_t>(payloads_.size());
      const std::byte* src = Ptr(rank, o.region);
      payloads_.emplace_back(src, src + o.region.count * o_.elem_size);
    }
    uint32_t id = FlowOf(rank, o.peer, o.channel);
    Flow& f = flows_[id];
    for (uint32_t l : f.path) link_busy_[l] += bytes / topo_.link(l).bytes_per_s;
    f.queue.push_back(Message{rank, op, bytes, payload});
    if (!f.busy) StartHead(id, now);
  }

  void StartHead(uint32_t id, double now) {
    Flow& f = flows_[id];
    f.head = f.queue.front();
    f.queue.pop_front();
    f.busy = true;
    f.remaining = f.head.bytes;
    f.rate = 0;
    f.last = now;
    for (uint32_t l : f.path) link_flows_[l].push_back(id);
    Rerate(f.path, now);
    if (f.path.empty()) Reschedule(id, now);  // to itself: no links
  }

  // The head message has left: the send completes now and the data arrives one latency later.
  void HeadLeft(uint32_t id, double now) {
    Flow& f = flows_[id];
    f.busy = false;
    for (uint32_t l : f.path) {
      auto& v = link_flows_[l];
      v.erase(std::find(v.begin(), v.end(), id));
    }
    Message m = f.head;
    Push(now, m.rank, m.op);
    Stream& s = streams_[Key(programs_.size(), f.src, f.dst, f.channel)];
    s.arrived.emplace_back(now + f.latency, m.payload);
    Match(s, f.dst);
    if (!flows_[id].queue.empty())
      StartHead(id, now);
    else
      Rerate(flows_[id].path, now);
  }

  // Flows on these links share them equally: each runs at its tightest link's share.
  void Rerate(const std::vector<uint32_t>& links, double now) {
    for (uint32_t l : links) {
      for (uint32_t id : link_flows_[l]) {
        Flow& f = flows_[id];
        double rate = 1e300;
        for (uint32_t pl : f.path) {
          rate = std::min(rate, topo_.link(pl).bytes_per_s / static_cast<double>(link_flows_[pl].size()));
        }
        if (rate == f.rate) continue;
        f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last));
        f.last = now;
        f.rate = rate;
        Reschedule(id, now);
      }
    }
  }

  void Reschedule(uint32_t id, double now) {
    Flow& f = flows_[id];
    double t = f.path.empty() || f.remaining <= 0 ? now : now + f.remaining / f.rate;
    Push(t, -1, id, -1, ++f.version);
  }

  void Match(Stream& s, int receiver) {
    const Program& p = programs_[static_cast<size_t>(receiver)];
    while (!s.arrived.empty() && !s.posted.empty()) {
      auto [arrival, payload] = s.arrived.front();
      auto [op, posted] = s.posted.front();
      s.arrived.pop_front();
      s.posted.pop_front();
      double t = std::max(arrival, posted);
      const Op& o = p.ops[op];
      if (o.kind == OpKind::kRecvReduce && o_.reduce_bytes_per_s > 0) {
        t += static_cast<double>(o.region.count * o_.elem_size) / o_.reduce_bytes_per_s;
      }
      Push(t, receiver, op, payload);
    }
  }

  void Deliver(const Event& e) {
    if (!data_ || e.payload < 0) return;
    const Op& o = programs_[static_cast<size_t>(e.rank)].ops[e.op];
    auto& bytes = payloads_[static_cast<size_t>(e.payload)];
    Region dst = o.kind == OpKind::kRecvReduce ? o.aux : o.region;
    std::memcpy(Ptr(e.rank, dst), bytes.data(), bytes.size());
    std::vector<std::byte>().swap(bytes);
  }

  void RecordChannel(uint8_t channel, double t) {
    auto& done = result_.channel_done_s;
    if (done.size() <= channel) done.resize(channel + 1u, 0.0);
    done[channel] = std::max(done[channel], t);
  }

  void Apply(int rank, uint32_t op) {
    if (!data_) return;
    const Op& o = programs_[static_cast<size_t>(rank)].ops[op];
    if (o.reduce_from_input) {
      data_->reduce3(Ptr(rank, o.region),
                     Ptr(rank, Region{BufferId::kInput, o.region.offset, o.region.count}), Ptr(rank, o.aux),
                     o.region.count);
    } else {
      data_->reduce(Ptr(rank, o.region), Ptr(rank, o.aux), o.region.count);
    }
  }

  const Topology& topo_;
  const std::vector<Program>& programs_;
  SimulationOptions o_;
  const SimulationData* data_;
  std::vector<ProgramState> states_;
  std::vector<Flow> flows_;
  std::unordered_map<uint64_t, uint32_t> flow_ids_;
  std::vector<std::vector<uint32_t>> link_flows_;  // active flows per link
  std::vector<double> link_busy_;
  std::unordered_map<uint64_t, Stream> streams_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  std::vector<std::vector<std::byte>> scratch_;
  std::vector<std::vector<std::byte>> payloads_;
  SimulationResult result_;
};

}  // namespace

SimulationResult Simulate(const Topology& topology, const std::vector<Program>& programs,
                          const SimulationOptions& options, const SimulationData* data) {
  if (static_cast<int>(programs.size()) != topology.num_ranks()) {
    throw InvalidArgumentError(fmt::format("simulate: {} programs for a topology of {} ranks",
                                           programs.size(), topology.num_ranks()));
  }
  Simulation sim(topology, programs, options, data);
  return sim.Run();
}

double AllreduceBoundSeconds(const Topology& topology, uint64_t bytes) {
  int n = topology.num_ranks();
  if (n < 2) return 0;
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    double must_send = 2.0 * (n - 1) / n * static_cast<double>(bytes);
    worst = std::max(worst, must_send / topology.OutBandwidth(r));
  }
  // Each element of the result depends on the inputs outside a group: at least `bytes` must
  // enter it through its uplink.
  for (const Topology::UplinkGroup& g : topology.uplink_groups()) {
    if (g.ranks < n) worst = std::max(worst, static_cast<double>(bytes) / g.uplink_bytes_per_s);
  }
  return worst + topology.Diameter() * topology.latency_s();
}

}  // namespace parasol::collective
