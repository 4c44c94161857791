#include "parasol/dl/trainer.h"
#include "parasol/core/plural.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/process_memory.h"
#include "parasol/core/stats.h"
#include "parasol/core/text_fields.h"
#include "parasol/core/train_loop.h"
#include "parasol/dl/checkpoint.h"
#include "parasol/dl/job_control.h"
#include "parasol/dl/models.h"
#include "parasol/dl/spatial.h"
#include "parasol/dl/torch_generator.h"

namespace parasol::dl {
namespace {

using Clock = std::chrono::steady_clock;

// Every rank builds from the same seed (rank 0's model is then broadcast, so every rank trains the
// model a single process would).
std::shared_ptr<Model> BuildModel(const std::string& name, const std::vector<int64_t>& shape, uint64_t seed,
                                  SpatialGroup* spatial) {
  SeededTorchGenerator generator(seed);
  return MakeModel(name, shape, 10, spatial);
}

// The copies of the model the job trains (data parallel) and this rank's: with --spatial-parallel
// S, the groups of S consecutive ranks that each split an example's rows.
struct Replicas {
  int count = 1;
  int index = 0;
  std::unique_ptr<comm::Context> group_context;
  std::unique_ptr<SpatialGroup> group;  // null without spatial partitioning
};

Replicas MakeReplicas(comm::Context& ctx, int spatial) {
  // A rank that split otherwise would wait in another group: every rank must run the same layout.
  std::vector<int32_t> all(static_cast<size_t>(ctx.size()));
  collective::Allgather(ctx, &spatial, all.data(), 1, DType::kInt32);
  for (int q = 0; q < ctx.size(); ++q) {
    if (all[static_cast<size_t>(q)] != spatial) {
      throw MismatchError(fmt::format("rank {}: --spatial-parallel: rank {} runs {}, this rank {}",
                                      ctx.rank(), q, all[static_cast<size_t>(q)], spatial));
    }
  }
  if (spatial < 1 || ctx.size() % spatial != 0) {
    throw InvalidArgumentError(
        fmt::format("--spatial-parallel {} does not divide the {}", spatial, Count(ctx.size(), "rank")));
  }
  Replicas r;
  r.count = ctx.size() / spatial;
  r.index = ctx.rank() / spatial;
  if (spatial == 1) return r;
  r.group_context = ctx.Split(r.index, ctx.DefaultDeadline());
  r.group = std::make_unique<SpatialGroup>(*r.group_context);
  return r;
}

// Test images per forward pass: fewer for large images, so an evaluation's activations stay near
// those of 256 32x32 images.
int64_t EvaluationBatch(const std::vector<int64_t>& shape) {
  return std::clamp<int64_t>((int64_t{1} << 18) / (shape[1] * shape[2]), 1, 256);
}

torch::Tensor FlatBuffers(Model& m) {
  std::vector<torch::Tensor> parts;
  for (const torch::Tensor& b : m.buffers()) {
    if (b.scalar_type() == torch::kFloat32) parts.push_back(b.reshape({-1}));
  }
  return parts.empty() ? torch::empty({0}) : torch::cat(parts).to(torch::kCPU);
}

torch::Device DeviceOf(Model& m) {
  const std::vector<torch::Tensor> params = m.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

// --device cuda: this rank's GPU, by its place among the ranks of its host.
torch::Device TrainDevice(const comm::Context& ctx, const TrainOptions& o) {
  if (o.device == "cpu") return torch::kCPU;
  if (o.device != "cuda") throw InvalidArgumentError("--device '" + o.device + "': cpu or cuda");
  const int64_t gpus = torch::cuda::is_available() ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
  if (gpus == 0)
    throw InvalidArgumentError(fmt::format("rank {}: --device cuda: torch sees no CUDA device", ctx.rank()));
  if (o.sync_batch_norm) throw InvalidArgumentError("--sync-bn runs on CPU tensors: not with --device cuda");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int local_rank = 0;
  if (local && !ParseNumber(std::string_view(local), &local_rank)) {
    throw InvalidArgumentError(fmt::format("OMPI_COMM_WORLD_LOCAL_RANK '{}' is not a whole number", local));
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % gpus));
}

void SetBuffers(Model& m, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  int64_t at = 0;
  for (torch::Tensor& b : m.buffers()) {
    if (b.scalar_type() != torch::kFloat32) continue;
    b.copy_(flat.narrow(0, at, b.numel()).view(b.sizes()));
    at += b.numel();
  }
}

struct Evaluation {
  double accuracy = 0;
  double loss = 0;
};

// Replica r scores test samples r, r + R, ...; the sums are reduced so every rank gets the result
// (a replica's S ranks add the same sums S times, which leaves the means as they are).
// Batch-norm statistics are rank 0's (with synchronised batch norm every rank's are equal).
// With `predicted`, every rank's (sample, class) pairs are gathered there (on every rank).
Evaluation Evaluate(comm::Context& ctx, const Replicas& replicas, Model& model, const TensorDataset& test,
                    std::vector<int64_t>* predicted = nullptr) {
  const int64_t batch = EvaluationBatch(model.input_shape());
  torch::Tensor stats = FlatBuffers(model);
  if (stats.numel() > 0) {
    collective::Broadcast(ctx, stats.data_ptr<float>(), stats.numel(), DType::kFloat32);
    SetBuffers(model, stats);
  }
  torch::NoGradGuard no_grad;
  model.eval();
  const torch::Device device = DeviceOf(model);
  double sums[3] = {0, 0, 0};  // correct, loss, count
  torch::Tensor idx = torch::arange(replicas.index, test.size(), replicas.count, torch::kInt64);
  const bool record = predicted && (!replicas.group || replicas.group->rank() == 0);
  for (int64_t b = 0; b < idx.size(0); b += batch) {
    torch::Tensor i = idx.slice(0, b, std::min(idx.size(0), b + batch));
    torch::Tensor out = model.Forward(test.images.index_select(0, i).to(device));
    torch::Tensor y = test.labels.index_select(0, i).to(device);
    const torch::Tensor classes = out.argmax(1);
    sums[0] += classes.eq(y).sum().item<double>();
    if (record) {
      const torch::Tensor pairs =
          torch::stack({i, classes.to(torch::kCPU).to(torch::kInt64)}, 1).contiguous();
      predicted->insert(predicted->end(), pairs.data_ptr<int64_t>(),
                        pairs.data_ptr<int64_t>() + pairs.numel());
    }
    sums[1] += torch::cross_entropy_loss(out, y, {}, at::Reduction::Sum).item<double>();
    sums[2] += static_cast<double>(i.size(0));
  }
  model.train();
  collective::Allreduce(ctx, sums, sums, 3, DType::kFloat64);
  if (predicted) {
    *predicted = collective::AllgatherVariable<int64_t>(ctx, std::span<const int64_t>(*predicted));
  }
  return {sums[2] > 0 ? sums[0] / sums[2] : 0, sums[2] > 0 ? sums[1] / sums[2] : 0};
}

// Where a run stands. Progress counts scale-invariant iterations (AdaScale): steps at the base
// batch, each step adding its gain; without adaptive batches, one per step. The data order's
// place is the samples drawn, so a run resumed with another batch goes on where it was.
struct Position {
  int64_t step = 0;
  double progress = 0;
  int64_t samples = 0;
};

void Checkpoint(comm::Context& ctx, GradSync& sync, Model& model, const TrainOptions& o, const Position& at,
                int64_t base_batch, const NoiseScale& noise) {
  torch::Tensor momentum = sync.GatherMomentum();  // collective
  if (ctx.rank() == 0) {
    const NoiseScale::State n = noise.state();
    WriteCheckpoint(ctx.env().files(), o.checkpoint_dir,
                    {.model = o.model,
                     .step = at.step,
                     .progress = at.progress,
                     .samples_seen = at.samples,
                     .base_batch = base_batch,
                     .noise = {n.sqr_sum, n.var_sum, n.weight},
                     .parameters = sync.flat_parameters(),
                     .momentum = momentum,
                     .buffers = FlatBuffers(model)});
  }
  collective::Barrier(ctx);
}

void ValidateOptions(const TrainOptions& o) {
  if (o.batch <= 0) throw InvalidArgumentError("--batch must be positive");
  if (o.steps < 0 || (o.steps == 0 && o.epochs <= 0))
    throw InvalidArgumentError("--epochs or --steps must be positive");
  if (o.threads <= 0) throw InvalidArgumentError("--threads must be positive");
  if (o.optimizer.lr <= 0) throw InvalidArgumentError("--lr must be positive");
  if (o.checkpoint_every < 0) throw InvalidArgumentError("--checkpoint-every must be >= 0");
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    throw InvalidArgumentError("--checkpoint-every needs --checkpoint DIR");
  if (!o.stop_path.empty() && o.checkpoint_dir.empty())
    throw InvalidArgumentError("--stop-file needs --checkpoint DIR");
  if (!o.batch_path.empty() && !o.adaptive_batch) {
    throw InvalidArgumentError("--batch-file needs --adaptive-batch");
  }
  if (o.cosine_lr && o.adaptive_batch) {
    throw InvalidArgumentError("--lr-schedule cosine cannot take --adaptive-batch");
  }
  if (o.eval_only && o.resume_dir.empty()) {
    throw InvalidArgumentError("--eval-only needs --resume DIR (the checkpoint)");
  }
  if (o.spatial_parallel > 1) {
    if (o.model == "mlp")
      throw InvalidArgumentError("--spatial-parallel: for lenet, resnet20 or vgg (images)");
    if (o.adaptive_batch) throw InvalidArgumentError("--spatial-parallel cannot take --adaptive-batch");
    if (o.device != "cpu")
      throw InvalidArgumentError("--spatial-parallel runs on CPU tensors: not with --device cuda");
  }
}

// `seconds`: training time since this run started (evaluations left out), as in every command.
std::vector<std::string> MetricsColumns() {
  return {"step",
          "seconds",
          "step_seconds",
          "samples_per_sec",
          "loss",
          "exposed_comm_fraction",
          "grad_sqr",
          "grad_var_per_sample",
          "noise_scale_samples",
          "test_accuracy",
          "peak_memory_mb"};
}

// The noise columns stay empty until the first measurement (a step of several ranks, or the
// second of a pair on one); test_accuracy is there after the steps that ended with an evaluation.
std::vector<std::string> MetricsRow(const StepRecord& rec, double train_seconds, const NoiseScale& noise,
                                    const double* test_accuracy) {
  std::vector<std::string> row{
      std::to_string(rec.step),
      fmt::format("{:.6f}", train_seconds),
      fmt::format("{:.6f}", rec.seconds),
      fmt::format("{:.1f}", rec.samples_per_sec),
      fmt::format("{:.6f}", rec.loss),
      fmt::format("{:.4f}", rec.exposed_comm_fraction),
      "",
      "",
      "",
      test_accuracy ? fmt::format("{:.6f}", *test_accuracy) : "",
      rec.peak_memory_bytes > 0 ? fmt::format("{:.1f}", rec.peak_memory_bytes / 1e6) : ""};
  if (noise.measured()) {
    row[6] = fmt::format("{:.6g}", noise.grad_sqr());
    row[7] = fmt::format("{:.6g}", noise.grad_var(1));
    row[8] = fmt::format("{:.6g}", noise.noise_scale());
  }
  return row;
}

void DrawProgress(std::ostream& log, int64_t step, int64_t total, const StepRecord& r) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * (step + 1) / std::max<int64_t>(total, 1));
  log << fmt::format("\r[{:<{}}] {}/{} loss {:.4f} {:.0f} samples/s", std::string(filled, '='), kWidth,
                     step + 1, total, r.loss, r.samples_per_sec)
      << std::flush;
}

