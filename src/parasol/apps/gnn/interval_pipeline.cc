#include "parasol/apps/gnn/interval_pipeline.h"

#include <algorithm>
#include <exception>
#include <future>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

// Waits for every future, then rethrows the first error (no task may outlive the data it uses).
void WaitAll(std::vector<std::future<void>>& futures) {
  std::exception_ptr first;
  for (std::future<void>& f : futures) {
    if (!f.valid()) continue;
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace

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
  std::vector<std::future<void>> graphs(intervals), tensors(intervals);
  try {
    for (size_t i = 0; i < intervals && graph && graph_pool_; ++i)
      graphs[i] = graph_pool_->Submit([&graph, i] { graph(i); });
    for (size_t i = 0; i < intervals; ++i) {
      if (graph) {
        if (graph_pool_) {
          graphs[i].get();
        } else {
          graph(i);
        }
      }
      if (!tensor) continue;
      if (tensor_pool_) {
        tensors[i] = tensor_pool_->Submit([&tensor, i] { tensor(i); });
      } else {
        tensor(i);
      }
    }
  } catch (...) {
    // The tasks still queued or running read the caller's data: let them end first.
    try {
      WaitAll(graphs);
      WaitAll(tensors);
    } catch (...) {
    }
    throw;
  }
  WaitAll(tensors);
}

void IntervalPipeline::RunTensor(size_t intervals, const std::function<void(size_t)>& tensor) {
  Run(intervals, {}, tensor);
}

}  // namespace parasol::apps::gnn
