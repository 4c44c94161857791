#include "parasol/dl/lm_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/core/stats.h"
#include "parasol/core/train_loop.h"
#include "parasol/dl/parallel_groups.h"
#include "parasol/dl/rank_checkpoint.h"
#include "parasol/dl/rank_tensors.h"
#include "parasol/dl/trainer.h"

namespace parasol::dl {
namespace {

using Clock = std::chrono::steady_clock;

// Windows [start, start + seq] of `tokens` as inputs x (the first seq) and targets y (the last seq).
std::pair<torch::Tensor, torch::Tensor> Windows(const std::vector<int64_t>& tokens,
                                                const std::vector<int64_t>& starts, int64_t seq) {
  const auto b = static_cast<int64_t>(starts.size());
  torch::Tensor x = torch::empty({b, seq}, torch::kLong), y = torch::empty({b, seq}, torch::kLong);
  int64_t* xp = x.data_ptr<int64_t>();
  int64_t* yp = y.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t* w = tokens.data() + starts[static_cast<size_t>(i)];
    std::copy(w, w + seq, xp + i * seq);
    std::copy(w + 1, w + seq + 1, yp + i * seq);
  }
  return {x, y};
}

// Step `step`'s global batch of random windows, drawn alike on every rank; replica d takes the
// d-th block of `batch`.
std::vector<int64_t> BatchStarts(size_t tokens, int64_t seq, int64_t batch, int replicas, int replica,
                                 uint64_t seed, int64_t step) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step));
  std::uniform_int_distribution<int64_t> start(0, static_cast<int64_t>(tokens) - seq - 1);
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < batch * replicas; ++i) {
    const int64_t s = start(rng);
    if (i / batch == replica) starts.push_back(s);
  }
  return starts;
}

// The language-model loss plus every MoE layer's weighted auxiliary losses.
torch::Tensor WithMoeLosses(const TransformerLm& lm, const LmOptions& o, torch::Tensor loss) {
  for (const MoeLayer& m : lm.moe_layers)
    loss = loss + o.aux_loss_coef * m->balance_loss() + o.z_loss_coef * m->z_loss();
  return loss;
}

// The experts' gradients summed over the ranks that hold the same experts, divided by the number
// of replicas (each expert's gradient already sums its expert group's tokens), then their step.
class ExpertUpdater {
 public:
  ExpertUpdater(ParallelGroups& groups, const std::vector<torch::Tensor>& params, const OptimizerOptions& o)
      : groups_(groups) {
    if (params.empty()) return;
    std::vector<std::pair<torch::Tensor, int>> all;
    for (const torch::Tensor& p : params) all.emplace_back(p, 0);
    flat_ = FlattenParameters(all);
    optimizer_ = std::make_unique<Optimizer>(o, flat_.params, flat_.grads, flat_.spans);
  }
  // Parameters, then Adam's two moments (empty without experts).
  std::vector<torch::Tensor> State() {
    if (!optimizer_) return {};
    return {flat_.params, optimizer_->momentum_buffer(), optimizer_->second_moment()};
  }
  void ZeroGrad() {
    if (optimizer_) flat_.grads.zero_();
  }
  void Step(int64_t step) {
    if (!optimizer_) return;
    comm::Context& copies = groups_.expert_copies();
    if (copies.size() > 1) {
      collective::Allreduce(copies, flat_.grads.data_ptr<float>(), flat_.grads.data_ptr<float>(),
                            static_cast<size_t>(flat_.grads.numel()), DType::kFloat32);
    }
    flat_.grads.mul_(1.0 / groups_.data_parallel());
    optimizer_->set_step(step);
    optimizer_->UpdateRange(0, flat_.params.numel(), {});
  }

 private:
  ParallelGroups& groups_;
  FlatParameters flat_;
  std::unique_ptr<Optimizer> optimizer_;
};