void Summarise(TrainResult& r) {
  std::vector<double> secs, rates;
  for (const auto& s : r.steps) {
    secs.push_back(s.seconds);
    rates.push_back(s.samples_per_sec);
  }
  if (!secs.empty()) {
    r.median_step_seconds = Median(secs);
    r.median_samples_per_sec = Median(rates);
  }
}

// Synchronised batch norm reduces its statistics on the training thread's context.
void UseSyncBatchNorm(comm::Context& ctx, Model& model) {
  for (BatchNorm2d bn : model.batch_norms()) {
    bn->set_reducer([&ctx](torch::Tensor& sums) {
      collective::Allreduce(ctx, sums.data_ptr<double>(), sums.data_ptr<double>(), sums.numel(),
                            DType::kFloat64);
    });
  }
}

// Loads the checkpoint into the model and optimizer; returns it (its tensors consumed).
TrainCheckpoint Resume(const TrainOptions& o, GradSync& sync, Model& model) {
  TrainCheckpoint c =
      ReadCheckpoint(o.resume_dir, o.model, sync.num_parameters(), FlatBuffers(model).numel());
  torch::NoGradGuard no_grad;
  sync.flat_parameters().copy_(c.parameters);
  sync.FlatParametersChanged();
  sync.optimizer().momentum_buffer().copy_(c.momentum);
  SetBuffers(model, c.buffers);
  c.parameters = c.momentum = c.buffers = torch::Tensor();
  return c;
}

