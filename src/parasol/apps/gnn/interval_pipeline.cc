#include "parasol/apps/gnn/interval_pipeline.h"

#include <algorithm>

#include "parasol/core/error.h"
#include "parasol/core/task_group.h"

namespace parasol::apps::gnn {

IntervalPipeline::IntervalPipeline(PipelineOptions options) : options_(options) {
  if (options_.interval_rows == 0) throw InvalidArgumentError("interval rows must be positive");
  if (options_.graph_threads > 0) graph_pool_ = std::make_unique<ThreadPool>(options_.graph_threads);
  if (options_.tensor_threads > 0) tensor_pool_ = std::make_unique<ThreadPool>(options_.tensor_threads);
}

std::vector<RowRange> IntervalPipeline::Intervals(RowRange rows) const {
  std::vector<RowRange> out;
  for (size_t b = rows.begin; b < rows.end; b += options_.interval_rows)
    out.push_back({b, std::min(rows.end, b + options_.interval_rows)});
  return out;
}

void IntervalPipeline::Run(size_t intervals, const std::function<void(size_t)>& graph,
                           const std::function<void(size_t)>& tensor) {
  if (!graph_pool_ && !tensor_pool_) {
    for (size_t i = 0; i < intervals; ++i) {
      if (graph) graph(i);
      if (tensor) tensor(i);
    }
    return;
  }
  // The tensor tasks are declared last, so they end first if an error leaves: they read what the
  // graph tasks wrote (both read the caller's data).
  TaskGroup graphs(graph_pool_.get());
  TaskGroup tensors(tensor_pool_.get());
  std::vector<size_t> graph_task(intervals);
  for (size_t i = 0; i < intervals && graph && graph_pool_; ++i)
    graph_task[i] = graphs.Run([&graph, i] { graph(i); });
  for (size_t i = 0; i < intervals; ++i) {
    if (graph && graph_pool_) graphs.WaitFor(graph_task[i]);
    if (graph && !graph_pool_) graph(i);
    if (tensor) tensors.Run([&tensor, i] { tensor(i); });
  }
  tensors.Wait();
}

void IntervalPipeline::RunTensor(size_t intervals, const std::function<void(size_t)>& tensor) {
  Run(intervals, {}, tensor);
}

}  // namespace parasol::apps::gnn
