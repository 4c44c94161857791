#include "parasol/collective/collectives.h"

#include <compare>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "parasol/collective/exchange.h"
#include "parasol/collective/executor.h"
#include "parasol/collective/ft_mesh.h"
#include "parasol/collective/rooted.h"
#include "parasol/collective/topology.h"
#include "parasol/collective/treepack.h"
#include "parasol/core/checksum.h"

namespace parasol::collective {

namespace {

enum class Kind : uint8_t {
  kAllreduce,
  kBroadcast,
  kReduce,
  kReduceScatter,
  kAllgather,
  kAlltoall,
  kAllgatherv,
  kAlltoallv
};

constexpr const char* kKindNames[] = {"allreduce", "broadcast", "reduce",     "reduce-scatter",
                                      "allgather", "alltoall",  "allgatherv", "alltoallv"};

// Everything that shapes a call's schedule or must agree across ranks.
struct Key {
  Kind kind;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kAuto;
  DType dtype;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  uint64_t count = 0;
  uint64_t segment_bytes = 0;
  int torus_rows = 0;
  int rings = 0;
  uint64_t topology = 0;
  bool from_input = false;  // out of place: the program reads the input where data is unwritten
  auto operator<=>(const Key&) const = default;
};

struct Plan {
  Program program;
  std::string what;
  uint64_t signature;
};

// Per-context state (Context::State): cached plans and tree packings, the executor, a work buffer.
struct CollectiveState {
  Executor executor;
  std::map<Key, std::shared_ptr<const Plan>> plans;
  // Training loops repeat one call: check the last plan before searching the map.
  std::optional<Key> last_key;
  const Plan* last_plan = nullptr;
  std::map<uint64_t, std::shared_ptr<const TreePacking>> packings;
  std::map<std::tuple<uint64_t, uint64_t, size_t, uint64_t>, FtMeshPlan> ft_mesh_plans;
  std::vector<std::byte> work;

  std::byte* Work(size_t bytes) {
    if (work.size() < bytes) work.resize(bytes);
    return work.data();
  }
};

constexpr size_t kMaxCachedPlans = 256;

uint64_t Hash(const Key& k) {
  uint64_t h = kFnvSeed;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      const auto byte = static_cast<uint8_t>(v >> (8 * i));
      h = Fnv1a64(&byte, 1, h);
    }
  };
  mix(static_cast<uint64_t>(k.kind));
  mix(static_cast<uint64_t>(k.algorithm));
  mix(static_cast<uint64_t>(k.dtype));
  mix(static_cast<uint64_t>(k.op));
  mix(static_cast<uint64_t>(k.root));
  mix(k.count);
  mix(k.segment_bytes);
  mix(static_cast<uint64_t>(k.torus_rows));
  mix(static_cast<uint64_t>(k.rings));
  mix(k.topology);
  // from_input is local (in or out of place) and does not change the messages: not hashed.
  return h ^ (h >> 29);
}

std::string Describe(const Key& k) {
  std::string args = fmt::format("{} x {}", k.count, DTypeName(k.dtype));
  switch (k.kind) {
    case Kind::kAllreduce:
      return fmt::format("allreduce({}, {}, {})", AllreduceAlgorithmName(k.algorithm), args,
                         ReduceOpName(k.op));
    case Kind::kReduce: return fmt::format("reduce({}, {}, root {})", args, ReduceOpName(k.op), k.root);
    case Kind::kReduceScatter: return fmt::format("reduce-scatter({}, {})", args, ReduceOpName(k.op));
    case Kind::kBroadcast: return fmt::format("broadcast({}, root {})", args, k.root);
    default: return fmt::format("{}({})", kKindNames[static_cast<int>(k.kind)], args);
  }
}

template <typename BuildFn>
const Plan& GetPlan(CollectiveState& st, const Key& key, BuildFn build) {
  if (st.last_plan && *st.last_key == key) return *st.last_plan;
  auto it = st.plans.find(key);
  if (it == st.plans.end()) {
    if (st.plans.size() >= kMaxCachedPlans) st.plans.clear();
    auto plan = std::make_shared<Plan>(Plan{build(), Describe(key), Hash(key)});
    it = st.plans.emplace(key, std::move(plan)).first;
  }
  st.last_key = key;
  st.last_plan = it->second.get();
  return *st.last_plan;
}