// Where a run starts: at step 0 with this run's total batch as the base, or where the checkpoint
// in --resume left off (its base batch and noise carried over, so a resize keeps both).
struct Start {
  Position at;
  int64_t base_batch = 0;
  NoiseScale::State noise;
};

Start StartPosition(const TrainOptions& o, GradSync& sync, Model& model, int64_t batch) {
  Start s;
  s.base_batch = batch;
  if (o.resume_dir.empty()) return s;
  const TrainCheckpoint c = Resume(o, sync, model);
  // Format 02 kept no sample count: its runs never changed batch.
  s.at = {c.step, c.progress, c.samples_seen > 0 || c.step == 0 ? c.samples_seen : c.step * batch};
  if (c.base_batch > 0) s.base_batch = c.base_batch;
  s.noise = {c.noise[0], c.noise[1], c.noise[2]};
  return s;
}

// Measuring the gradient norms adds a collective per step: every rank must agree, though only
// rank 0 may have been given a metrics file.
bool AgreeOnMeasuring(comm::Context& ctx, const TrainOptions& o) {
  int32_t measure = !o.status_path.empty() || !o.metrics_path.empty() || o.adaptive_batch ? 1 : 0;
  collective::Allreduce(ctx, &measure, &measure, 1, DType::kInt32, {.op = ReduceOp::kMax});
  return measure != 0;
}

