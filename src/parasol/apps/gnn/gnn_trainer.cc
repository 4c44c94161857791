#include "parasol/apps/gnn/gnn_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>

#include "parasol/apps/gnn/epoch_figures.h"
#include "parasol/apps/gnn/ghost_exchange.h"
#include "parasol/apps/gnn/gnn_checkpoint.h"
#include "parasol/apps/gnn/gnn_model.h"
#include "parasol/apps/gnn/gradient_table.h"
#include "parasol/apps/gnn/tensor_worker.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/divergence_guard.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/core/train_loop.h"

namespace parasol::apps::gnn {

namespace {

// Adam (Kingma and Ba) with the bias correction, as torch.optim.Adam.
class Adam {
 public:
  Adam(size_t size, float lr) : lr_(lr), m_(size, 0.0f), v_(size, 0.0f) {}
  uint64_t steps() const { return t_; }
  // The moments, m then v, as a checkpoint stores them (floats as doubles: exact).
  std::vector<double> Moments() const {
    std::vector<double> out(m_.begin(), m_.end());
    out.insert(out.end(), v_.begin(), v_.end());
    return out;
  }
  void Restore(std::span<const double> moments, uint64_t steps) {
    std::copy(moments.begin(), moments.begin() + static_cast<std::ptrdiff_t>(m_.size()), m_.begin());
    std::copy(moments.begin() + static_cast<std::ptrdiff_t>(m_.size()), moments.end(), v_.begin());
    t_ = steps;
  }
  void Step(std::span<float> params, std::span<const float> grad) {
    ++t_;
    const auto t = static_cast<double>(t_);
    const double c1 = 1 - std::pow(kBeta1, t), c2 = 1 - std::pow(kBeta2, t);
    const auto step = static_cast<float>(lr_ / c1), root_c2 = static_cast<float>(std::sqrt(c2));
    for (size_t i = 0; i < params.size(); ++i) {
      m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * grad[i];
      v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * grad[i] * grad[i];
      params[i] -= step * m_[i] / (std::sqrt(v_[i]) / root_c2 + kEpsilon);
    }
  }

