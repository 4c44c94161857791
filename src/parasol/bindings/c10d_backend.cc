#include "parasol/bindings/c10d_backend.h"

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/format.h>
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <utility>

#include "parasol/collective/collectives.h"
#include "parasol/comm/transport.h"
#include "parasol/core/error.h"

namespace py = pybind11;

namespace parasol::bindings {
namespace {

using std::chrono::milliseconds;

// A value-preserving copy parasol can move and reduce: its dtype, or the widened one.
at::ScalarType Wire(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kDouble:
    case at::kInt:
    case at::kLong: return t;
    case at::kHalf:
    case at::kBFloat16: return at::kFloat;
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort: return at::kInt;
    default:
      throw InvalidArgumentError(
          fmt::format("the parasol backend cannot communicate tensors of {}", std::string(c10::toString(t))));
  }
}

DType ParasolDType(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return DType::kFloat32;
    case at::kDouble: return DType::kFloat64;
    case at::kInt: return DType::kInt32;
    default: return DType::kInt64;
  }
}

// Flat, contiguous, of a wire dtype: the tensor itself when it already is one.
at::Tensor OnWire(const at::Tensor& t) {
  const at::ScalarType w = Wire(t.scalar_type());
  if (w == t.scalar_type() && t.is_contiguous()) return t.view({-1});
  return t.to(w).contiguous().view({-1});
}

// Writes a wire tensor back into t when OnWire made a copy.
void FromWire(const at::Tensor& wire, at::Tensor& t) {
  if (wire.data_ptr() != t.data_ptr() || wire.scalar_type() != t.scalar_type()) t.copy_(wire.view(t.sizes()));
}

bool IsAverage(const c10d::ReduceOp& op) { return op.op_ == c10d::ReduceOp::AVG; }

ReduceOp ParasolOp(const c10d::ReduceOp& op, const at::Tensor& t) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return ReduceOp::kSum;
    case c10d::ReduceOp::AVG:
      if (!at::isFloatingType(t.scalar_type()))
        throw InvalidArgumentError("the parasol backend averages floating-point tensors only");
      return ReduceOp::kSum;
    case c10d::ReduceOp::PRODUCT: return ReduceOp::kProduct;
    case c10d::ReduceOp::MIN: return ReduceOp::kMin;
    case c10d::ReduceOp::MAX: return ReduceOp::kMax;
    default: throw InvalidArgumentError("the parasol backend reduces by SUM, AVG, PRODUCT, MIN or MAX");
  }
}

// A CUDA argument's way through host memory: an event on the caller's stream before, the
// backend's stream for the copies, an event after that the caller's stream waits on.
struct Staging {
  c10::Device device{c10::kCPU};
  std::optional<c10::Event> ready, done;
  std::optional<c10::Stream> stream;
};

// The Work torch.distributed hands back: completed by the worker (or by wait(), for send and recv).
class ParasolWork : public c10d::Work {
 public:
  ParasolWork(c10d::OpType type, std::vector<at::Tensor> result, std::vector<c10::Device> devices)
      : Work(-1, type),
        result_(std::move(result)),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                         std::move(devices))) {}

  void Complete(std::exception_ptr error, std::optional<c10::Stream> stream) {
    if (error) {
      future_->setError(error);
    } else if (stream) {
      c10::StreamGuard guard(*stream);  // the future's consumers wait for the copies back
      future_->markCompleted(c10::IValue(result_));
    } else {
      future_->markCompleted(c10::IValue(result_));
    }
    finish(error);
  }
  std::vector<at::Tensor> result() override { return result_; }
  void Keep(std::vector<ParasolBackend::Arg> args) { kept_ = std::move(args); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  void synchronize() override {
    for (Staging& s : staging_) {
      if (!s.done) continue;
      c10::impl::VirtualGuardImpl impl(s.device.type());
      s.done->block(impl.getStream(s.device));
    }
  }
  std::vector<Staging> staging_;

 private:
  std::vector<at::Tensor> result_;
  std::vector<ParasolBackend::Arg> kept_;  // the operation's tensors, released with the Work
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// A posted send or receive: wait() drives it to the deadline.
class RequestWork : public c10d::Work {
 public:
  RequestWork(c10d::OpType type, comm::Transport& t, comm::Request req, at::Tensor keep, milliseconds timeout,
              std::string what, std::shared_ptr<World> world)
      : Work(-1, type),
        t_(t),
        req_(std::move(req)),
        keep_(std::move(keep)),
        timeout_(timeout),
        what_(std::move(what)),
        world_(std::move(world)) {}
  bool isCompleted() override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_ || (done_ = t_.Test(req_));
  }
  bool wait(milliseconds timeout) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      const milliseconds limit = timeout.count() > 0 && timeout < timeout_ ? timeout : timeout_;
      world_->Guard([&] { comm::Wait(t_, req_, Deadline::After(limit), what_); });
      done_ = true;
    }
    return true;
  }

 private:
  std::mutex mu_;
  comm::Transport& t_;
  comm::Request req_;
  at::Tensor keep_;  // the message's memory lives until the request is done
  milliseconds timeout_;
  std::string what_;
  std::shared_ptr<World> world_;
  bool done_ = false;
};

}  // namespace