void PrintPlan(std::ostream& log, const comm::Context& ctx, const TrainOptions& o, const std::string& data,
               const GradSync& sync) {
  log << fmt::format("# {} on {}, {} parameters, {} x batch {}, sync {} over {}{}, {}\n", o.model, data,
                     sync.num_parameters(), Count(ctx.size(), "rank"), o.batch, ToString(o.sync.mode),
                     ToString(o.sync.backend), o.sync.shard_updates ? " (sharded updates)" : "",
                     Count(sync.num_units(), "sync unit"));
  for (const LayerChoice& c : sync.layer_choices()) {
    log << fmt::format(
        "# hybrid {}: {}x{}: sfb {:.2f} MB, ps {:.2f} MB, allreduce {:.2f} MB per step -> {}\n", c.layer,
        c.rows, c.cols, c.sfb_bytes / 1e6, c.ps_bytes / 1e6, c.allreduce_bytes / 1e6,
        c.sfb ? "sfb" : "allreduce");
  }
}

// One synchronous step on this rank's part of the global batch at `at`, the learning rate scaled
// by `lr_scale`.
StepRecord TrainStep(const Replicas& replicas, Model& model, GradSync& sync, BatchOrder& order,
                     const TensorDataset& train, int64_t batch, const Position& at, double lr_scale) {
  const int64_t step = at.step, epoch_samples = order.steps_per_epoch() * batch * replicas.count;
  const int64_t epoch = at.samples / epoch_samples,
                in_epoch = at.samples % epoch_samples / (batch * replicas.count);
  torch::Tensor idx = order.Indices(epoch, in_epoch, replicas.index);
  const torch::Device device = DeviceOf(model);
  torch::Tensor x = train.images.index_select(0, idx).to(device),
                y = train.labels.index_select(0, idx).to(device);
  const double waited = sync.stats().wait_seconds;
  const auto t0 = Clock::now();
  torch::Tensor loss =
      torch::cross_entropy_loss(model.Forward(x, [&sync](int stage) { sync.BeforeStage(stage); }), y);
  sync.BeforeBackward(step, lr_scale);
  loss.backward();
  sync.AfterBackward();
  StepRecord rec;
  rec.step = step;
  rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.samples_per_sec = static_cast<double>(batch * replicas.count) / rec.seconds;
  rec.loss = loss.item<double>();
  rec.exposed_comm_fraction = (sync.stats().wait_seconds - waited) / rec.seconds;
  return rec;
}