// The routing figures of the last forward, over every replica: the busiest expert's load over
// the mean (the worst layer) and the share of choices dropped.
void RoutingFigures(ParallelGroups& groups, const TransformerLm& lm, LmStep* rec) {
  if (lm.moe_layers.empty()) return;
  std::vector<double> sums;
  for (const MoeLayer& m : lm.moe_layers) {
    const MoeStats& s = m->stats();
    sums.insert(sums.end(), s.routed.begin(), s.routed.end());
    sums.push_back(static_cast<double>(s.dropped));
    sums.push_back(static_cast<double>(s.choices));
  }
  collective::Allreduce<double>(groups.data(), sums);
  const size_t e = lm.moe_layers.front()->stats().routed.size();
  double dropped = 0, choices = 0;
  for (size_t l = 0; l < lm.moe_layers.size(); ++l) {
    const double* layer = sums.data() + l * (e + 2);
    double top = 0, total = 0;
    for (size_t i = 0; i < e; ++i) {
      top = std::max(top, layer[i]);
      total += layer[i];
    }
    if (total > 0) rec->expert_load = std::max(rec->expert_load, top * static_cast<double>(e) / total);
    dropped += layer[e];
    choices += layer[e + 1];
  }
  rec->dropped_fraction = choices > 0 ? dropped / choices : 0;
}

LmStep TrainStep(ParallelGroups& groups, TransformerLm& lm, GradSync& sync, ExpertUpdater& experts,
                 const std::vector<int64_t>& train, const LmOptions& o, int64_t step) {
  const int64_t seq = o.model.seq;
  const auto [x, y] = Windows(
      train,
      BatchStarts(train.size(), seq, o.batch, groups.data_parallel(), groups.data_rank(), o.seed, step), seq);
  const auto t0 = Clock::now();
  const torch::Tensor logits = lm.model->Forward(x, [&sync](int stage) { sync.BeforeStage(stage); });
  const torch::Tensor loss = VocabParallelCrossEntropy(logits.reshape({-1, logits.size(-1)}), y.reshape({-1}),
                                                       lm.embedding->vocab_begin(), *lm.tensor_group)
                                 .mean();
  const torch::Tensor total = WithMoeLosses(lm, o, loss);
  experts.ZeroGrad();
  sync.BeforeBackward(step);
  total.backward();
  sync.AfterBackward();
  experts.Step(step);
  LmStep rec;
  rec.step = step;
  rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.tokens_per_sec = static_cast<double>(o.batch * seq * groups.data_parallel()) / rec.seconds;
  rec.loss = loss.item<double>();
  for (const MoeLayer& m : lm.moe_layers) {
    rec.balance_loss += m->balance_loss().item<double>();
    rec.z_loss += m->z_loss().item<double>();
  }
  RoutingFigures(groups, lm, &rec);
  return rec;
}

std::string ShapeName(const TransformerOptions& m) {
  return fmt::format("v{}-l{}-d{}-h{}-f{}-s{}-e{}-k{}-m{}", m.vocab, m.layers, m.d_model, m.heads, m.ffn,
                     m.seq, m.moe_experts, m.moe_top_k, m.moe_every);
}

// What a rank holds of the training state: the synchroniser's parameters and Adam moments, the
// experts' (the same on every replica of a shard, but each rank writes its own: no gathering).
std::vector<torch::Tensor> RankState(GradSync& sync, ExpertUpdater& experts) {
  std::vector<torch::Tensor> state = {sync.flat_parameters(), sync.optimizer().momentum_buffer(),
                                      sync.optimizer().second_moment()};
  for (const torch::Tensor& t : experts.State()) state.push_back(t);
  return state;
}

