// Dorylus's computation separation within a rank: a pass over a shard's rows is cut into
// intervals; each interval's graph task (a gather over edges: sparse, bound by memory) runs on
// the graph pool and its tensor task (dense products and activations) on the tensor pool as soon
// as that graph task is done, so interval i's tensor work overlaps interval i + 1's graph work.
// Without pools (0 threads) the tasks run in order on the caller's thread.
//
// Results do not depend on the pools: the intervals depend on the rows alone, every task writes
// rows of its own, and where tasks would add into one place (a weight gradient) the caller keeps
// one partial sum per interval and adds them in interval order.
//
// Threading: one caller at a time; tasks of one Run may run concurrently with each other (a graph
// task with tensor tasks of earlier intervals) and must touch disjoint data.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "parasol/apps/gnn/layer_ops.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::gnn {

struct PipelineOptions {
  size_t graph_threads = 0;  // 0: graph tasks on the caller's thread
  size_t tensor_threads = 0;
  size_t interval_rows = 8192;
};

class IntervalPipeline {
 public:
  explicit IntervalPipeline(PipelineOptions options = {});

  const PipelineOptions& options() const { return options_; }
  // Rows [begin, end) cut into intervals of interval_rows (the last one shorter).
  std::vector<RowRange> Intervals(RowRange rows) const;
  // graph(i), then tensor(i), for every interval i. Rethrows the first task's error once every
  // task started has ended.
  void Run(size_t intervals, const std::function<void(size_t)>& graph,
           const std::function<void(size_t)>& tensor);
  // tensor(i) for every interval, on the tensor pool.
  void RunTensor(size_t intervals, const std::function<void(size_t)>& tensor);

 private:
  PipelineOptions options_;
  std::unique_ptr<ThreadPool> graph_pool_, tensor_pool_;
};

}  // namespace parasol::apps::gnn