// Evaluates at an epoch's end and logs it.
void EndEpoch(comm::Context& ctx, const Replicas& replicas, Model& model, GradSync& sync,
              const TensorDataset& test, const TrainOptions& o, int64_t epoch, const StepRecord& rec,
              TrainResult& r, std::ostream* log) {
  sync.Flush();
  Evaluation e = Evaluate(ctx, replicas, model, test);
  r.epoch_accuracy.push_back(e.accuracy);
  r.test_accuracy = e.accuracy;
  r.test_loss = e.loss;
  if (log) {
    *log << fmt::format("{}epoch {}: step {}, loss {:.4f}, test accuracy {:.2f}%, test loss {:.4f}\n",
                        o.progress_bar ? "\n" : "", epoch + 1, rec.step + 1, rec.loss, 100 * e.accuracy,
                        e.loss);
  }
}

// Rank 0: each test sample's predicted class and label, by sample (the pairs as Evaluate gathers them).
void WritePredictions(comm::Context& ctx, const std::string& path, const TensorDataset& test,
                      const std::vector<int64_t>& pairs) {
  if (ctx.rank() != 0) return;
  std::vector<int64_t> predicted(static_cast<size_t>(test.size()), -1);
  for (size_t k = 0; k + 1 < pairs.size(); k += 2) predicted[static_cast<size_t>(pairs[k])] = pairs[k + 1];
  const torch::Tensor labels = test.labels.to(torch::kCPU).to(torch::kInt64).contiguous();
  WriteFileAtomically(ctx.env().files(), path, [&](std::ostream& out) {
    for (size_t s = 0; s < predicted.size(); ++s)
      out << fmt::format("{} {} {}\n", s, predicted[s], labels.data_ptr<int64_t>()[s]);
  });
}

// --eval-only: the checkpoint's accuracy and loss on the test set.
TrainResult EvaluateCheckpoint(comm::Context& ctx, const Replicas& replicas, Model& model,
                               const TensorDataset& test, int64_t step, const std::string& predictions_path,
                               std::ostream* log) {
  TrainResult r;
  std::vector<int64_t> pairs;
  const Evaluation e = Evaluate(ctx, replicas, model, test, predictions_path.empty() ? nullptr : &pairs);
  if (!predictions_path.empty()) WritePredictions(ctx, predictions_path, test, pairs);
  r.epoch_accuracy.push_back(e.accuracy);
  r.test_accuracy = e.accuracy;
  r.test_loss = e.loss;
  r.first_step = r.steps_done = step;
  if (log) {
    *log << fmt::format("checkpoint of step {}: test accuracy {:.2f}%, test loss {:.4f} ({} samples)\n", step,
                        100 * e.accuracy, e.loss, test.size());
  }
  return r;
}

}  // namespace