void SaveLm(ParallelGroups& g, GradSync& sync, ExpertUpdater& experts, const LmOptions& o,
            const TransformerOptions& shape, int64_t steps_done) {
  sync.Flush();
  comm::Context& world = g.world();
  WriteRankTensors(world.env().files(), o.checkpoint_dir, world.rank(), steps_done, RankState(sync, experts));
  collective::Barrier(world);  // every rank's file is whole
  if (world.rank() == 0) {
    WriteCheckpointMeta(world.env().files(), o.checkpoint_dir,
                        {.step = steps_done,
                         .ranks = world.size(),
                         .tensor_parallel = g.tensor_parallel(),
                         .expert_parallel = g.expert_parallel(),
                         .shape = ShapeName(shape)});
  }
  collective::Barrier(world);  // nobody reports it before it is committed
}

int64_t ResumeLm(ParallelGroups& g, GradSync& sync, ExpertUpdater& experts, const LmOptions& o,
                 const TransformerOptions& shape) {
  const RankCheckpointMeta m = ReadCheckpointMeta(o.resume_dir);
  const std::string here = ShapeName(shape);
  // Without tensor or expert parallelism every rank holds the whole, same state: a run on another
  // number of ranks (a scheduler resizing the job; the global batch is the replicas' batches)
  // takes rank 0's.
  const bool replicated = m.tensor_parallel == 1 && m.expert_parallel == 1 && g.tensor_parallel() == 1 &&
                          g.expert_parallel() == 1;
  if ((!replicated && (m.ranks != g.world().size() || m.tensor_parallel != g.tensor_parallel() ||
                       m.expert_parallel != g.expert_parallel())) ||
      m.shape != here) {
    throw InvalidArgumentError(
        fmt::format("{}: a checkpoint of {} (tensor parallel {}, expert parallel {}) and model {}; "
                    "this run has {} ({}, {}) and model {}",
                    o.resume_dir, Count(m.ranks, "rank"), m.tensor_parallel, m.expert_parallel, m.shape,
                    Count(g.world().size(), "rank"), g.tensor_parallel(), g.expert_parallel(), here));
  }
  ReadRankTensors(o.resume_dir, replicated ? 0 : g.world().rank(), m.step, RankState(sync, experts));
  return m.step;
}

// `seconds`: training time since this run started (evaluations left out), as in every command.
std::vector<std::string> MetricsColumns() {
  return {"step",
          "seconds",
          "step_seconds",
          "tokens_per_sec",
          "loss",
          "balance_loss",
          "z_loss",
          "expert_load_max_over_mean",
          "dropped_fraction",
          "val_loss",
          "val_perplexity"};
}

std::vector<std::string> MetricsRow(const LmStep& r, double train_seconds, const LmEvaluation* e) {
  return {std::to_string(r.step),
          fmt::format("{:.6f}", train_seconds),
          fmt::format("{:.6f}", r.seconds),
          fmt::format("{:.1f}", r.tokens_per_sec),
          fmt::format("{:.6f}", r.loss),
          fmt::format("{:.6f}", r.balance_loss),
          fmt::format("{:.6f}", r.z_loss),
          fmt::format("{:.4f}", r.expert_load),
          fmt::format("{:.6f}", r.dropped_fraction),
          e ? fmt::format("{:.6f}", e->loss) : "",
          e ? fmt::format("{:.4f}", e->perplexity) : ""};
}

// A step's line: loss and speed, the experts' figures, the evaluation that followed it.
void LogStep(std::ostream& log, const TransformerLm& lm, const LmStep& rec, const LmEvaluation* e,
             int64_t done, int64_t total) {
  log << fmt::format("step {}/{}: loss {:.4f}, {:.0f} tokens/s", done, total, rec.loss, rec.tokens_per_sec);
  if (!lm.moe_layers.empty()) {
    log << fmt::format(", balance {:.3f}, z {:.3f}, load max/mean {:.2f}, dropped {:.2f}%", rec.balance_loss,
                       rec.z_loss, rec.expert_load, 100 * rec.dropped_fraction);
  }
  if (e) log << fmt::format(", validation loss {:.4f}, perplexity {:.3f}", e->loss, e->perplexity);
  log << "\n";
}

