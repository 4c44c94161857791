// Full-graph training of a node classifier over ranks: the graph partitioned by vertex, the
// weights replicated and kept equal (every rank applies the same Adam step to the gradient summed
// over ranks through the parameter server), so that any number of ranks computes what one process
// does, up to the order of floating-point sums. Under a staleness bound (GnnOptions::staleness)
// the ranks stop waiting for each other's work of the same epoch; the replicas still stay equal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parasol/apps/gnn/ghost_exchange.h"
#include "parasol/apps/gnn/graph.h"
#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/apps/gnn/interval_pipeline.h"
#include "parasol/comm/context.h"

namespace parasol::apps::gnn {

struct GnnOptions {
  std::string model = "gcn";       // or "gat"
  std::vector<size_t> hidden{16};  // one hidden layer of 16: Kipf and Welling's GCN
  // Scale each vertex's features to sum 1 (Kipf and Welling's preprocessing of bag-of-words
  // features: long documents weigh no more than short ones).
  bool normalize_features = true;
  float dropout = 0.5f;
  float lr = 0.01f;
  // L2 on the first layer's weights, as the GCN paper (the other layers are small).
  float weight_decay = 5e-4f;
  int epochs = 200;
  // Stop when the validation loss has not improved for this many epochs and report the epoch
  // where it was lowest (0: run every epoch, report the last).
  int patience = 0;
  uint64_t seed = 1;
  PartitionKind partition = PartitionKind::kHash;
  std::string checkpoint_dir;  // a checkpoint here every checkpoint_every epochs and at the end
  int checkpoint_every = 0;
  std::string resume_dir;  // continue from this checkpoint up to `epochs`
  // Bounded staleness (Dorylus): an epoch's ghost rows are the owners' of S epochs before, the
  // other ranks' part of its backward pass arrives S epochs late, and its weights lack at most
  // the gradients of the last S epochs (0: synchronous, equal to one process). The epochs'
  // figures then travel with the gradients: each epoch is reported S + 1 epochs after it ran
  // (early stopping decides as late). A checkpoint keeps the weights, not the sums in flight.
  uint32_t staleness = 0;
  // With staleness 0: ghost rows sent by their owners, or read from the owners' registered memory.
  GhostTransfer ghost_transfer = GhostTransfer::kTwoSided;
  // The graph and tensor pools of each rank (computation separation) and the intervals' rows.
  PipelineOptions pipeline;
  // The last this many ranks run only the tensor tasks of the others (Dorylus's cheap workers;
  // GCN only): graph rank r sends them to worker graph_ranks + r % tensor_workers.
  uint32_t tensor_workers = 0;
  // The reported parameters' class for every vertex, in GnnResult::predictions (one more pass).
  bool predict = false;
};

struct GnnEpoch {
  int epoch = 0;  // 1-based
  double seconds = 0;
  double train_loss = 0, train_accuracy = 0;                 // the training pass (dropout on)
  double val_loss = 0, val_accuracy = 0, test_accuracy = 0;  // evaluated after the step
  uint64_t bytes_sent = 0;                                   // by this rank, so far
};

struct GnnResult {
  int first_epoch = 1;           // 1, or the checkpoint's epoch + 1
  std::vector<GnnEpoch> epochs;  // this run's
  // The last epoch, or with patience the lowest validation loss (perhaps before a resume; its
  // seconds and bytes_sent are then 0); its parameters.
  GnnEpoch reported;
  std::vector<float> parameters;
  // With GnnOptions::predict, on every graph rank: each vertex's class under `parameters` (the
  // largest output), by vertex id.
  std::vector<int32_t> predictions;
  bool stopped_early = false;
  double seconds = 0;
  bool tensor_worker = false;  // this rank served tensor tasks: nothing above is set
};

// Every rank passes the whole graph (it keeps only its part). `on_epoch` runs on every rank after
// each epoch with the global figures. Every exchange waits at most the context's deadline: throws
// TimeoutError/PeerGoneError naming the peer when a rank does not keep up. InvalidArgumentError
// when the graph has no training vertex or the checkpoint to resume is of another model.
GnnResult TrainGnn(comm::Context& ctx, const Graph& g, const GnnOptions& o,
                   const std::function<void(const GnnEpoch&)>& on_epoch = {});
// The same, freeing the graph once this rank's part is cut from it (a process then holds its part
// alone while it trains).
GnnResult TrainGnn(comm::Context& ctx, Graph&& g, const GnnOptions& o,
                   const std::function<void(const GnnEpoch&)>& on_epoch = {});

}  // namespace parasol::apps::gnn