// OpenBLAS keeps its own thread pool; size it like torch's (the symbol is absent with other BLAS).
void SetComputeThreads(int threads) {
  torch::set_num_threads(threads);
  using SetFn = void (*)(int);
  if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(threads);
}

TrainResult Train(comm::Context& ctx, const TrainOptions& o) {
  ValidateOptions(o);
  SetComputeThreads(o.threads);
  DataOptions data = o.data;
  if (data.shape.empty()) data.shape = DefaultInputShape(o.model);
  DataSplit split = LoadData(data);
  std::vector<int64_t> shape(split.train.images.sizes().begin() + 1, split.train.images.sizes().end());
  const Replicas replicas = MakeReplicas(ctx, o.spatial_parallel);
  std::shared_ptr<Model> model = BuildModel(o.model, shape, o.seed, replicas.group.get());
  model->to(TrainDevice(ctx, o));
  // Split over a group, batch norm needs the whole example's statistics at least.
  if (o.sync_batch_norm) {
    UseSyncBatchNorm(ctx, *model);
  } else if (replicas.group) {
    UseSyncBatchNorm(*replicas.group_context, *model);
  }
  SyncOptions sync_options = o.sync;
  sync_options.batch_per_rank = o.batch;
  // A spatial rank's gradient is a part of its example's, not a sample of the noise.
  sync_options.measure_gradient_norms = AgreeOnMeasuring(ctx, o) && !replicas.group;
  BatchOrder order(split.train.size(), o.batch, replicas.count, o.seed);
  OptimizerOptions optimizer = o.optimizer;
  if (o.cosine_lr) optimizer.cosine_steps = o.steps > 0 ? o.steps : o.epochs * order.steps_per_epoch();
  GradSync sync(ctx, *model, optimizer, sync_options);
  TrainResult r;
  r.choices = sync.layer_choices();
  int64_t per_rank = o.batch, batch = o.batch * replicas.count;  // a batch file may change both
  if (o.batch_max > 0 && batch > o.batch_max) {
    throw InvalidArgumentError(fmt::format("--batch-max {} is below the total batch {} ({} x --batch {})",
                                           o.batch_max, batch, Count(ctx.size(), "rank"), o.batch));
  }
  const Start start = StartPosition(o, sync, *model, batch);
  if (o.eval_only) {
    return EvaluateCheckpoint(ctx, replicas, *model, split.test, start.at.step, o.predictions_path,
                              ctx.rank() == 0 ? o.log : nullptr);
  }
  Position at = start.at;
  const int64_t base_batch = start.base_batch;
  NoiseScale noise(base_batch);
  noise.Restore(start.noise);
  r.first_step = at.step;
  // Without adaptive batches the run is `total` steps; with them, `total` scale-invariant
  // iterations (--steps or --epochs counted at the base batch).
  const int64_t total = o.steps > 0        ? o.steps
                        : o.adaptive_batch ? o.epochs * split.train.size() / base_batch
                                           : o.epochs * order.steps_per_epoch();
  auto finished = [&](const Position& p) {
    return o.adaptive_batch ? p.progress >= static_cast<double>(total) - 1e-9 : p.step >= total;
  };
  std::ostream* log = ctx.rank() == 0 ? o.log : nullptr;
  if (log) PrintPlan(*log, ctx, o, split.description, sync);
  if (log && o.adaptive_batch) {
    *log << fmt::format(
        "# adaptive batch: total batch {} (base {}), AdaScale gain {:.3f} at progress {:.1f} of {}\n", batch,
        base_batch, noise.Gain(batch), at.progress, total);
  }
  std::unique_ptr<CsvWriter> csv;
  if (log && !o.metrics_path.empty()) csv = std::make_unique<CsvWriter>(o.metrics_path, MetricsColumns());
  model->train();
  JobControl control(ctx, {o.status_path, o.stop_path, o.batch_path}, total, o.batch);
  const int64_t most_per_rank = (o.batch_max > 0 ? o.batch_max : split.train.size()) / ctx.size();
  double train_seconds = 0;
  r.steps_done = at.step;
  // Read from /proc each step only where the metrics file shows it.
  const int64_t resident = csv && ResetPeakResidentMemory() ? ResidentMemory().current : -1;
  StepRecord rec;
  int64_t epoch = 0, epoch_samples = 1;  // of the step just taken
  TrainLoopHooks hooks;
  hooks.finished = [&](int64_t) { return finished(at); };
  hooks.step = [&](int64_t) {
    const double gain = o.adaptive_batch ? noise.Gain(batch) : 1.0;
    rec = TrainStep(replicas, *model, sync, order, split.train, per_rank, at, gain);
    epoch_samples = order.steps_per_epoch() * batch;
    epoch = at.samples / epoch_samples;
    at = {at.step + 1, at.progress + gain, at.samples + batch};
    train_seconds += rec.seconds;
    if (resident >= 0) rec.peak_memory_bytes = static_cast<double>(ResidentMemory().peak - resident);
    r.steps.push_back(rec);
    r.steps_done = at.step;
    noise.Add(sync.gradient_norms());
    control.Record(at.step, at.progress, rec.seconds, rec.exposed_comm_fraction * rec.seconds, noise);
    if (log && o.progress_bar) DrawProgress(*log, static_cast<int64_t>(at.progress) - 1, total, rec);
  };
  hooks.report = [&](int64_t, bool evaluated) {
    if (csv) csv->Row(MetricsRow(rec, train_seconds, noise, evaluated ? &r.test_accuracy : nullptr));
  };
  hooks.loss = [&](int64_t) { return rec.loss; };
  hooks.epoch_end = [&](int64_t) { return at.samples / epoch_samples != epoch; };
  hooks.evaluate = [&](int64_t) { EndEpoch(ctx, replicas, *model, sync, split.test, o, epoch, rec, r, log); };
  hooks.checkpoint = [&](int64_t) { Checkpoint(ctx, sync, *model, o, at, base_batch, noise); };
  hooks.stop_requested = [&](int64_t) {
    const JobControl::Request asked = control.Check(most_per_rank);
    if (asked.stop) return true;
    if (asked.batch_per_rank > 0) {
      // Pollux's in-place change: the data order goes on from the samples seen, AdaScale's gain
      // follows the new batch.
      sync.Flush();
      per_rank = asked.batch_per_rank;
      batch = per_rank * replicas.count;
      order = BatchOrder(split.train.size(), per_rank, replicas.count, o.seed);
      sync.SetBatchPerRank(per_rank);
      control.SetBatchPerRank(per_rank);
      if (log) {
        *log << fmt::format("{}# batch: total {} ({} per rank) from step {}, AdaScale gain {:.3f}\n",
                            o.progress_bar ? "\n" : "", batch, per_rank, at.step, noise.Gain(batch));
      }
    }
    return false;
  };
  r.stopped = RunTrainLoop({.first_step = at.step,
                            .checkpoints = !o.checkpoint_dir.empty(),
                            .checkpoint_every = o.checkpoint_every,
                            .evaluate = o.evaluate},
                           hooks)
                  .stopped;
  if (log && r.stopped) {
    *log << fmt::format("{}stopped at step {} (progress {:.1f} of {}; checkpoint written)\n",
                        o.progress_bar ? "\n" : "", at.step, at.progress, total);
  }
  sync.Flush();
  control.Finish(r.steps_done, at.progress, r.stopped);
  if (log && o.progress_bar && !o.evaluate) *log << "\n";
  if (csv) csv->Commit();
  r.progress = at.progress;
  r.sync = sync.stats();
  r.exposed_comm_fraction = train_seconds > 0 ? r.sync.wait_seconds / train_seconds : 0;
  r.parameters = sync.flat_parameters().clone();
  if (!o.predictions_path.empty()) {
    std::vector<int64_t> pairs;
    Evaluate(ctx, replicas, *model, split.test, &pairs);
    WritePredictions(ctx, o.predictions_path, split.test, pairs);
  }
  Summarise(r);
  return r;
}

}  // namespace parasol::dl