void Execute(comm::Context& ctx, CollectiveState& st, const Plan& plan, void* data, const void* input,
             const Key& key, std::chrono::milliseconds timeout) {
  ExecuteArgs a;
  a.program = &plan.program;
  a.data = data;
  a.input = input;
  a.elem_size = DTypeSize(key.dtype);
  a.reduce = GetReduceFn(key.dtype, key.op);
  a.reduce3 = GetReduceFn3(key.dtype, key.op);
  a.sequence = ctx.NextSequence();
  a.signature = plan.signature;
  a.timeout_ms = timeout.count() > 0 ? timeout : ctx.options().timeout_ms;
  a.deadline = Deadline::After(a.timeout_ms);
  a.what = plan.what;
  st.executor.Run(ctx.transport(), a);
}

// A rank that rejects its arguments tells the others, which would otherwise wait for it until
// their deadline.
[[noreturn]] void Reject(comm::Context& ctx, const std::string& message) {
  ctx.transport().NotifyFailure(message);
  throw InvalidArgumentError(message);
}

void CheckRoot(comm::Context& ctx, int root, std::string_view op) {
  if (root < 0 || root >= ctx.size()) {
    Reject(ctx,
           fmt::format("rank {}: {}: root {} is not a rank (job has {})", ctx.rank(), op, root, ctx.size()));
  }
}

void CheckBuffers(comm::Context& ctx, size_t count, const void* a, const void* b, std::string_view op) {
  if (count > 0 && (!a || !b)) {
    Reject(ctx, fmt::format("rank {}: {}: null buffer for {} elements", ctx.rank(), op, count));
  }
}

const TreePacking& PackingFor(CollectiveState& st, const Topology& topo) {
  auto& slot = st.packings[topo.fingerprint()];
  if (!slot) slot = std::make_shared<TreePacking>(PackTopology(topo));
  return *slot;
}

}  // namespace

std::pair<size_t, size_t> BlockRange(size_t count, int nranks, int rank) {
  auto off = BalancedOffsets(count, nranks);
  return {off[static_cast<size_t>(rank)], off[static_cast<size_t>(rank) + 1]};
}

void Allreduce(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
               const AllreduceOptions& o) {
  CheckBuffers(ctx, count, in, out, "allreduce");
  AllreduceParams params;
  params.nranks = ctx.size();
  params.rank = ctx.rank();
  params.count = count;
  params.elem_size = DTypeSize(dtype);
  params.segment_bytes = o.segment_bytes;
  params.torus_rows = o.torus_rows;
  params.rings = o.rings;
  params.topology = o.topology.get();
  params.from_input = in != out;
  if (o.topology && o.topology->num_ranks() != ctx.size()) {
    Reject(ctx, fmt::format("rank {}: allreduce: topology {} has {} ranks, the job {}", ctx.rank(),
                            o.topology->name(), o.topology->num_ranks(), ctx.size()));
  }
  AllreduceAlgorithm algo = o.algorithm == AllreduceAlgorithm::kAuto ? ChooseAllreduce(params) : o.algorithm;
  Key key{Kind::kAllreduce,
          algo,
          dtype,
          o.op,
          0,
          count,
          o.segment_bytes,
          o.torus_rows,
          o.rings,
          o.topology ? o.topology->fingerprint() : 0,
          params.from_input};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] {
    if (algo == AllreduceAlgorithm::kFtMesh && o.topology) {
      auto plan_key = std::make_tuple(o.topology->fingerprint(), count, params.elem_size, o.segment_bytes);
      auto it = st.ft_mesh_plans.find(plan_key);
      if (it == st.ft_mesh_plans.end()) it = st.ft_mesh_plans.emplace(plan_key, PlanFtMesh(params)).first;
      params.ft_mesh_plan = &it->second;
      return BuildAllreduce(algo, params);
    }
    if (algo == AllreduceAlgorithm::kTreepack) {
      if (o.topology) return BuildTreepackAllreduce(params, PackingFor(st, *o.topology));
      Topology full = Topology::Parse(fmt::format("full:{}", ctx.size()));
      return BuildTreepackAllreduce(params, PackingFor(st, full));
    }
    return BuildAllreduce(algo, params);
  });
  Execute(ctx, st, plan, out, in, key, o.timeout_ms);
}

