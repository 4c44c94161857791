#include "parasol/apps/gnn/tensor_worker.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

constexpr comm::Tag kRequestTag = 1;
constexpr uint32_t kReplyTags = 1u << 20;  // replies on tags 2 .. 2 + kReplyTags - 1

enum Op : uint32_t {
  kShard,
  kParams,
  kProjectFeatures,
  kActivateProject,
  kProject,
  kBackwardRows,
  kActivateBackward,
  kFinish
};

// The fixed part of a request.
struct Header {
  uint32_t op = 0, reply_tag = 0;
  uint64_t layer = 0, begin = 0, end = 0;
  uint64_t seed = 0, epoch = 0;
  float rate = 0;
  uint32_t pad = 0;
};

template <typename T>
void Append(std::vector<std::byte>* out, const T* data, size_t count) {
  const auto* b = reinterpret_cast<const std::byte*>(data);
  out->insert(out->end(), b, b + count * sizeof(T));
}

// Reads arrays off a request, checking that each fits.
class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <typename T>
  void Read(T* out, size_t count) {
    if (count > (bytes_.size() - at_) / sizeof(T))
      throw InternalError("tensor worker: a request shorter than it says");
    if (count == 0) return;  // `out` may be an empty vector's null
    std::memcpy(out, bytes_.data() + at_, count * sizeof(T));
    at_ += count * sizeof(T);
  }
  template <typename T>
  T Get() {
    T v;
    Read(&v, 1);
    return v;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
  size_t at_ = 0;
};

// What a worker keeps for one graph rank.
struct Client {
  GraphShard shard;
  LayerShapes shapes;
  std::vector<float> params;
  std::vector<float> a, b, c, d;  // whole matrices (local rows) the tasks read and write
  bool finished = false;
};

float* Whole(std::vector<float>* m, const GraphShard& s, size_t width) {
  if (m->size() < s.local_rows() * width) m->resize(s.local_rows() * width);
  return m->data();
}

void ReadShard(WireReader& r, Client* c) {
  const auto owned = r.Get<uint64_t>(), ghosts = r.Get<uint64_t>(), widths = r.Get<uint64_t>();
  if (widths < 2 || widths > 64) throw InternalError("tensor worker: a shard message with bad widths");
  c->shapes.widths.resize(widths);
  r.Read(c->shapes.widths.data(), widths);
  size_t total = 0;
  for (size_t l = 0; l + 1 < widths; ++l) {
    c->shapes.offsets.push_back(total);
    total += c->shapes.widths[l] * c->shapes.widths[l + 1] + c->shapes.widths[l + 1];
  }
  GraphShard& s = c->shard;
  s.owned.resize(owned);
  s.ghosts.resize(ghosts);
  r.Read(s.owned.data(), owned);
  r.Read(s.ghosts.data(), ghosts);
  s.feature_offsets.resize(owned + ghosts + 1);
  r.Read(s.feature_offsets.data(), s.feature_offsets.size());
  const uint64_t nnz = s.feature_offsets.back();
  s.feature_ids.resize(nnz);
  s.feature_values.resize(nnz);
  r.Read(s.feature_ids.data(), nnz);
  r.Read(s.feature_values.data(), nnz);
  for (uint32_t f : s.feature_ids)
    if (f >= c->shapes.widths[0])
      throw InternalError("tensor worker: a feature id beyond the model's inputs");
}

