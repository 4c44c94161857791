// Dorylus's cheap workers: ranks that only run tensor tasks (the dense products, activations and
// their gradients) for graph ranks, which keep the graph, the gathers over edges and the ghost
// exchanges. A graph rank's RemoteTensorOps sends each task's input rows to its worker and
// receives the output rows; the worker mirrors what the tasks read of the graph rank's shard (the
// vertex ids, for the dropout masks, and the features), sent once.
//
// The link is a context over every rank (graph ranks and workers), apart from the one the graph
// ranks train on. A request is one message (a header and the input rows) on the request tag; its
// reply comes on a tag of the request's own, so calls from several threads of a graph rank (a
// tensor pool) may be in flight at once. Every wait has the link's deadline: a worker that dies
// is a TimeoutError or PeerGoneError naming it, and a graph rank that dies ends its worker's wait
// for requests the same way.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/gnn/tensor_ops.h"
#include "parasol/comm/context.h"

namespace parasol::apps::gnn {

class RemoteTensorOps : public TensorOps {
 public:
  // Sends the shard's ids and features and the shapes to `worker` (a rank of `link`). The shard
  // and shapes outlive this object.
  RemoteTensorOps(comm::Context& link, int worker, const GraphShard& s, const LayerShapes& shapes);
  // Tells the worker this graph rank is done (it serves until all its graph ranks are). Call once,
  // after the last task; without it the worker ends at its deadline with an error.
  void Finish();

  void SetParameters(std::span<const float> params) override;
  void ProjectFeatures(const DropoutDraw& d, RowRange rows, float* t) override;
  void ActivateProject(const DropoutDraw& d, size_t l, const float* z, RowRange rows, float* h,
                       float* t) override;
  void Project(size_t l, const float* h, RowRange rows, float* t) override;
  void BackwardRows(const DropoutDraw& d, size_t l, const float* dt, const float* h, RowRange rows, float* gw,
                    float* dh) override;
  void ActivateBackward(const DropoutDraw& d, size_t l, const float* z, const float* dh, RowRange rows,
                        float* dz) override;

  // Bytes of requests sent to the worker.
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct Part {
    const float* rows;  // of a whole matrix
    size_t width;
  };
  // Sends one request (op, layer, rows, draw; then each part's rows) and waits for the reply,
  // `reply_floats` long, into `reply`.
  void Call(uint32_t op, size_t l, RowRange rows, const DropoutDraw& d, std::span<const Part> parts,
            std::vector<float>* reply, size_t reply_floats);
  // Sends `message` on the request tag and waits for the reply on `reply_tag`; `what` names the
  // operation in errors.
  void Exchange(const std::vector<std::byte>& message, uint32_t reply_tag, std::vector<float>* reply,
                size_t reply_floats, const std::string& what);

  comm::Context& link_;
  const int worker_;
  const GraphShard& s_;
  const LayerShapes& shapes_;
  std::atomic<uint32_t> next_call_{0};
  std::atomic<uint64_t> bytes_sent_{0};
};

// Serves the tensor tasks of the graph ranks `clients` (ranks of `link`) until each has finished.
// Every rank of the link that is not a graph rank calls it.
void ServeTensorTasks(comm::Context& link, std::span<const int> clients);

// Which worker serves graph rank `graph_rank` when the link's last `workers` ranks are workers.
int TensorWorkerOf(int graph_rank, int graph_ranks, int workers);

}  // namespace parasol::apps::gnn