void PrintPlan(std::ostream& log, const LmOptions& o, ParallelGroups& g, const TransformerLm& lm,
               int64_t params, const TextTokens& text, int64_t total) {
  const TransformerOptions& m = o.model;
  log << fmt::format("# transformer-lm: vocabulary {} ({}), {} training and {} validation tokens\n",
                     text.vocab.size(), o.level == TextLevel::kChar ? "characters" : "words",
                     text.train.size(), text.validation.size());
  log << fmt::format("# {} layers, d_model {}, {} heads, ffn {}, seq {}", m.layers, m.d_model, m.heads, m.ffn,
                     m.seq);
  if (!lm.moe_layers.empty()) {
    log << fmt::format("; {} mixture-of-experts layers of {} experts, top-{}, capacity factor {} (eval {})",
                       lm.moe_layers.size(), m.moe_experts, m.moe_top_k, m.capacity_factor,
                       m.eval_capacity_factor);
  }
  log << fmt::format(
      "\n# {} ranks: {} data-parallel x {} tensor-parallel, experts over {}; {} parameters on rank 0; "
      "{} steps of {} x {} sequences\n",
      g.world().size(), g.data_parallel(), g.tensor_parallel(), g.expert_parallel(), params, total,
      g.data_parallel(), o.batch);
}

}  // namespace

LmEvaluation EvaluateLm(ParallelGroups& groups, TransformerLm& lm, const std::vector<int64_t>& tokens,
                        int64_t seq, int64_t batch, int64_t max_batches) {
  torch::NoGradGuard no_grad;
  lm.model->eval();
  const int64_t windows = (static_cast<int64_t>(tokens.size()) - 1) / seq;
  int64_t batches = (windows + batch - 1) / batch;
  if (max_batches > 0) batches = std::min(batches, max_batches);
  const int d = groups.data_parallel();
  // Batch i is replica i % d's; a replica with none left in a round still runs one (weight 0), so
  // the tensor- and expert-parallel collectives of every round meet.
  double sums[2] = {0, 0};  // loss summed over tokens, tokens
  for (int64_t round = 0; round * d < batches; ++round) {
    const int64_t i = round * d + groups.data_rank();
    const bool real = i < batches;
    const int64_t first = (real ? i : 0) * batch, last = std::min(windows, first + batch);
    std::vector<int64_t> starts;
    for (int64_t w = first; w < last; ++w) starts.push_back(w * seq);
    const auto [x, y] = Windows(tokens, starts, seq);
    const torch::Tensor logits = lm.model->Forward(x);
    const torch::Tensor losses =
        VocabParallelCrossEntropy(logits.reshape({-1, logits.size(-1)}), y.reshape({-1}),
                                  lm.embedding->vocab_begin(), *lm.tensor_group);
    if (real) {
      sums[0] += losses.sum().item<double>();
      sums[1] += static_cast<double>(losses.numel());
    }
  }
  collective::Allreduce<double>(groups.data(), sums);
  lm.model->train();
  LmEvaluation e;
  e.loss = sums[1] > 0 ? sums[0] / sums[1] : 0;
  e.perplexity = std::exp(e.loss);
  e.tokens = static_cast<int64_t>(sums[1]);
  return e;
}