 private:
  static constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;
  float lr_;
  uint64_t t_ = 0;
  std::vector<float> m_, v_;
};

// Softmax cross-entropy summed over the owned vertices of each split, and correct predictions.
struct SplitSums {
  double loss[3] = {0, 0, 0}, correct[3] = {0, 0, 0};
};

// Sums over owned rows; if `d_train` is given, it receives d(mean training loss)/d(output) with
// the global number of training vertices `train_total`.
SplitSums Score(const GraphShard& s, std::span<const float> out, size_t train_total,
                std::vector<float>* d_train) {
  const auto c = static_cast<size_t>(s.classes);
  SplitSums sums;
  if (d_train) d_train->assign(out.size(), 0.0f);
  std::vector<double> p(c);
  for (size_t i = 0; i < s.owned.size(); ++i) {
    const auto split = static_cast<size_t>(s.split[i]);
    if (split > 2) continue;  // unlabeled
    const float* z = out.data() + i * c;
    const float top = *std::max_element(z, z + c);
    double total = 0;
    for (size_t k = 0; k < c; ++k) total += p[k] = std::exp(static_cast<double>(z[k] - top));
    const auto label = static_cast<size_t>(s.labels[i]);
    sums.loss[split] += std::log(total) - static_cast<double>(z[label] - top);
    sums.correct[split] += static_cast<size_t>(std::max_element(z, z + c) - z) == label ? 1 : 0;
    if (d_train && s.split[i] == Split::kTrain) {
      for (size_t k = 0; k < c; ++k) {
        const double d = (p[k] / total - (k == label ? 1 : 0)) / static_cast<double>(train_total);
        (*d_train)[i * c + k] = static_cast<float>(d);
      }
    }
  }
  return sums;
}

void NormalizeFeatureRows(GraphShard* s) {
  for (size_t i = 0; i < s->local_rows(); ++i) {
    const auto begin = s->feature_values.begin() + static_cast<std::ptrdiff_t>(s->feature_offsets[i]);
    const auto end = s->feature_values.begin() + static_cast<std::ptrdiff_t>(s->feature_offsets[i + 1]);
    double sum = 0;
    for (auto it = begin; it != end; ++it) sum += *it;
    if (sum == 0) continue;  // no features, or values that cancel: left as they are
    for (auto it = begin; it != end; ++it) *it = static_cast<float>(*it / sum);
  }
}

// Where early stopping stands: the epoch it would report, its parameters, the epochs since.
struct EarlyStop {
  GnnEpoch best;
  std::vector<float> params;
  uint64_t since_best = 0;
  bool have = false;
};

// GCN's shape is its widths alone (the checkpoints written before GAT); other models' start with
// their name.
std::string Shape(const GnnModel& model) {
  std::string shape = model.name() == "gcn" ? "" : fmt::format("{}:", model.name());
  fmt::format_to(std::back_inserter(shape), "{}", model.in_width(0));
  for (size_t l = 0; l < model.layers(); ++l)
    fmt::format_to(std::back_inserter(shape), "x{}", model.out_width(l));
  return shape;
}

// Each rank reads the checkpoint (a shared folder, or a copy on every host).
uint64_t Resume(const std::string& dir, GnnModel* model, Adam* adam, EarlyStop* stop) {
  const GnnCheckpoint c = ReadGnnCheckpoint(dir, Shape(*model), model->parameters().size());
  std::copy(c.params.begin(), c.params.end(), model->parameters().begin());
  adam->Restore(c.adam, c.adam_steps);
  stop->have = c.best_epoch > 0;
  stop->since_best = c.since_best;
  stop->params.assign(c.best.begin(), c.best.end());
  stop->best = GnnEpoch{.epoch = static_cast<int>(c.best_epoch),
                        .train_loss = c.best_train_loss,
                        .train_accuracy = c.best_train_accuracy,
                        .val_loss = c.best_val_loss,
                        .val_accuracy = c.best_val_accuracy,
                        .test_accuracy = c.best_test_accuracy};
  return c.epoch;
}

void Checkpoint(comm::Context& ctx, const std::string& dir, uint64_t epoch, const GnnModel& model,
                const Adam& adam, const EarlyStop& stop) {
  if (ctx.rank() == 0) {  // the replicas are equal
    const GnnEpoch& b = stop.best;
    GnnCheckpoint c{.shape = Shape(model),
                    .epoch = epoch,
                    .adam_steps = adam.steps(),
                    .params = {model.parameters().begin(), model.parameters().end()},
                    .adam = adam.Moments(),
                    .best = {stop.params.begin(), stop.params.end()},
                    .best_epoch = static_cast<uint64_t>(b.epoch),
                    .since_best = stop.since_best,
                    .best_train_loss = b.train_loss,
                    .best_train_accuracy = b.train_accuracy,
                    .best_val_loss = b.val_loss,
                    .best_val_accuracy = b.val_accuracy,
                    .best_test_accuracy = b.test_accuracy};
    WriteGnnCheckpoint(ctx.env().files(), dir, c);
  }
  collective::Barrier(ctx);  // nobody reports the checkpoint before it is whole
}

// The shard of this rank; METIS takes a while on big graphs, so one rank runs it and tells the
// others.
GraphShard MakeRankShard(comm::Context& ctx, const Graph& g, const GnnOptions& o) {
  std::vector<int32_t> owner;
  if (o.partition == PartitionKind::kMetis && ctx.size() > 1) {
    owner =
        ctx.rank() == 0 ? PartitionVertices(g, ctx.size(), o.partition) : std::vector<int32_t>(g.vertices);
    collective::Broadcast<int32_t>(ctx, owner);
  } else {
    owner = PartitionVertices(g, ctx.size(), o.partition);
  }
  GraphShard s = MakeShard(g, owner, ctx.rank(), ctx.size());
  if (o.normalize_features) NormalizeFeatureRows(&s);
  return s;
}

// The reported epoch's figures again, with its parameters and fresh ghost rows: under a bound,
// the epochs' evaluations read ghost rows S epochs old.
void ReevaluateWithFreshGhosts(comm::Context& ctx, const GraphShard& s, const std::array<double, 3>& counts,
                               GnnModel* model, EarlyStop* stop) {
  std::copy(stop->params.begin(), stop->params.end(), model->parameters().begin());
  GhostExchange fresh(ctx, 0);
  model->Forward(fresh, s, {});
  const SplitSums eval = Score(s, model->output(), static_cast<size_t>(counts[0]), nullptr);
  double sums[3] = {eval.loss[1], eval.correct[1], eval.correct[2]};
  collective::Allreduce<double>(ctx, sums);
  const double val = counts[1], test = counts[2];
  if (val > 0) {
    stop->best.val_loss = sums[0] / val;
    stop->best.val_accuracy = sums[1] / val;
  }
  if (test > 0) stop->best.test_accuracy = sums[2] / test;
}

// Every vertex's class under `params`: a forward pass on fresh ghosts, each rank's owned vertices
// gathered by id.
std::vector<int32_t> PredictVertices(comm::Context& ctx, const GraphShard& s, std::span<const float> params,
                                     GnnModel* model) {
  std::copy(params.begin(), params.end(), model->parameters().begin());
  GhostExchange fresh(ctx, 0);
  model->Forward(fresh, s, {});
  const auto c = static_cast<size_t>(s.classes);
  const std::span<const float> out = model->output();
  std::vector<int64_t> mine;  // (vertex, class) pairs
  for (size_t i = 0; i < s.owned.size(); ++i) {
    const float* z = out.data() + i * c;
    mine.push_back(s.owned[i]);
    mine.push_back(std::max_element(z, z + c) - z);
  }
  const std::vector<int64_t> all =
      collective::AllgatherVariable<int64_t>(ctx, std::span<const int64_t>(mine));
  int64_t vertices = 0;
  for (size_t i = 0; i < all.size(); i += 2) vertices = std::max(vertices, all[i] + 1);
  std::vector<int32_t> predicted(static_cast<size_t>(vertices), -1);
  for (size_t i = 0; i < all.size(); i += 2)
    predicted[static_cast<size_t>(all[i])] = static_cast<int32_t>(all[i + 1]);
  return predicted;
}

// The tensor tasks' shapes as the model lays out its parameters.
LayerShapes ShapesOf(const GnnModel& model) {
  LayerShapes shapes{.widths = {model.in_width(0)}};
  for (size_t l = 0; l < model.layers(); ++l) {
    shapes.widths.push_back(model.out_width(l));
    shapes.offsets.push_back(model.weight_offset(l));
  }
  return shapes;
}

// Training on the graph ranks (ctx); `link`, if any, reaches this rank's tensor worker. With
// `release` (the graph itself), the graph is freed once this rank's shard is cut from it.
GnnResult TrainOnGraphRanks(comm::Context& ctx, const Graph& g, Graph* release, const GnnOptions& o,
                            comm::Context* link, const std::function<void(const GnnEpoch&)>& on_epoch) {
  const size_t train = g.CountSplit(Split::kTrain);
  if (train == 0) throw InvalidArgumentError("the graph has no training vertex (split 'train')");
  if (o.patience > 0 && g.CountSplit(Split::kValidation) == 0)
    throw InvalidArgumentError("early stopping (patience) needs validation vertices (split 'val')");
  const std::array<double, 3> counts = {static_cast<double>(train),
                                        static_cast<double>(g.CountSplit(Split::kValidation)),
                                        static_cast<double>(g.CountSplit(Split::kTest))};
  const GraphShard s = MakeRankShard(ctx, g, o);
  const std::unique_ptr<GnnModel> made =
      MakeGnnModel(o.model, g.features, o.hidden, static_cast<size_t>(g.classes));
  if (release) *release = Graph();
  GnnModel& model = *made;
  model.InitGlorot(o.seed);
  IntervalPipeline pipeline(o.pipeline);
  model.UsePipeline(&pipeline);
  const LayerShapes shapes = ShapesOf(model);
  std::unique_ptr<RemoteTensorOps> remote;
  if (link) {
    remote = std::make_unique<RemoteTensorOps>(
        *link, TensorWorkerOf(ctx.rank(), ctx.size(), static_cast<int>(o.tensor_workers)), s, shapes);
    model.UseTensorOps(remote.get());
  }
  Adam adam(model.parameters().size(), o.lr);
  EarlyStop stop;
  GnnResult result;
  if (!o.resume_dir.empty())
    result.first_epoch = static_cast<int>(Resume(o.resume_dir, &model, &adam, &stop)) + 1;
  bool stopped = o.patience > 0 && stop.since_best >= static_cast<uint64_t>(o.patience);
  const bool carried = o.staleness > 0;  // the figures travel with the gradients
  // The figures are the same on every rank (sums over all of them): every rank stops at one epoch.
  DivergenceGuard diverged("training loss", "epoch", "lower --lr");
  EpochFigures figures(ctx, counts, carried, [&](const GnnEpoch& e, std::span<const float> params) {
    result.epochs.push_back(e);
    if (on_epoch) on_epoch(e);
    diverged.Check(e.epoch, e.train_loss);
    // Under a bound the epochs that ran while a decision to stop travelled are
    // reported, not chosen: the choice is the one a synchronous run makes.
    if (stopped) return;
    if (o.patience == 0 || !stop.have || e.val_loss < stop.best.val_loss) {
      stop = {.best = e, .params = {params.begin(), params.end()}, .have = true};
    } else {
      stopped = ++stop.since_best >= static_cast<uint64_t>(o.patience);
    }
  });
  GhostExchange ghosts(ctx, o.staleness, o.ghost_transfer);
  GradientTable gradient_sums(ctx, model.parameters().size(), carried ? EpochFigures::kCarried : 0,
                              o.staleness, ctx.options().timeout_ms);
  std::vector<float> grad(model.parameters().size()), summed, d_out;
  std::vector<double> arrived;
  const auto start = std::chrono::steady_clock::now();
  // A step is an epoch: step s is epoch s + 1.
  TrainLoopHooks hooks;
  hooks.finished = [&](int64_t done) { return stopped || done >= o.epochs; };
  hooks.step = [&](int64_t step) {
    const int epoch = static_cast<int>(step) + 1;
    ghosts.BeginEpoch(static_cast<uint64_t>(epoch));
    model.Forward(ghosts, s, {.rate = o.dropout, .seed = o.seed, .epoch = static_cast<uint64_t>(epoch)});
    const SplitSums fit = Score(s, model.output(), train, &d_out);
    model.Backward(ghosts, s, d_out, grad);
    const auto carry = figures.Fitted(epoch, fit.loss[0], fit.correct[0]);
    if (gradient_sums.Push(grad, carried ? std::span<const double>(carry) : std::span<const double>(),
                           &summed,
                           &arrived)) {  // the sums of S epochs ago
      if (carried) figures.Arrived(epoch - static_cast<int>(o.staleness), arrived);
      const float* w0 = model.parameters().data() + model.weight_offset(0);
      for (size_t i = 0; i < model.in_width(0) * model.out_width(0); ++i) summed[i] += o.weight_decay * w0[i];
      adam.Step(model.parameters(), summed);
    }
    model.Forward(ghosts, s, {});
    const SplitSums eval = Score(s, model.output(), train, nullptr);
    figures.Evaluated(epoch, {eval.loss[1], eval.correct[1], eval.correct[2]}, model.parameters(),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                      ghosts.bytes_sent() + gradient_sums.bytes_sent() + (remote ? remote->bytes_sent() : 0));
  };
  hooks.checkpoint = [&](int64_t done) {
    figures.CompleteAll();  // the early-stopping state a resumed run starts from
    Checkpoint(ctx, o.checkpoint_dir, static_cast<uint64_t>(done), model, adam, stop);
  };
  // The evaluation is part of each epoch's step (its figures may travel with later gradients).
  RunTrainLoop({.first_step = result.first_epoch - 1,
                .checkpoints = !o.checkpoint_dir.empty(),
                .checkpoint_every = o.checkpoint_every,
                .evaluate = false},
               hooks);
  figures.CompleteAll();
  ghosts.Drain();
  gradient_sums.Finish();
  if (o.staleness > 0 && stop.have) ReevaluateWithFreshGhosts(ctx, s, counts, &model, &stop);
  if (o.predict) {
    const std::vector<float> params =
        stop.params.empty() ? std::vector<float>(model.parameters().begin(), model.parameters().end())
                            : stop.params;
    result.predictions = PredictVertices(ctx, s, params, &model);
  }
  if (remote) remote->Finish();
  result.reported = stop.best;
  result.parameters = std::move(stop.params);
  result.stopped_early = stopped;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

GnnResult TrainRanks(comm::Context& ctx, const Graph& g, Graph* release, const GnnOptions& o,
                     const std::function<void(const GnnEpoch&)>& on_epoch) {
  if (o.tensor_workers == 0) return TrainOnGraphRanks(ctx, g, release, o, nullptr, on_epoch);
  if (o.model != "gcn")
    throw InvalidArgumentError(fmt::format("tensor workers run GCN's tensor tasks, not {}'s", o.model));
  const int workers = static_cast<int>(o.tensor_workers), graph_ranks = ctx.size() - workers;
  if (graph_ranks < 1)
    throw InvalidArgumentError(fmt::format("{} leave no graph rank of {}", Count(workers, "tensor worker"),
                                           Count(ctx.size(), "process")));
  // Every rank takes part in both, in this order: the link over all ranks, the graph ranks' own.
  std::unique_ptr<comm::Context> link = ctx.Duplicate(ctx.DefaultDeadline());
  const bool worker = ctx.rank() >= graph_ranks;
  std::unique_ptr<comm::Context> group = ctx.Split(worker ? 1 : 0, ctx.DefaultDeadline());
  if (!worker) return TrainOnGraphRanks(*group, g, release, o, link.get(), on_epoch);
  if (release) *release = Graph();
  std::vector<int> clients;
  for (int r = 0; r < graph_ranks; ++r)
    if (TensorWorkerOf(r, graph_ranks, workers) == ctx.rank()) clients.push_back(r);
  ServeTensorTasks(*link, clients);
  GnnResult served;
  served.tensor_worker = true;
  return served;
}

}  // namespace

GnnResult TrainGnn(comm::Context& ctx, const Graph& g, const GnnOptions& o,
                   const std::function<void(const GnnEpoch&)>& on_epoch) {
  return TrainRanks(ctx, g, nullptr, o, on_epoch);
}

GnnResult TrainGnn(comm::Context& ctx, Graph&& g, const GnnOptions& o,
                   const std::function<void(const GnnEpoch&)>& on_epoch) {
  return TrainRanks(ctx, g, &g, o, on_epoch);
}

}  // namespace parasol::apps::gnn
