// parasol as a torch.distributed backend: `import parasol.torch` registers "parasol", so that
// torch.distributed.init_process_group("parasol") under mpirun runs DDP, FSDP and users' own
// collectives on parasol's algorithms (the allreduce algorithm by "auto" unless the environment's
// PARASOL_C10D_ALGORITHM names one).
//
// Each collective is queued, in the order the caller issues it (which every rank shares, as
// torch.distributed requires), on the backend's worker thread, which runs it over its own
// duplicate of the job's context; its Work (and the Work's future, which DDP chains on) completes
// when the call ends, or fails with parasol's error (rank, operation, peer) once the process
// group's timeout passes. send and recv are posted at once on a second duplicate (so a receive
// does not hold up the collectives behind it) and complete in wait(). After a failure every later
// operation fails at once, the world is marked failed and the job aborts when Python exits.
//
// Tensors of any dtype: reductions widen what parasol cannot reduce (16-bit floats to float32,
// small integers and bool to int32 or int64), data movement moves values the same way. CUDA
// tensors are staged through pinned host memory on the backend's own stream, after an event
// recorded on the caller's current stream; a CUDA Work's wait() makes the caller's current stream
// wait for the copy back (torch's device-generic streams and events: no CUDA toolkit needed).
//
// Threading: called from the Python threads torch.distributed calls it from; the worker thread
// is the only one that uses the collectives' context.
#pragma once

#include <pybind11/pybind11.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "parasol/bindings/world.h"
#include "parasol/collective/algorithm.h"
#include "parasol/comm/context.h"
#include "parasol/core/thread_pool.h"

namespace parasol::bindings {

class ParasolBackend final : public c10d::Backend {
 public:
  // Collective over every rank of the world (the contexts are duplicated). rank and size are
  // torch's view, which must be MPI's (InvalidArgumentError otherwise).
  ParasolBackend(std::shared_ptr<World> world, int rank, int size, std::chrono::milliseconds timeout,
                 collective::AllreduceAlgorithm algorithm);
  ~ParasolBackend() override;

  const std::string getBackendName() const override { return "parasol"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;

  // A body runs on the worker over host tensors (CUDA arguments staged), in argument order.
  using Body = std::function<void(comm::Context& ctx, std::vector<at::Tensor>& host)>;
  struct Arg {
    at::Tensor tensor;
    bool read = true, write = true;
  };

 private:
  c10::intrusive_ptr<c10d::Work> Enqueue(c10d::OpType type, std::string name, std::vector<Arg> args,
                                         std::vector<at::Tensor> result, Body body);
  std::chrono::milliseconds Timeout(std::chrono::milliseconds requested) const;

  std::shared_ptr<World> world_;
  std::chrono::milliseconds timeout_;
  collective::AllreduceAlgorithm algorithm_;
  std::unique_ptr<comm::Context> ctx_;  // the worker's
  std::unique_ptr<comm::Context> p2p_;  // send and recv
  std::mutex mu_;
  std::exception_ptr failure_;  // guarded by mu_: the first failure, which fails the rest
  // Guarded by mu_: finished operations, with the tensors they held. The worker never drops a
  // reference to a tensor (a Python object's may be the last, and taking the GIL then fails while
  // the interpreter shuts down): the calling thread releases them at its next call, or the
  // destructor does.
  std::vector<c10::intrusive_ptr<c10::intrusive_ptr_target>> finished_;
  ThreadPool worker_{1};  // last: joined first, while the contexts still exist
};

void RegisterC10d(pybind11::module_& m);

}  // namespace parasol::bindings