LmResult TrainLm(comm::Context& world, const LmOptions& o) {
  if (o.batch < 1 || o.model.seq < 1)
    throw InvalidArgumentError("transformer-lm: batch and seq must be positive");
  SetComputeThreads(o.threads);
  ParallelGroups groups(world, o.tensor_parallel, o.expert_parallel);
  const TextTokens text = ReadTextTokens(o.data_path, o.level, o.validation_fraction, o.model.seq);
  TransformerOptions shape = o.model;
  shape.vocab = static_cast<int64_t>(text.vocab.size());
  TransformerLm lm = MakeTransformerLm(shape, groups, o.seed);
  SyncOptions sync_options = o.sync;
  sync_options.excluded = lm.expert_parameters;
  sync_options.batch_per_rank = o.batch;
  GradSync sync(groups.data(), *lm.model, o.optimizer, sync_options);
  ExpertUpdater experts(groups, lm.expert_parameters, o.optimizer);
  LmResult r;
  r.vocab = shape.vocab;
  for (const torch::Tensor& p : lm.model->parameters()) r.parameters += p.numel();
  const int64_t per_step = o.batch * o.model.seq * groups.data_parallel();
  const int64_t steps_per_epoch = std::max<int64_t>(1, static_cast<int64_t>(text.train.size()) / per_step);
  const int64_t total = o.steps > 0 ? o.steps : o.epochs * steps_per_epoch;
  std::ostream* log = world.rank() == 0 ? o.log : nullptr;
  if (log) PrintPlan(*log, o, groups, lm, r.parameters, text, total);
  std::unique_ptr<CsvWriter> csv;
  if (world.rank() == 0 && !o.metrics_path.empty())
    csv = std::make_unique<CsvWriter>(o.metrics_path, MetricsColumns());
  lm.model->train();
  if (!o.resume_dir.empty()) {
    r.first_step = ResumeLm(groups, sync, experts, o, shape);
    if (log) *log << fmt::format("# resuming {} at step {} of {}\n", o.resume_dir, r.first_step, total);
  }
  std::vector<double> speeds;
  LmStep rec;
  double train_seconds = 0;
  JobControl control(world, o.control, total, o.batch);
  const NoiseScale unmeasured(o.batch * groups.data_parallel());  // the status has no noise figures
  TrainLoopHooks hooks;
  hooks.finished = [&](int64_t done) { return done >= total; };
  hooks.step = [&](int64_t step) {
    rec = TrainStep(groups, lm, sync, experts, text.train, o, step);
    train_seconds += rec.seconds;
    r.steps.push_back(rec);
    if (step > r.first_step || total - r.first_step == 1) speeds.push_back(rec.tokens_per_sec);
    control.Record(step + 1, static_cast<double>(step + 1), rec.seconds, 0.0, unmeasured);
  };
  hooks.stop_requested = [&](int64_t) { return control.Check(o.batch).stop; };
  hooks.epoch_end = [&](int64_t done) { return done % steps_per_epoch == 0; };
  hooks.evaluate = [&](int64_t done) {
    sync.Flush();
    LmEvaluation e = EvaluateLm(groups, lm, text.validation, o.model.seq, o.batch, o.eval_batches);
    e.step = done;
    r.evaluations.push_back(e);
  };
  hooks.report = [&](int64_t done, bool evaluated) {
    const LmEvaluation* e = evaluated ? &r.evaluations.back() : nullptr;
    if (csv) csv->Row(MetricsRow(rec, train_seconds, e));
    if (log && (e || done % std::max<int64_t>(1, total / 10) == 0)) LogStep(*log, lm, rec, e, done, total);
  };
  hooks.loss = [&](int64_t) { return rec.loss; };
  hooks.checkpoint = [&](int64_t done) { SaveLm(groups, sync, experts, o, shape, done); };
  const TrainLoopResult ran = RunTrainLoop({.first_step = r.first_step,
                                            .checkpoints = !o.checkpoint_dir.empty(),
                                            .checkpoint_every = o.checkpoint_every,
                                            .evaluate = o.evaluate},
                                           hooks);
  r.steps_done = ran.steps_done;
  r.stopped = ran.stopped;
  sync.Flush();
  control.Finish(ran, log, !o.checkpoint_dir.empty());
  if (csv) csv->Commit();
  r.median_tokens_per_sec = Median(speeds);
  r.sync = sync.stats();
  return r;
}

}  // namespace parasol::dl