ParasolBackend::ParasolBackend(std::shared_ptr<World> world, int rank, int size, milliseconds timeout,
                               collective::AllreduceAlgorithm algorithm)
    : Backend(rank, size), world_(std::move(world)), timeout_(timeout), algorithm_(algorithm) {
  if (rank != world_->rank() || size != world_->size()) {
    throw InvalidArgumentError(fmt::format(
        "the parasol backend runs one process group per MPI job: torch.distributed says rank {} of {}, "
        "MPI says rank {} of {} (launch with mpirun; groups of fewer ranks: use another backend for them)",
        rank, size, world_->rank(), world_->size()));
  }
  comm::Context& ctx = world_->ctx();
  py::gil_scoped_release release;
  world_->Guard([&] {
    ctx_ = ctx.Duplicate(Deadline::After(timeout_));
    p2p_ = ctx.Duplicate(Deadline::After(timeout_));
  });
}

// worker_, the last member, is joined first; finished_ then goes on this thread.
ParasolBackend::~ParasolBackend() = default;

milliseconds ParasolBackend::Timeout(milliseconds requested) const {
  return requested.count() > 0 ? requested : timeout_;
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::Enqueue(c10d::OpType type, std::string name,
                                                       std::vector<Arg> args, std::vector<at::Tensor> result,
                                                       Body body) {
  std::vector<c10::Device> devices;
  std::vector<Staging> staging(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const at::Tensor& t = args[i].tensor;
    if (t.device().is_cpu()) continue;
    Staging& s = staging[i];
    s.device = t.device();
    c10::impl::VirtualGuardImpl impl(s.device.type());
    s.ready.emplace(s.device.type());
    s.ready->record(impl.getStream(s.device));
    s.stream = impl.getStreamFromGlobalPool(s.device);
    s.done.emplace(s.device.type());
    devices.push_back(s.device);
  }
  auto work = c10::make_intrusive<ParasolWork>(type, std::move(result), devices);
  work->staging_ = std::move(staging);
  std::exception_ptr failed;
  std::vector<c10::intrusive_ptr<c10::intrusive_ptr_target>> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed = failure_;
    released.swap(finished_);  // dropped on this thread, after the lock
  }
  if (failed) {
    work->Complete(failed, std::nullopt);
    return work;
  }
  worker_.Submit([this, work, args = std::move(args), name = std::move(name),
                  body = std::move(body)]() mutable {
    c10::AutoGradMode no_grad(false);  // the tensors may be parameters: written in place
    std::exception_ptr error;
    std::optional<c10::Stream> stream;
    try {
      std::vector<at::Tensor> host(args.size());
      for (size_t i = 0; i < args.size(); ++i) {
        Staging& s = work->staging_[i];
        if (!s.stream) {
          host[i] = args[i].tensor;
          continue;
        }
        stream = s.stream;
        c10::StreamGuard guard(*s.stream);
        s.ready->block(*s.stream);
        host[i] =
            at::empty(args[i].tensor.sizes(), args[i].tensor.options().device(c10::kCPU).pinned_memory(true));
        if (args[i].read) host[i].copy_(args[i].tensor, /*non_blocking=*/true);
        s.stream->synchronize();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (failure_) std::rethrow_exception(failure_);
      }
      world_->Guard([&] { body(*ctx_, host); });
      for (size_t i = 0; i < args.size(); ++i) {
        Staging& s = work->staging_[i];
        if (!s.stream) continue;
        c10::StreamGuard guard(*s.stream);
        if (args[i].write) args[i].tensor.copy_(host[i], /*non_blocking=*/true);
        s.done->record(*s.stream);
      }
    } catch (const Error& e) {
      error = std::current_exception();  // the error's own type (TimeoutError, ...), not a copy of its base
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_) {
        failure_ = std::make_exception_ptr(AbortedError(
            fmt::format("rank {}: parasol backend: {} cannot run: an earlier operation failed: {}",
                        world_->rank(), name, e.what())));
      }
    } catch (...) {
      error = std::current_exception();
    }
    work->Keep(std::move(args));
    work->Complete(error, stream);
    std::lock_guard<std::mutex> lock(mu_);
    finished_.push_back(std::move(work));
  });
  return work;
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                         const c10d::BroadcastOptions& opts) {
  const int root = static_cast<int>(opts.rootRank);
  const milliseconds timeout = Timeout(opts.timeout);
  std::vector<Arg> args;
  for (const at::Tensor& t : tensors) args.push_back({t, getRank() == root, getRank() != root});
  return Enqueue(c10d::OpType::BROADCAST, "broadcast", std::move(args), tensors,
                 [root, timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   for (at::Tensor& t : host) {
                     at::Tensor w = OnWire(t);
                     collective::Broadcast(ctx, w.data_ptr(), w.numel(), ParasolDType(w.scalar_type()),
                                           {.root = root, .timeout_ms = timeout});
                     FromWire(w, t);
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::AllreduceOptions& opts) {
  const c10d::ReduceOp op = opts.reduceOp;
  const collective::AllreduceOptions o{.op = tensors.empty() ? ReduceOp::kSum : ParasolOp(op, tensors[0]),
                                       .algorithm = algorithm_,
                                       .timeout_ms = Timeout(opts.timeout)};
  std::vector<Arg> args;
  for (const at::Tensor& t : tensors) args.push_back({t});
  return Enqueue(c10d::OpType::ALLREDUCE, "allreduce", std::move(args), tensors,
                 [o, average = IsAverage(op)](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   for (at::Tensor& t : host) {
                     at::Tensor w = OnWire(t);
                     collective::Allreduce(ctx, w.data_ptr(), w.data_ptr(), w.numel(),
                                           ParasolDType(w.scalar_type()), o);
                     if (average) w.div_(ctx.size());
                     FromWire(w, t);
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  return allreduce(tensors, opts);
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::reduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::ReduceOptions& opts) {
  const int root = static_cast<int>(opts.rootRank);
  const bool average = IsAverage(opts.reduceOp);
  const collective::ReduceOptions o{
      .root = root,
      .op = tensors.empty() ? ReduceOp::kSum : ParasolOp(opts.reduceOp, tensors[0]),
      .timeout_ms = Timeout(opts.timeout)};
  std::vector<Arg> args;
  for (const at::Tensor& t : tensors) args.push_back({t, true, getRank() == root});
  return Enqueue(c10d::OpType::REDUCE, "reduce", std::move(args), tensors,
                 [o, average](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   for (at::Tensor& t : host) {
                     at::Tensor w = OnWire(t);
                     collective::Reduce(ctx, w.data_ptr(), w.data_ptr(), w.numel(),
                                        ParasolDType(w.scalar_type()), o);
                     if (ctx.rank() == o.root) {
                       if (average) w.div_(ctx.size());
                       FromWire(w, t);
                     }
                   }
                 });
}

// Every rank's input into one buffer of size x n, then out to the caller's tensors.
c10::intrusive_ptr<c10d::Work> ParasolBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::AllgatherOptions& opts) {
  if (inputs.size() != 1 || outputs.size() != 1 || static_cast<int>(outputs[0].size()) != getSize()) {
    throw InvalidArgumentError(
        "parasol backend: allgather takes one input and a list of one output per rank");
  }
  const milliseconds timeout = Timeout(opts.timeout);
  std::vector<Arg> args{{inputs[0], true, false}};
  for (const at::Tensor& t : outputs[0]) args.push_back({t, false, true});
  return Enqueue(c10d::OpType::ALLGATHER, "allgather", std::move(args), outputs[0],
                 [timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   at::Tensor in = OnWire(host[0]);
                   at::Tensor all = at::empty({ctx.size() * in.numel()}, in.options());
                   collective::Allgather(ctx, in.data_ptr(), all.data_ptr(), in.numel(),
                                         ParasolDType(in.scalar_type()), {.timeout_ms = timeout});
                   for (int r = 0; r < ctx.size(); ++r) {
                     host[r + 1].copy_(all.narrow(0, r * in.numel(), in.numel()).view(host[r + 1].sizes()));
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                               const c10d::AllgatherOptions& opts) {
  if (output.numel() != input.numel() * getSize()) {
    throw InvalidArgumentError(
        fmt::format("parasol backend: all_gather_into_tensor: the output holds {} "
                    "elements, not {} ranks x {}",
                    output.numel(), getSize(), input.numel()));
  }
  const milliseconds timeout = Timeout(opts.timeout);
  return Enqueue(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor",
                 {{input, true, false}, {output, false, true}}, {output},
                 [timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   at::Tensor in = OnWire(host[0]);
                   at::Tensor out = OnWire(host[1]);
                   collective::Allgather(ctx, in.data_ptr(), out.data_ptr(), in.numel(),
                                         ParasolDType(in.scalar_type()), {.timeout_ms = timeout});
                   FromWire(out, host[1]);
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  c10::intrusive_ptr<c10d::Work> last;
  for (size_t i = 0; i < outputs.size(); ++i) last = _allgather_base(outputs[i], inputs[i], opts);
  return last;  // the worker runs them in order: the last done, all are
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::GatherOptions& opts) {
  // Every rank gathers (an all-gather), the root keeps the blocks: gather is rare and small.
  std::vector<std::vector<at::Tensor>> all(1);
  for (int r = 0; r < getSize(); ++r) all[0].push_back(at::empty_like(inputs.at(0)));
  if (getRank() == opts.rootRank) all = outputs;
  return allgather(all, inputs, {.timeout = opts.timeout});
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::scatter(std::vector<at::Tensor>& outputs,
                                                       std::vector<std::vector<at::Tensor>>& inputs,
                                                       const c10d::ScatterOptions& opts) {
  // The root's blocks broadcast as one tensor; each rank keeps its own.
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor& out = outputs.at(0);
  const milliseconds timeout = Timeout(opts.timeout);
  at::Tensor all =
      getRank() == root ? at::stack(inputs.at(0)) : at::empty({getSize(), out.numel()}, out.options());
  return Enqueue(c10d::OpType::SCATTER, "scatter", {{all, true, false}, {out, false, true}}, {out},
                 [root, timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   at::Tensor w = OnWire(host[0]);
                   collective::Broadcast(ctx, w.data_ptr(), w.numel(), ParasolDType(w.scalar_type()),
                                         {.root = root, .timeout_ms = timeout});
                   host[1].copy_(w.view({ctx.size(), -1})[ctx.rank()].view(host[1].sizes()));
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                    const c10d::ReduceScatterOptions& opts) {
  if (input.numel() != output.numel() * getSize()) {
    throw InvalidArgumentError(
        fmt::format("parasol backend: reduce_scatter_tensor: the input holds {} "
                    "elements, not {} ranks x {}",
                    input.numel(), getSize(), output.numel()));
  }
  const bool average = IsAverage(opts.reduceOp);
  const collective::ReduceScatterOptions o{.op = ParasolOp(opts.reduceOp, input),
                                           .timeout_ms = Timeout(opts.timeout)};
  return Enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor",
                 {{input, true, false}, {output, false, true}}, {output},
                 [o, average](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   at::Tensor in = OnWire(host[0]).clone();  // reduced in place
                   collective::ReduceScatter(ctx, in.data_ptr(), in.data_ptr(), in.numel(),
                                             ParasolDType(in.scalar_type()), o);
                   const int64_t n = in.numel() / ctx.size();
                   at::Tensor mine = in.narrow(0, ctx.rank() * n, n);
                   if (average) mine.div_(ctx.size());
                   host[1].copy_(mine.view(host[1].sizes()));
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                              std::vector<std::vector<at::Tensor>>& inputs,
                                                              const c10d::ReduceScatterOptions& opts) {
  if (outputs.size() != 1 || inputs.size() != 1 || static_cast<int>(inputs[0].size()) != getSize()) {
    throw InvalidArgumentError(
        "parasol backend: reduce_scatter takes one output and a list of one input per rank");
  }
  at::Tensor flat = at::cat(inputs[0]).view({-1});
  return _reduce_scatter_base(outputs[0], flat, opts);
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  c10::intrusive_ptr<c10d::Work> last;
  for (size_t i = 0; i < outputs.size(); ++i) last = _reduce_scatter_base(outputs[i], inputs[i], opts);
  return last;
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                             std::vector<int64_t>& output_splits,
                                                             std::vector<int64_t>& input_splits,
                                                             const c10d::AllToAllOptions& opts) {
  const int p = getSize();
  const auto check = [&](const std::vector<int64_t>& splits, const at::Tensor& t, const char* which) {
    const int64_t rows = t.dim() ? t.size(0) : 1;
    if (splits.empty() ? rows % p != 0
                       : static_cast<int>(splits.size()) != p ||
                             std::accumulate(splits.begin(), splits.end(), int64_t{0}) != rows) {
      throw InvalidArgumentError(
          fmt::format("parasol backend: all_to_all_single: the {} splits do not cut its "
                      "{} rows into {} blocks",
                      which, rows, p));
    }
  };
  check(input_splits, input, "input");
  check(output_splits, output, "output");
  const int64_t in_row = input.dim() ? input.numel() / std::max<int64_t>(input.size(0), 1) : 1;
  const int64_t out_row = output.dim() ? output.numel() / std::max<int64_t>(output.size(0), 1) : 1;
  std::vector<uint64_t> send(p), recv(p);
  for (int r = 0; r < p; ++r) {
    send[r] = input_splits.empty() ? input.numel() / p : input_splits.at(r) * in_row;
    recv[r] = output_splits.empty() ? output.numel() / p : output_splits.at(r) * out_row;
  }
  const milliseconds timeout = Timeout(opts.timeout);
  return Enqueue(c10d::OpType::ALLTOALL_BASE, "all_to_all_single",
                 {{input, true, false}, {output, false, true}}, {output},
                 [send, recv, timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   at::Tensor in = OnWire(host[0]);
                   at::Tensor out = OnWire(host[1]);
                   collective::Alltoallv(ctx, in.data_ptr(), send, out.data_ptr(), recv,
                                         ParasolDType(in.scalar_type()), {.timeout_ms = timeout});
                   FromWire(out, host[1]);
                 });
}

// One task: the inputs into one buffer, the exchange, the blocks out to the caller's tensors. (Two
// tasks through a device tensor raced on GPUs: the second staged that tensor, on its own stream,
// before the first had copied the exchange's result back into it.)
c10::intrusive_ptr<c10d::Work> ParasolBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::AllToAllOptions& opts) {
  const int p = getSize();
  if (static_cast<int>(inputs.size()) != p || static_cast<int>(outputs.size()) != p) {
    throw InvalidArgumentError(
        fmt::format("parasol backend: all_to_all takes one input and one output per rank ({}), not {} and {}",
                    p, inputs.size(), outputs.size()));
  }
  std::vector<uint64_t> send, recv;
  std::vector<Arg> args;
  for (const at::Tensor& t : inputs) {
    args.push_back({t, true, false});
    send.push_back(static_cast<uint64_t>(t.numel()));
  }
  for (const at::Tensor& t : outputs) {
    args.push_back({t, false, true});
    recv.push_back(static_cast<uint64_t>(t.numel()));
  }
  const milliseconds timeout = Timeout(opts.timeout);
  return Enqueue(c10d::OpType::ALLTOALL, "alltoall", std::move(args), outputs,
                 [p, send, recv, timeout](comm::Context& ctx, std::vector<at::Tensor>& host) {
                   std::vector<at::Tensor> flat;
                   for (int r = 0; r < p; ++r) flat.push_back(host[r].reshape({-1}));
                   at::Tensor in = OnWire(at::cat(flat));
                   const auto total = std::accumulate(recv.begin(), recv.end(), uint64_t{0});
                   at::Tensor out = at::empty({static_cast<int64_t>(total)}, in.options());
                   collective::Alltoallv(ctx, in.data_ptr(), send, out.data_ptr(), recv,
                                         ParasolDType(in.scalar_type()), {.timeout_ms = timeout});
                   int64_t at = 0;
                   for (int r = 0; r < p; ++r) {
                     const auto n = static_cast<int64_t>(recv[r]);
                     host[p + r].copy_(out.narrow(0, at, n).view(host[p + r].sizes()));
                     at += n;
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::barrier(const c10d::BarrierOptions& opts) {
  const milliseconds timeout = Timeout(opts.timeout);
  return Enqueue(
      c10d::OpType::BARRIER, "barrier", {}, {},
      [timeout](comm::Context& ctx, std::vector<at::Tensor>&) { collective::Barrier(ctx, timeout); });
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  if (tensors.size() != 1 || !tensors[0].device().is_cpu())
    throw InvalidArgumentError("parasol backend: send takes one CPU tensor");
  if (tag < 0 || static_cast<comm::Tag>(tag) > comm::kMaxUserTag)
    throw InvalidArgumentError(
        fmt::format("parasol backend: tag {} is not in [0, {}]", tag, comm::kMaxUserTag));
  at::Tensor w = OnWire(tensors[0]).clone();
  comm::Transport& t = p2p_->transport();
  comm::Request req = world_->Guard(
      [&] { return t.Isend(dst, static_cast<comm::Tag>(tag), w.data_ptr(), w.numel() * w.element_size()); });
  return c10::make_intrusive<RequestWork>(c10d::OpType::SEND, t, std::move(req), w, timeout_,
                                          fmt::format("send to {} (tag {})", dst, tag), world_);
}

c10::intrusive_ptr<c10d::Work> ParasolBackend::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  at::Tensor& out = tensors.at(0);
  if (tensors.size() != 1 || !out.device().is_cpu() || Wire(out.scalar_type()) != out.scalar_type() ||
      !out.is_contiguous()) {
    throw InvalidArgumentError(
        "parasol backend: recv takes one contiguous CPU tensor of float32, float64, "
        "int32 or int64");
  }
  if (tag < 0 || static_cast<comm::Tag>(tag) > comm::kMaxUserTag)
    throw InvalidArgumentError(
        fmt::format("parasol backend: tag {} is not in [0, {}]", tag, comm::kMaxUserTag));
  comm::Transport& t = p2p_->transport();
  comm::Request req = world_->Guard([&] {
    return t.Irecv(src, static_cast<comm::Tag>(tag), out.data_ptr(), out.numel() * out.element_size());
  });
  return c10::make_intrusive<RequestWork>(c10d::OpType::RECV, t, std::move(req), out, timeout_,
                                          fmt::format("recv from {} (tag {})", src, tag), world_);
}

void RegisterC10d(py::module_& m) {
  m.def(
      "_c10d_backend",
      [](std::shared_ptr<World> world, int rank, int size, int64_t timeout_ms,
         const std::string& algorithm) -> c10::intrusive_ptr<c10d::Backend> {
        return c10::make_intrusive<ParasolBackend>(std::move(world), rank, size, milliseconds(timeout_ms),
                                                   collective::ParseAllreduceAlgorithm(algorithm));
      },
      py::arg("world"), py::arg("rank"), py::arg("size"), py::arg("timeout_ms"),
      py::arg("algorithm") = "auto");
}

}  // namespace parasol::bindings