void Broadcast(comm::Context& ctx, void* buf, size_t count, DType dtype, const BroadcastOptions& o) {
  CheckBuffers(ctx, count, buf, buf, "broadcast");
  CheckRoot(ctx, o.root, "broadcast");
  Key key{Kind::kBroadcast,
          AllreduceAlgorithm::kAuto,
          dtype,
          ReduceOp::kSum,
          o.root,
          count,
          o.segment_bytes,
          0,
          0,
          0};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] {
    return BuildBroadcast(
        RootedParams{ctx.size(), ctx.rank(), o.root, count, DTypeSize(dtype), o.segment_bytes});
  });
  Execute(ctx, st, plan, buf, nullptr, key, o.timeout_ms);
}

void Reduce(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
            const ReduceOptions& o) {
  CheckRoot(ctx, o.root, "reduce");
  bool root = ctx.rank() == o.root;
  CheckBuffers(ctx, count, in, root ? out : in, "reduce");
  // Non-roots reduce partial sums in a work buffer (their input is const); out of place, the
  // program reads the input where it has not written yet, so nothing is copied first.
  bool from_input = !root || in != out;
  Key key{Kind::kReduce, AllreduceAlgorithm::kAuto, dtype, o.op, o.root, count, o.segment_bytes, 0, 0, 0,
          from_input};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] {
    return BuildReduce(
        RootedParams{ctx.size(), ctx.rank(), o.root, count, DTypeSize(dtype), o.segment_bytes, from_input});
  });
  void* data = root ? out : st.Work(count * DTypeSize(dtype));
  Execute(ctx, st, plan, data, in, key, o.timeout_ms);
}

void ReduceScatter(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
                   const ReduceScatterOptions& o) {
  auto [begin, end] = BlockRange(count, ctx.size(), ctx.rank());
  CheckBuffers(ctx, count, in, end > begin ? out : in, "reduce-scatter");
  bool from_input = in != out;
  Key key{Kind::kReduceScatter,
          AllreduceAlgorithm::kAuto,
          dtype,
          o.op,
          0,
          count,
          o.segment_bytes,
          0,
          0,
          0,
          from_input};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] {
    return BuildReduceScatter(ctx.size(), ctx.rank(), BalancedOffsets(count, ctx.size()), DTypeSize(dtype),
                              o.segment_bytes, from_input);
  });
  size_t es = DTypeSize(dtype);
  if (!from_input) {
    Execute(ctx, st, plan, out, nullptr, key, o.timeout_ms);
    return;
  }
  std::byte* work = st.Work(count * es);
  Execute(ctx, st, plan, work, in, key, o.timeout_ms);
  if (end > begin) std::memcpy(out, work + begin * es, (end - begin) * es);
}

void Allgather(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
               const AllgatherOptions& o) {
  CheckBuffers(ctx, count, in, out, "allgather");
  Key key{
      Kind::kAllgather, AllreduceAlgorithm::kAuto, dtype, ReduceOp::kSum, 0, count, o.segment_bytes, 0, 0, 0};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] {
    std::vector<uint64_t> blocks(static_cast<size_t>(ctx.size()) + 1);
    for (size_t r = 0; r < blocks.size(); ++r) blocks[r] = r * count;
    return BuildAllgather(ctx.size(), ctx.rank(), blocks, DTypeSize(dtype), o.segment_bytes);
  });
  size_t bytes = count * DTypeSize(dtype);
  auto* mine = static_cast<std::byte*>(out) + static_cast<size_t>(ctx.rank()) * bytes;
  if (in != out && bytes) std::memcpy(mine, in, bytes);
  Execute(ctx, st, plan, out, nullptr, key, o.timeout_ms);
}

