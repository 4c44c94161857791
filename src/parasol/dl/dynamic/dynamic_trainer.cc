#include "parasol/dl/dynamic/dynamic_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/stats.h"
#include "parasol/core/train_loop.h"
#include "parasol/dl/dynamic/dynamic_data.h"
#include "parasol/dl/models.h"
#include "parasol/dl/rank_checkpoint.h"
#include "parasol/dl/rank_tensors.h"
#include "parasol/dl/torch_generator.h"
#include "parasol/dl/trainer.h"

namespace parasol::dl::dynamic {
namespace {

using Clock = std::chrono::steady_clock;

DynamicData Load(const DynamicTrainOptions& o) {
  if (o.model == "tree-lstm") return LoadSst(o.data);
  if (o.model == "lstm-lm") return LoadTextChains(o.data);
  if (o.model == "tree-fc") return MakeSyntheticTrees(o.tree_count, static_cast<int>(o.tree_depth), o.seed);
  throw InvalidArgumentError(
      fmt::format("unknown dynamic network '{}' (tree-lstm, lstm-lm, tree-fc)", o.model));
}

DynamicNet BuildNet(const DynamicTrainOptions& o, const DynamicData& data) {
  SeededTorchGenerator generator(o.seed);
  DynamicNet net(DynamicNetOptions{.cell = o.model,
                                   .vocab = data.vocab,
                                   .embedding = o.embedding,
                                   .hidden = o.hidden,
                                   .classes = data.classes,
                                   .dropout = o.dropout});
  net->set_executor_options({.hoist_inputs = o.hoist_inputs});
  return net;
}

// Word vectors from a file replace the random rows of the words it has.
void LoadEmbeddings(DynamicNet& net, const DynamicTrainOptions& o, const DynamicData& data,
                    std::ostream* log) {
  if (o.embeddings_path.empty()) return;
  auto [rows, found] = ReadWordVectors(o.embeddings_path, data.words, o.embedding);
  torch::NoGradGuard no_grad;
  const torch::Tensor vectors = torch::from_blob(rows.data(), {data.vocab, o.embedding}).clone();
  const torch::Tensor have = vectors.abs().sum(1) > 0;
  net->embedding->weight.index_copy_(0, have.nonzero().squeeze(1),
                                     vectors.index_select(0, have.nonzero().squeeze(1)));
  if (log) *log << fmt::format("# {} of {} words have vectors in {}\n", found, data.vocab, o.embeddings_path);
}

int64_t Labelled(const ExampleGraph& g) {
  return std::count_if(g.label.begin(), g.label.end(), [](int32_t l) { return l >= 0; });
}

// Root accuracy (fine and binary) or the per-vertex loss sum, over the ranks' shares of `set`.
std::vector<double> EvaluateSet(comm::Context& ctx, DynamicNet& net, const std::vector<ExampleGraph>& set,
                                Batching batching) {
  torch::NoGradGuard no_grad;
  net->eval();
  std::vector<double> sums(6, 0.0);  // fine right, roots, binary right, binary roots, loss sum, labelled
  std::vector<const ExampleGraph*> mine;
  for (size_t i = static_cast<size_t>(ctx.rank()); i < set.size(); i += static_cast<size_t>(ctx.size()))
    mine.push_back(&set[i]);
  for (size_t at = 0; at < mine.size(); at += 256) {
    const std::span<const ExampleGraph* const> part(mine.data() + at,
                                                    std::min<size_t>(256, mine.size() - at));
    const Schedule s = MakeSchedule(part, batching);
    auto [logits, labels] = net->Forward(s);
    sums[4] += torch::nn::functional::cross_entropy(
                   logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                   .item<double>();
    sums[5] += static_cast<double>(labels.numel());
    const torch::Tensor roots = net->RootLogits(s, logits);
    const torch::Tensor truth = s.labels.index_select(0, s.roots);
    sums[0] += (roots.argmax(1) == truth).sum().item<double>();
    sums[1] += static_cast<double>(truth.numel());
    if (roots.size(1) == 5) {
      const torch::Tensor p = torch::softmax(roots, 1);
      const torch::Tensor positive = p.narrow(1, 3, 2).sum(1) > p.narrow(1, 0, 2).sum(1);
      const torch::Tensor polar = truth != 2;
      sums[2] += (positive == (truth > 2)).logical_and(polar).sum().item<double>();
      sums[3] += polar.sum().item<double>();
    }
  }
  collective::Allreduce<double>(ctx, sums);
  net->train();
  return sums;
}

DynamicEvaluation Evaluate(comm::Context& ctx, DynamicNet& net, const DynamicData& data,
                           const DynamicTrainOptions& o, int64_t epoch) {
  DynamicEvaluation e{.epoch = epoch};
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  if (!data.dev.empty()) {
    const std::vector<double> d = EvaluateSet(ctx, net, data.dev, o.batching);
    e.dev_fine = ratio(d[0], d[1]);
    e.dev_binary = ratio(d[2], d[3]);
    e.dev_perplexity = std::exp(ratio(d[4], d[5]));
  }
  if (!data.test.empty()) {
    const std::vector<double> t = EvaluateSet(ctx, net, data.test, o.batching);
    e.test_fine = ratio(t[0], t[1]);
    e.test_binary = ratio(t[2], t[3]);
  }
  return e;
}

void LogEvaluation(std::ostream& log, const DynamicTrainOptions& o, const DynamicEvaluation& e) {
  if (o.model == "tree-lstm") {
    log << fmt::format(
        "epoch {}: root accuracy fine-grained dev {:.2f}% test {:.2f}%, binary dev {:.2f}% test {:.2f}%\n",
        e.epoch, 100 * e.dev_fine, 100 * e.test_fine, 100 * e.dev_binary, 100 * e.test_binary);
  } else if (o.model == "lstm-lm") {
    log << fmt::format("epoch {}: validation perplexity {:.2f}\n", e.epoch, e.dev_perplexity);
  }
}

// The global batch, not the rank's: a run resized to other ranks with the same global batch
// takes the same steps.
std::string ShapeName(const DynamicTrainOptions& o, const DynamicData& data, int ranks) {
  return fmt::format("{}-v{}-e{}-h{}-c{}-b{}", o.model, data.vocab, o.embedding, o.hidden, data.classes,
                     o.batch * ranks);
}

// The state is the same on every rank (data parallel): rank 0 writes it, every rank reads it.
std::vector<torch::Tensor> State(GradSync& sync) {
  return {sync.flat_parameters(), sync.optimizer().momentum_buffer(), sync.optimizer().second_moment()};
}

void Save(comm::Context& ctx, GradSync& sync, const DynamicTrainOptions& o, const std::string& shape,
          int64_t steps_done) {
  sync.Flush();
  if (ctx.rank() == 0) {
    WriteRankTensors(ctx.env().files(), o.checkpoint_dir, 0, steps_done, State(sync));
    WriteCheckpointMeta(ctx.env().files(), o.checkpoint_dir,
                        {.step = steps_done, .ranks = ctx.size(), .shape = shape});
  }
  collective::Barrier(ctx);  // nobody reports it before it is committed
}

int64_t Resume(GradSync& sync, const DynamicTrainOptions& o, const std::string& shape) {
  const RankCheckpointMeta m = ReadCheckpointMeta(o.resume_dir);
  // The replicas hold the same state (rank 0 writes it): any number of ranks may take it up, as a
  // scheduler resizing the job does.
  if (m.tensor_parallel != 1 || m.expert_parallel != 1 || m.shape != shape) {
    throw InvalidArgumentError(
        fmt::format("{}: a checkpoint of model {}; this run has model {}", o.resume_dir, m.shape, shape));
  }
  ReadRankTensors(o.resume_dir, 0, m.step, State(sync));
  return m.step;
}

// The fine-grained dev accuracy picks the epoch whose test figures a run reports (Tai et al.'s
// model selection); the last epoch is often past the best on SST.
int BestEvaluation(const std::vector<DynamicEvaluation>& e) {
  int best = -1;
  for (size_t i = 0; i < e.size(); ++i) {
    if (best < 0 || e[i].dev_fine > e[static_cast<size_t>(best)].dev_fine) best = static_cast<int>(i);
  }
  return best;
}

// The examples of the global batch `step` (the same shuffle on every rank), and this rank's share.
struct StepBatch {
  std::vector<const ExampleGraph*> mine;
  int64_t labelled = 0;  // over the global batch: each rank's share of the mean
};

StepBatch BatchOf(comm::Context& ctx, const std::vector<ExampleGraph>& train,
                  const std::vector<size_t>& order, size_t in_epoch, size_t batch) {
  StepBatch b;
  const size_t global = batch * static_cast<size_t>(ctx.size());
  for (size_t i = 0; i < global; ++i) {
    const ExampleGraph& g = train[order[in_epoch * global + i]];
    b.labelled += Labelled(g);
    if (i / batch == static_cast<size_t>(ctx.rank())) b.mine.push_back(&g);
  }
  return b;
}

}  // namespace

DynamicResult TrainDynamic(comm::Context& ctx, const DynamicTrainOptions& o) {
  if (ctx.size() > 1 && o.sync.mode != SyncMode::kAfterBackward) {
    throw InvalidArgumentError(
        fmt::format("{}: --sync after-backward only (its backward runs level by level and reaches a "
                    "parameter once per level)",
                    o.model));
  }
  if (o.batch < 1) throw InvalidArgumentError("--batch must be at least 1");
  SetComputeThreads(o.threads);
  const DynamicData data = Load(o);
  std::ostream* log = ctx.rank() == 0 ? o.log : nullptr;
  DynamicNet net = BuildNet(o, data);
  LoadEmbeddings(net, o, data, log);
  Model model(o.model, {});
  model.AddStage("net", torch::nn::Sequential(net));
  GradSync sync(ctx, model, o.optimizer, o.sync);
  const auto p = static_cast<size_t>(ctx.size()), batch = static_cast<size_t>(o.batch);
  const size_t global = batch * p, per_epoch = data.train.size() / global;
  if (per_epoch == 0) {
    throw InvalidArgumentError(
        fmt::format("{} training examples fill no global batch of {} ({} ranks x --batch {})",
                    data.train.size(), global, p, batch));
  }
  const int64_t total = o.steps > 0 ? o.steps : o.epochs * static_cast<int64_t>(per_epoch);
  const std::string shape = ShapeName(o, data, ctx.size());
  const int64_t first = o.resume_dir.empty() ? 0 : Resume(sync, o, shape);
  if (log) {
    *log << fmt::format(
        "# {}: {} training examples, vocabulary {}, {} classes; {} ranks x batch {}, {} steps, {}\n", o.model,
        data.train.size(), data.vocab, data.classes, p, batch, total,
        o.batching == Batching::kBatched ? "batched by level" : "one vertex at a time");
    if (!o.resume_dir.empty())
      *log << fmt::format("# resuming {} at step {} of {}\n", o.resume_dir, first, total);
  }
  std::unique_ptr<CsvWriter> csv;
  if (log && !o.metrics_path.empty()) {
    csv = std::make_unique<CsvWriter>(
        o.metrics_path,
        std::vector<std::string>{"step", "seconds", "step_seconds", "samples_per_sec", "loss", "dev_fine",
                                 "test_fine", "dev_binary", "test_binary", "dev_perplexity"});
  }
  DynamicResult r;
  std::vector<size_t> order(data.train.size());
  std::vector<double> speeds;
  double train_seconds = 0;      // `seconds` of the metrics: since this run started, evaluations left out
  std::vector<std::string> row;  // the metrics row of the step just taken
  int64_t shuffled = -1;
  net->train();
  JobControl control(ctx, o.control, total, o.batch);
  const NoiseScale unmeasured(o.batch * ctx.size());  // the status has no noise figures
  TrainLoopHooks hooks;
  hooks.finished = [&](int64_t done) { return done >= total; };
  hooks.step = [&](int64_t step) {
    const auto epoch = static_cast<int64_t>(static_cast<size_t>(step) / per_epoch);
    const size_t in_epoch = static_cast<size_t>(step) % per_epoch;
    if (epoch != shuffled) {  // the same shuffle on every rank
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(),
                   std::mt19937_64(o.seed * 1000003 + static_cast<uint64_t>(epoch)));
      shuffled = epoch;
    }
    const StepBatch b = BatchOf(ctx, data.train, order, in_epoch, batch);
    net->SeedDropout((o.seed * 1000003 + static_cast<uint64_t>(step)) * 4099 +
                     static_cast<uint64_t>(ctx.rank()));
    const auto t0 = Clock::now();
    const Schedule s = MakeSchedule(b.mine, o.batching);
    auto [logits, labels] = net->Forward(s);
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(
            logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) *
        (static_cast<double>(p) / static_cast<double>(b.labelled));
    sync.BeforeBackward(step);
    loss.backward();
    net->Backward();
    sync.AfterBackward();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.step_seconds.push_back(seconds);
    if (step > first || total == first + 1) speeds.push_back(static_cast<double>(global) / seconds);
    r.final_loss =
        loss.item<double>() * static_cast<double>(b.labelled) / static_cast<double>(p * labels.numel());
    train_seconds += seconds;
    row = {std::to_string(step), fmt::format("{:.6f}", train_seconds), fmt::format("{:.6f}", seconds),
           fmt::format("{:.1f}", global / seconds), fmt::format("{:.6f}", r.final_loss)};
    control.Record(step + 1, static_cast<double>(step + 1), seconds, 0.0, unmeasured);
  };
  hooks.stop_requested = [&](int64_t) { return control.Check(o.batch).stop; };
  // The step's row, with the evaluation's figures after the steps that ended an epoch.
  hooks.report = [&](int64_t, bool evaluated) {
    if (!csv) return;
    const DynamicEvaluation* e = evaluated ? &r.evaluations.back() : nullptr;
    const bool tree = o.model == "tree-lstm", lm = o.model == "lstm-lm";
    for (double v :
         {e && tree ? e->dev_fine : -1, e && tree ? e->test_fine : -1, e && tree ? e->dev_binary : -1,
          e && tree ? e->test_binary : -1, e && lm ? e->dev_perplexity : -1})
      row.push_back(v < 0 ? "" : fmt::format("{:.6f}", v));
    csv->Row(row);
  };
  hooks.epoch_end = [&](int64_t done) { return static_cast<size_t>(done) % per_epoch == 0; };
  hooks.evaluate = [&](int64_t done) {
    sync.Flush();
    r.evaluations.push_back(
        Evaluate(ctx, net, data, o, static_cast<int64_t>(static_cast<size_t>(done - 1) / per_epoch) + 1));
    if (log) LogEvaluation(*log, o, r.evaluations.back());
  };
  hooks.loss = [&](int64_t) { return r.final_loss; };
  hooks.checkpoint = [&](int64_t done) { Save(ctx, sync, o, shape, done); };
  const TrainLoopResult ran = RunTrainLoop({.first_step = first,
                                            .checkpoints = !o.checkpoint_dir.empty(),
                                            .checkpoint_every = o.checkpoint_every,
                                            .evaluate = o.evaluate && o.model != "tree-fc"},
                                           hooks);
  r.steps_done = ran.steps_done;
  r.stopped = ran.stopped;
  sync.Flush();
  control.Finish(ran, log, !o.checkpoint_dir.empty());
  if (csv) csv->Commit();
  if (o.model == "tree-lstm") r.best_evaluation = BestEvaluation(r.evaluations);
  r.median_samples_per_sec = Median(speeds);
  r.parameters = sync.flat_parameters().clone();
  return r;
}

}  // namespace parasol::dl::dynamic
