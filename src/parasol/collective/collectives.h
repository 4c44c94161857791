// Collective operations over the ranks of a Context: broadcast, reduce, reduce-scatter,
// allgather (equal or variable blocks), allreduce (algorithm by name or auto), alltoall and barrier.
//
// Every call is collective: all ranks call the same operations in the same order with the same
// count, type, op, root and algorithm. If they do not, or a peer is gone, or the deadline passes,
// every rank gets an error that names itself, the operation and the peer (MismatchError,
// PeerGoneError, TimeoutError, or AbortedError on the ranks told by the one that failed) instead
// of a hang or a wrong result. All ranks get bitwise identical results.
//
// In place: pass the same pointer as input and output (see each function for what that means).
// Threading: one thread at a time per Context; use Context::Duplicate for concurrent streams.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "parasol/collective/algorithm.h"
#include "parasol/comm/context.h"
#include "parasol/core/dtype.h"
#include "parasol/core/error.h"
#include "parasol/core/reduce_op.h"

namespace parasol::collective {

class Topology;

struct AllreduceOptions {
  ReduceOp op = ReduceOp::kSum;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kAuto;
  std::chrono::milliseconds timeout_ms{0};   // 0: the context's default
  uint64_t segment_bytes = 0;                // pipelining granularity; 0: the algorithm's default
  int torus_rows = 0;                        // torus2d: rows (0: from the topology or most square)
  int rings = 2;                             // multiring
  std::shared_ptr<const Topology> topology;  // treepack, ft-mesh, auto (see AllreduceParams)
};

struct BroadcastOptions {
  int root = 0;
  std::chrono::milliseconds timeout_ms{0};
  uint64_t segment_bytes = 0;
};

struct ReduceOptions {
  int root = 0;
  ReduceOp op = ReduceOp::kSum;
  std::chrono::milliseconds timeout_ms{0};
  uint64_t segment_bytes = 0;
};

struct ReduceScatterOptions {
  ReduceOp op = ReduceOp::kSum;
  std::chrono::milliseconds timeout_ms{0};
  uint64_t segment_bytes = 0;
};

struct AllgatherOptions {
  std::chrono::milliseconds timeout_ms{0};
  uint64_t segment_bytes = 0;
};

struct AlltoallOptions {
  std::chrono::milliseconds timeout_ms{0};
};

// out[i] = op over ranks of in[i], i < count. in == out: in place.
void Allreduce(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
               const AllreduceOptions& options = {});
// buf[0, count) of the root on every rank.
void Broadcast(comm::Context& ctx, void* buf, size_t count, DType dtype,
               const BroadcastOptions& options = {});
// On the root, out[i] = op over ranks of in[i]; `out` is ignored elsewhere (may be null).
// in == out on the root: in place.
void Reduce(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
            const ReduceOptions& options = {});
// `in` holds count elements on every rank; rank r receives block r of BlockRange(count, size, r)
// reduced, in out[0, block size). in == out: in place, the block stays at its place in the buffer.
void ReduceScatter(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
                   const ReduceScatterOptions& options = {});
// Each rank contributes `count` elements; out holds size*count, rank r's at out[r*count].
// in == out: in place, each rank's contribution already sits at its place in out.
void Allgather(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
               const AllgatherOptions& options = {});
// Rank r contributes counts[r] elements (every rank passes the same counts, one per rank); out
// holds their sum, rank r's block after the blocks of the ranks before it. Nothing is padded: a
// rank sends and receives only the other blocks' bytes. in == out: in place, each rank's block
// already at its offset. Ranks that pass different counts get a MismatchError.
void Allgatherv(comm::Context& ctx, const void* in, void* out, std::span<const uint64_t> counts, DType dtype,
                const AllgatherOptions& options = {});
// in and out hold size*count; block d of `in` goes to rank d, arriving in its block `rank`.
// in == out: in place.
void Alltoall(comm::Context& ctx, const void* in, void* out, size_t count, DType dtype,
              const AlltoallOptions& options = {});
// Variable blocks, out of place: `in` holds send_counts[d] elements for each rank d in rank order,
// `out` receives recv_counts[s] elements from each rank s in rank order (one count per rank each).
// Rank s's send_counts[d] must equal rank d's recv_counts[s]: the counts differ from rank to rank,
// so no signature can prove a disagreement; a receive of the wrong size fails, or waits until the
// deadline and names the peer. A rank's count to itself must match its own (InvalidArgumentError).
void Alltoallv(comm::Context& ctx, const void* in, std::span<const uint64_t> send_counts, void* out,
               std::span<const uint64_t> recv_counts, DType dtype, const AlltoallOptions& options = {});
// Returns once every rank has called it.
void Barrier(comm::Context& ctx, std::chrono::milliseconds timeout_ms = std::chrono::milliseconds(0));

// [begin, end) of rank `rank`'s block when `count` elements are split over `nranks` ranks (sizes
// differ by at most one; the first count % nranks blocks are larger).
std::pair<size_t, size_t> BlockRange(size_t count, int nranks, int rank);

// Typed forms.
template <typename T>
void Allreduce(comm::Context& ctx, std::span<const T> in, std::span<T> out, const AllreduceOptions& o = {}) {
  if (in.size() != out.size()) throw InvalidArgumentError("allreduce: input and output sizes differ");
  Allreduce(ctx, in.data(), out.data(), in.size(), DTypeOf<T>, o);
}
template <typename T>
void Allreduce(comm::Context& ctx, std::span<T> inout, const AllreduceOptions& o = {}) {
  Allreduce(ctx, inout.data(), inout.data(), inout.size(), DTypeOf<T>, o);
}
template <typename T>
void Broadcast(comm::Context& ctx, std::span<T> buf, const BroadcastOptions& o = {}) {
  Broadcast(ctx, buf.data(), buf.size(), DTypeOf<T>, o);
}
template <typename T>
void Allgather(comm::Context& ctx, std::span<const T> in, std::span<T> out, const AllgatherOptions& o = {}) {
  if (out.size() != in.size() * static_cast<size_t>(ctx.size())) {
    throw InvalidArgumentError("allgather: output must hold size x input elements");
  }
  Allgather(ctx, in.data(), out.data(), in.size(), DTypeOf<T>, o);
}

// A vector of `count` elements spread over the ranks by BlockRange: each rank passes its block
// (BlockRange(count, size, rank)'s length), every rank gets the whole vector in order.
template <typename T>
std::vector<T> AllgatherBlocks(comm::Context& ctx, std::span<const T> mine, size_t count,
                               const AllgatherOptions& o = {}) {
  const auto [b, e] = BlockRange(count, ctx.size(), ctx.rank());
  if (mine.size() != e - b) throw InvalidArgumentError("allgather-blocks: a rank's block has the wrong size");
  std::vector<uint64_t> counts(static_cast<size_t>(ctx.size()));
  for (int r = 0; r < ctx.size(); ++r) {
    const auto [rb, re] = BlockRange(count, ctx.size(), r);
    counts[static_cast<size_t>(r)] = re - rb;
  }
  std::vector<T> whole(count);
  Allgatherv(ctx, mine.data(), whole.data(), counts, DTypeOf<T>, o);
  return whole;
}

// Every rank's `mine`, of any length, concatenated in rank order on every rank; `counts`, when
// given, receives each rank's length. Two collectives: the lengths, then the blocks unpadded.
template <typename T>
std::vector<T> AllgatherVariable(comm::Context& ctx, std::span<const T> mine, const AllgatherOptions& o = {},
                                 std::vector<uint64_t>* counts = nullptr) {
  const auto length = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lengths(static_cast<size_t>(ctx.size()));
  Allgather(ctx, &length, lengths.data(), 1, DType::kInt64, o);
  std::vector<uint64_t> sizes(lengths.begin(), lengths.end());
  uint64_t total = 0;
  for (uint64_t n : sizes) total += n;
  std::vector<T> all(total);
  Allgatherv(ctx, mine.data(), all.data(), sizes, DTypeOf<T>, o);
  if (counts) *counts = std::move(sizes);
  return all;
}

}  // namespace parasol::collective