// Runs one task of client c; returns the reply's floats.
std::vector<float> RunTask(const Header& h, WireReader& r, Client* c) {
  const GraphShard& s = c->shard;
  const LayerShapes& sh = c->shapes;
  const size_t l = h.layer;
  if (h.op != kParams && (h.begin > h.end || h.end > s.local_rows() || l >= sh.layers()))
    throw InternalError("tensor worker: a task outside the shard or the model");
  LocalTensorOps ops(s, sh);
  ops.SetParameters(c->params);
  const RowRange rows{h.begin, h.end};
  const DropoutDraw d{.rate = h.rate, .seed = h.seed, .epoch = h.epoch};
  auto in_rows = [&](std::vector<float>* m, size_t width) {
    float* whole = Whole(m, s, width);
    r.Read(whole + rows.begin * width, rows.size() * width);
    return whole;
  };
  auto out_rows = [&](const float* whole, size_t width, std::vector<float>* reply) {
    reply->insert(reply->end(), whole + rows.begin * width, whole + rows.end * width);
  };
  std::vector<float> reply;
  switch (h.op) {
    case kParams: {
      const size_t n =
          sh.offsets.back() + sh.in(sh.layers() - 1) * sh.out(sh.layers() - 1) + sh.out(sh.layers() - 1);
      c->params.resize(n);
      r.Read(c->params.data(), n);
      reply.push_back(0);
      break;
    }
    case kProjectFeatures: {
      float* t = Whole(&c->a, s, sh.out(0));
      ops.ProjectFeatures(d, rows, t);
      out_rows(t, sh.out(0), &reply);
      break;
    }
    case kActivateProject: {
      const float* z = in_rows(&c->a, sh.in(l));
      float* hh = Whole(&c->b, s, sh.in(l));
      float* t = Whole(&c->c, s, sh.out(l));
      ops.ActivateProject(d, l, z, rows, hh, t);
      out_rows(hh, sh.in(l), &reply);
      out_rows(t, sh.out(l), &reply);
      break;
    }
    case kProject: {
      const float* hh = in_rows(&c->a, sh.in(l));
      float* t = Whole(&c->b, s, sh.out(l));
      ops.Project(l, hh, rows, t);
      out_rows(t, sh.out(l), &reply);
      break;
    }
    case kBackwardRows: {
      const float* dt = in_rows(&c->a, sh.out(l));
      const float* hh = l > 0 ? in_rows(&c->b, sh.in(l)) : nullptr;
      std::vector<float> gw(sh.in(l)*sh.out(l), 0.0f);
      float* dh = l > 0 ? Whole(&c->c, s, sh.in(l)) : nullptr;
      ops.BackwardRows(d, l, dt, hh, rows, gw.data(), dh);
      reply = std::move(gw);
      if (l > 0) out_rows(dh, sh.in(l), &reply);
      break;
    }
    case kActivateBackward: {
      const float* z = in_rows(&c->a, sh.in(l));
      const float* dh = in_rows(&c->b, sh.in(l));
      float* dz = Whole(&c->c, s, sh.in(l));
      ops.ActivateBackward(d, l, z, dh, rows, dz);
      out_rows(dz, sh.in(l), &reply);
      break;
    }
    default: throw InternalError(fmt::format("tensor worker: unknown task {}", h.op));
  }
  if (!r.done()) throw InternalError("tensor worker: a request longer than it says");
  return reply;
}

}  // namespace

int TensorWorkerOf(int graph_rank, int graph_ranks, int workers) {
  return graph_ranks + graph_rank % workers;
}

RemoteTensorOps::RemoteTensorOps(comm::Context& link, int worker, const GraphShard& s,
                                 const LayerShapes& shapes)
    : link_(link), worker_(worker), s_(s), shapes_(shapes) {
  // The shard travels as raw bytes after the header (Call's parts are float rows).
  Header h{.op = kShard, .reply_tag = 2 + next_call_++ % kReplyTags};
  std::vector<std::byte> message;
  Append(&message, &h, 1);
  const uint64_t counts[3] = {s.owned.size(), s.ghosts.size(), shapes.widths.size()};
  Append(&message, counts, 3);
  Append(&message, shapes.widths.data(), shapes.widths.size());
  Append(&message, s.owned.data(), s.owned.size());
  Append(&message, s.ghosts.data(), s.ghosts.size());
  Append(&message, s.feature_offsets.data(), s.feature_offsets.size());
  Append(&message, s.feature_ids.data(), s.feature_ids.size());
  Append(&message, s.feature_values.data(), s.feature_values.size());
  std::vector<float> reply;
  Exchange(message, h.reply_tag, &reply, 1, fmt::format("gnn tensor worker {}: the shard", worker_));
}

void RemoteTensorOps::Exchange(const std::vector<std::byte>& message, uint32_t reply_tag,
                               std::vector<float>* reply, size_t reply_floats, const std::string& what) {
  reply->resize(reply_floats);
  comm::Transport& t = link_.transport();
  comm::Request recv = t.Irecv(worker_, reply_tag, reply->data(), reply_floats * sizeof(float));
  comm::Request send = t.Isend(worker_, kRequestTag, message.data(), message.size());
  const Deadline deadline = link_.DefaultDeadline();
  try {
    comm::Wait(t, send, deadline, what);
    comm::Wait(t, recv, deadline, what);
  } catch (...) {
    if (recv.valid()) t.Cancel(recv);
    throw;
  }
  bytes_sent_ += message.size();
}

void RemoteTensorOps::Call(uint32_t op, size_t l, RowRange rows, const DropoutDraw& d,
                           std::span<const Part> parts, std::vector<float>* reply, size_t reply_floats) {
  const Header h{.op = op,
                 .reply_tag = 2 + next_call_++ % kReplyTags,
                 .layer = l,
                 .begin = rows.begin,
                 .end = rows.end,
                 .seed = d.seed,
                 .epoch = d.epoch,
                 .rate = d.rate};
  std::vector<std::byte> message;
  Append(&message, &h, 1);
  for (const Part& p : parts) Append(&message, p.rows + rows.begin * p.width, rows.size() * p.width);
  Exchange(message, h.reply_tag, reply, reply_floats,
           fmt::format("gnn tensor worker {}: task {}", worker_, op));
}

void RemoteTensorOps::SetParameters(std::span<const float> params) {
  std::vector<float> reply;
  const Part p{params.data(), params.size()};
  Call(kParams, 0, {0, 1}, {}, {&p, 1}, &reply, 1);
}