void Allgatherv(comm::Context& ctx, const void* in, void* out, std::span<const uint64_t> counts, DType dtype,
                const AllgatherOptions& o) {
  if (counts.size() != static_cast<size_t>(ctx.size())) {
    Reject(ctx,
           fmt::format("rank {}: allgatherv: {} counts for {} ranks", ctx.rank(), counts.size(), ctx.size()));
  }
  std::vector<uint64_t> blocks(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) blocks[r + 1] = blocks[r] + counts[r];
  const uint64_t mine = counts[static_cast<size_t>(ctx.rank())];
  CheckBuffers(ctx, mine, in, out, "allgatherv");
  CheckBuffers(ctx, blocks.back(), out, out, "allgatherv");
  // The counts change from call to call: this call's plan is built for it, not cached. Its
  // signature covers every count, so ranks that disagree on one fail with a mismatch.
  const uint64_t counts_hash = Fnv1a64(counts.data(), counts.size_bytes(), kFnvSeed);
  Key key{Kind::kAllgatherv, AllreduceAlgorithm::kAuto, dtype, ReduceOp::kSum, 0, counts_hash,
          o.segment_bytes};
  const Plan plan{BuildAllgather(ctx.size(), ctx.rank(), blocks, DTypeSize(dtype), o.segment_bytes),
                  fmt::format("allgatherv({} x {})", blocks.back(), DTypeName(dtype)), Hash(key)};
  const size_t es = DTypeSize(dtype);
  auto* at = static_cast<std::byte*>(out) + blocks[static_cast<size_t>(ctx.rank())] * es;
  if (in != out && mine) std::memmove(at, in, mine * es);  // in may already point at its block
  Execute(ctx, ctx.State<CollectiveState>(), plan, out, nullptr, key, o.timeout_ms);
}

void Alltoall(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
              const AlltoallOptions& o) {
  CheckBuffers(ctx, count, in, out, "alltoall");
  Key key{Kind::kAlltoall, AllreduceAlgorithm::kAuto, dtype, ReduceOp::kSum, 0, count, 0, 0, 0, 0};
  auto& st = ctx.State<CollectiveState>();
  const Plan& plan = GetPlan(st, key, [&] { return BuildAlltoall(ctx.size(), ctx.rank(), count); });
  const void* input = in;
  if (in == out) {
    size_t bytes = count * DTypeSize(dtype) * static_cast<size_t>(ctx.size());
    input = st.Work(bytes);
    if (bytes) std::memcpy(st.work.data(), in, bytes);
  }
  Execute(ctx, st, plan, out, input, key, o.timeout_ms);
}

void Alltoallv(comm::Context& ctx, const void* in, std::span<const uint64_t> send_counts, void* out,
               std::span<const uint64_t> recv_counts, DType dtype, const AlltoallOptions& o) {
  const auto n = static_cast<size_t>(ctx.size());
  if (send_counts.size() != n || recv_counts.size() != n) {
    Reject(ctx, fmt::format("rank {}: alltoallv: {} send and {} receive counts for {} ranks", ctx.rank(),
                            send_counts.size(), recv_counts.size(), n));
  }
  const auto self = static_cast<size_t>(ctx.rank());
  if (send_counts[self] != recv_counts[self]) {
    Reject(ctx, fmt::format("rank {}: alltoallv: sends {} elements to itself but receives {}", ctx.rank(),
                            send_counts[self], recv_counts[self]));
  }
  std::vector<uint64_t> send_offsets(n + 1, 0), recv_offsets(n + 1, 0);
  for (size_t r = 0; r < n; ++r) {
    send_offsets[r + 1] = send_offsets[r] + send_counts[r];
    recv_offsets[r + 1] = recv_offsets[r] + recv_counts[r];
  }
  CheckBuffers(ctx, send_offsets.back(), in, in, "alltoallv");
  CheckBuffers(ctx, recv_offsets.back(), out, out, "alltoallv");
  if (in == out && send_offsets.back() > 0) {
    Reject(ctx, fmt::format("rank {}: alltoallv: in place", ctx.rank()));
  }
  // Built per call (the counts change); the signature is the same on every rank.
  const Key key{Kind::kAlltoallv, AllreduceAlgorithm::kAuto, dtype};
  const Plan plan{BuildAlltoallv(ctx.size(), ctx.rank(), send_offsets, recv_offsets),
                  fmt::format("alltoallv({} x {})", recv_offsets.back(), DTypeName(dtype)), Hash(key)};
  Execute(ctx, ctx.State<CollectiveState>(), plan, out, in, key, o.timeout_ms);
}

void Barrier(comm::Context& ctx, std::chrono::milliseconds timeout_ms) {
  int32_t token = 0;
  AllreduceOptions o;
  o.algorithm = AllreduceAlgorithm::kHalvingDoubling;
  o.timeout_ms = timeout_ms;
  Allreduce(ctx, &token, &token, 1, DType::kInt32, o);
}

}  // namespace parasol::collective
