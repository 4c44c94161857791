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

struct Event {
  double t;
  uint64_t seq;
  int rank;
  uint32_t op;
  int32_t payload;  // index into the payload store, or -1
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Stream {  // messages from one rank to another on one channel
  std::deque<std::pair<double, int32_t>> arrived;  // (arrival time, payload)
  std::deque<std::pair<uint32_t, double>> posted;  // (receive op, post time)
};

class Simulation {
 public:
  Simulation(const Topology& topo, const std::vector<Program>& programs, const SimulationOptions& o,
             const SimulationData* data)
      : topo_(topo), programs_(programs), o_(o), data_(data), states_(programs.size()),
        link_free_(topo.num_link_ids(), 0.0), link_busy_(topo.num_link_ids(), 0.0) {
    if (data_) {
      scratch_.resize(programs.size());
      for (size_t r = 0; r < programs.size(); ++r) scratch_[r].resize(programs[r].scratch_count * o.elem_size);
    }
  }

  SimulationResult Run() {
    const int n = static_cast<int>(programs_.size());
    for (int r = 0; r < n; ++r) {
      states_[static_cast<size_t>(r)].Reset(programs_[static_cast<size_t>(r)]);
      IssueReady(r, 0.0);
    }
    double now = 0;
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      now = e.t;
      Deliver(e);
      ProgramState& st = states_[static_cast<size_t>(e.rank)];
      st.TransferDone(e.op, [&](uint32_t op) { Apply(e.rank, op); });
      IssueReady(e.rank, now);
    }
    for (int r = 0; r < n; ++r) {
      const ProgramState& st = states_[static_cast<size_t>(r)];
      if (!st.done()) {
        throw InternalError(fmt::format("simulation stuck: rank {} completed {} of {} steps",
                                        r, st.completed(), programs_[static_cast<size_t>(r)].ops.size()));
      }
    }
    result_.time_s = now;
    for (double b : link_busy_) result_.max_link_busy_s = std::max(result_.max_link_busy_s, b);
    return result_;
  }

 private:
  std::byte* Ptr(int rank, const Region& r) {
    std::byte* base = nullptr;
    switch (r.buffer) {
      case BufferId::kData: base = (*data_->data)[static_cast<size_t>(rank)].data(); break;
      case BufferId::kScratch: base = scratch_[static_cast<size_t>(rank)].data(); break;
      case BufferId::kInput: base = const_cast<std::byte*>((*data_->input)[static_cast<size_t>(rank)].data()); break;
    }
    return base + r.offset * o_.elem_size;
  }

  void Push(double t, int rank, uint32_t op, int32_t payload = -1) {
    events_.push(Event{t, seq_++, rank, op, payload});
  }

  Stream& StreamOf(int src, int dst, int channel) {
    uint64_t key = (static_cast<uint64_t>(src) * programs_.size() + static_cast<uint64_t>(dst)) << 8 |
                   static_cast<uint64_t>(channel);
    return streams_[key];
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
          Stream& s = StreamOf(o.peer, rank, o.channel);
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

  void Send(int rank, uint32_t op, const Op& o, double now) {
    const auto& route = topo_.Route(rank, o.peer);
    double bytes = static_cast<double>(o.region.count * o_.elem_size);
    double start = now, bw = 1e300, latency = 0;
    for (uint32_t l : route) {
      start = std::max(start, link_free_[l]);
      Topology::Link link = topo_.link(l);
      bw = std::min(bw, link.bytes_per_s);
      latency += link.latency_s;
    }
    double end = start + bytes / bw;
    for (uint32_t l : route) {
      link_free_[l] = end;
      link_busy_[l] += bytes / bw;
    }
    ++result_.messages;
    result_.bytes_sent += o.region.count * o_.elem_size;
    int32_t payload = -1;
    if (data_) {
      payload = static_cast<int32_t>(payloads_.size());
      const std::byte* src = Ptr(rank, o.region);
      payloads_.emplace_back(src, src + o.region.count * o_.elem_size);
    }
    Push(end, rank, op);  // the bytes have left: the send buffer is free
    Stream& s = StreamOf(rank, o.peer, o.channel);
    s.arrived.emplace_back(end + latency, payload);
    Match(s, o.peer);
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

  void Apply(int rank, uint32_t op) {
    if (!data_) return;
    const Op& o = programs_[static_cast<size_t>(rank)].ops[op];
    data_->reduce(Ptr(rank, o.region), Ptr(rank, o.aux), o.region.count);
  }

  const Topology& topo_;
  const std::vector<Program>& programs_;
  SimulationOptions o_;
  const SimulationData* data_;
  std::vector<ProgramState> states_;
  std::vector<double> link_free_;
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
  return worst + topology.Diameter() * topology.latency_s();
}

}  // namespace parasol::collective