void RemoteTensorOps::ProjectFeatures(const DropoutDraw& d, RowRange rows, float* t) {
  std::vector<float> reply;
  const size_t out = shapes_.out(0);
  Call(kProjectFeatures, 0, rows, d, {}, &reply, rows.size() * out);
  std::copy(reply.begin(), reply.end(), t + rows.begin * out);
}

void RemoteTensorOps::ActivateProject(const DropoutDraw& d, size_t l, const float* z, RowRange rows, float* h,
                                      float* t) {
  std::vector<float> reply;
  const size_t in = shapes_.in(l), out = shapes_.out(l);
  const Part p{z, in};
  Call(kActivateProject, l, rows, d, {&p, 1}, &reply, rows.size() * (in + out));
  std::copy_n(reply.begin(), rows.size() * in, h + rows.begin * in);
  std::copy(reply.begin() + static_cast<std::ptrdiff_t>(rows.size() * in), reply.end(), t + rows.begin * out);
}

void RemoteTensorOps::Project(size_t l, const float* h, RowRange rows, float* t) {
  std::vector<float> reply;
  const size_t in = shapes_.in(l), out = shapes_.out(l);
  const Part p{h, in};
  Call(kProject, l, rows, {}, {&p, 1}, &reply, rows.size() * out);
  std::copy(reply.begin(), reply.end(), t + rows.begin * out);
}

void RemoteTensorOps::BackwardRows(const DropoutDraw& d, size_t l, const float* dt, const float* h,
                                   RowRange rows, float* gw, float* dh) {
  std::vector<float> reply;
  const size_t in = shapes_.in(l), out = shapes_.out(l);
  const Part parts[2] = {{dt, out}, {h, in}};
  Call(kBackwardRows, l, rows, d, std::span<const Part>(parts, l > 0 ? 2 : 1), &reply,
       in * out + (l > 0 ? rows.size() * in : 0));
  for (size_t k = 0; k < in * out; ++k) gw[k] += reply[k];
  if (l > 0)
    std::copy(reply.begin() + static_cast<std::ptrdiff_t>(in * out), reply.end(), dh + rows.begin * in);
}

void RemoteTensorOps::ActivateBackward(const DropoutDraw& d, size_t l, const float* z, const float* dh,
                                       RowRange rows, float* dz) {
  std::vector<float> reply;
  const size_t in = shapes_.in(l);
  const Part parts[2] = {{z, in}, {dh, in}};
  Call(kActivateBackward, l, rows, d, parts, &reply, rows.size() * in);
  std::copy(reply.begin(), reply.end(), dz + rows.begin * in);
}

void RemoteTensorOps::Finish() {
  std::vector<float> reply;
  Call(kFinish, 0, {0, 0}, {}, {}, &reply, 1);
}

void ServeTensorTasks(comm::Context& link, std::span<const int> clients) {
  comm::Transport& t = link.transport();
  std::map<int, Client> state;
  for (int c : clients) state[c];
  size_t finished = 0;
  std::deque<std::pair<comm::Request, std::vector<float>>> replies;  // sends in flight
  Deadline idle = link.DefaultDeadline();
  while (finished < clients.size()) {
    while (!replies.empty() && t.Test(replies.front().first)) replies.pop_front();
    std::optional<comm::Transport::Message> m = t.TryReceive(kRequestTag);
    if (!m) {
      if (auto failure = t.PeerFailure())
        throw AbortedError(fmt::format("rank {}: gnn tensor worker: aborted because {}", t.rank(), *failure));
      if (idle.Expired()) {
        std::string waiting;
        for (const auto& [rank, c] : state)
          if (!c.finished) waiting += fmt::format("{}{}", waiting.empty() ? "" : ", ", rank);
        throw TimeoutError(fmt::format(
            "rank {}: gnn tensor worker: deadline passed waiting for graph rank(s) {}", t.rank(), waiting));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    idle = link.DefaultDeadline();
    auto it = state.find(m->src);
    if (it == state.end()) throw InternalError(fmt::format("tensor worker: a request from rank {}", m->src));
    WireReader r(m->data);
    const auto h = r.Get<Header>();
    std::vector<float> reply;
    if (h.op == kShard) {
      ReadShard(r, &it->second);
      reply.push_back(0);
    } else if (h.op == kFinish) {
      it->second.finished = true;
      ++finished;
      reply.push_back(0);
    } else {
      reply = RunTask(h, r, &it->second);
    }
    replies.emplace_back();
    replies.back().second = std::move(reply);
    std::vector<float>& out = replies.back().second;
    replies.back().first = t.Isend(m->src, h.reply_tag, out.data(), out.size() * sizeof(float));
  }
  const Deadline deadline = link.DefaultDeadline();
  for (auto& [request, bytes] : replies) comm::Wait(t, request, deadline, "gnn tensor worker: a reply");
}

}  // namespace parasol::apps::gnn
