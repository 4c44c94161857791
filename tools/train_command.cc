// `parasol train`: data-parallel training of a neural network (libtorch compute), alone or under
// mpirun, with the sync mode and backend chosen on the command line.
#include <unistd.h>

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "parasol/comm/context.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"
#include "parasol/dl/dynamic/dynamic_trainer.h"
#include "parasol/dl/lm_trainer.h"
#include "parasol/dl/models.h"
#include "parasol/dl/trainer.h"
#include "tools/command.h"
#include "tools/command_line.h"
#include "tools/option_checks.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

class TrainCommand : public Command {
 public:
  explicit TrainCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("train", "Train a neural network, data parallel over the ranks");
    app_->add_option(
            "--model", o_.model,
            "mlp, lenet, resnet20, vgg, transformer-lm, or a dynamic network: tree-lstm, lstm-lm, tree-fc")
        ->check(CLI::IsMember(
            {"mlp", "lenet", "resnet20", "vgg", "transformer-lm", "tree-lstm", "lstm-lm", "tree-fc"}))
        ->capture_default_str();
    app_->add_option("--dataset", o_.data.kind,
                     "mnist, cifar10-synthetic, synthetic, text (transformer-lm, lstm-lm), sst (tree-lstm)")
        ->check(CLI::IsMember({"mnist", "cifar10-synthetic", "synthetic", "text", "sst"}))
        ->capture_default_str();
    app_->add_option(
        "--data", o_.data.dir,
        "mnist: folder of the IDX files; text: a plain-text file; sst: folder of train/dev/test.txt");
    AddLanguageModelOptions();
    AddDynamicOptions();
    app_->add_option("--samples", o_.data.train_samples, "synthetic sets: training samples")
        ->check(Between(1, 1e9))
        ->capture_default_str();
    app_->add_option("--test-samples", o_.data.test_samples, "synthetic sets: test samples")
        ->check(Between(1, 1e9))
        ->capture_default_str();
    app_->add_option("--image-size", image_size_,
                     "--dataset synthetic: images of HxW (or N for NxN) pixels; default the model's own");
    app_->add_option("--spatial-parallel", o_.spatial_parallel,
                     "Ranks that split each image's height (halo rows exchanged around every convolution); "
                     "data parallel across groups of them (lenet, resnet20, vgg)")
        ->check(Between(1, 4096))
        ->capture_default_str();
    app_->add_option("--batch", o_.batch, "Batch per rank")->check(Between(1, 1e7))->capture_default_str();
    app_->add_option("--epochs", o_.epochs, "Epochs")->check(Between(1, 1e6))->capture_default_str();
    app_->add_option("--steps", o_.steps, "Steps instead of epochs (0: use --epochs)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_flag("--adaptive-batch", o_.adaptive_batch,
                   "The total batch may change on resume: AdaScale scales the learning rate by the measured "
                   "gradient noise; --steps/--epochs count iterations at the first run's batch");
    app_->add_option(
            "--batch-max", o_.batch_max,
            "Largest total batch (ranks x --batch) a run may have; a scheduler keeps within it (0: none)")
        ->check(Between(0, 1e9))
        ->capture_default_str();
    app_->add_option("--lr", o_.optimizer.lr, "Learning rate")->check(Positive())->capture_default_str();
    app_->add_option("--momentum", o_.optimizer.momentum, "Momentum")
        ->check(Between(0, 1))
        ->capture_default_str();
    app_->add_option("--weight-decay", o_.optimizer.weight_decay, "Weight decay")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_flag("--lars", o_.optimizer.lars, "LARS layer-wise trust ratios");
    app_->add_option("--lars-eta", o_.optimizer.lars_eta, "LARS trust coefficient")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option(
            "--lr-schedule", lr_schedule_,
            "constant, or cosine (to 0 at the last step); default: cosine, constant with --adaptive-batch")
        ->check(CLI::IsMember({"constant", "cosine"}));
    app_->add_option("--warmup-steps", o_.optimizer.warmup_steps, "Linear learning-rate warm-up")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option(
            "--device", o_.device,
            "cpu, or cuda (mlp, lenet, resnet20, vgg: each rank on a GPU of its host, by local rank)")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();
    app_->add_option("--sync", sync_, "after-backward, buckets, wfbp or p3")->capture_default_str();
    app_->add_option("--comm", comm_, "allreduce, ps, hybrid or none (no synchronisation)")
        ->capture_default_str();
    app_->add_option("--bucket-mb", bucket_mb_, "buckets: bucket size (MB)")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--slice", o_.sync.slice_elements, "p3: slice size (elements)")
        ->check(Between(1, 1e12))
        ->capture_default_str();
    app_->add_option("--staleness", o_.sync.ps_staleness, "ps: 0 = BSP, s = SSP(s)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_flag("--shard-updates", o_.sync.shard_updates,
                   "Weight-update sharding (reduce-scatter, update, all-gather)");
    app_->add_flag("--sync-bn", o_.sync_batch_norm, "Batch-norm statistics over all ranks");
    app_->add_flag("--no-eval", no_eval_, "Skip evaluation");
    app_->add_flag(
        "--no-progress", no_progress_,
        "No progress bar even on a terminal (there is none when stdout is a file, a pipe, or under mpirun)");
    run_.threads = static_cast<uint32_t>(o_.threads);
    run_.seed = o_.seed;
    AddRunOptions(
        app_, &run_,
        {.unit = "step",
         .metrics_columns = "step,seconds,step_seconds,samples_per_sec,loss,exposed_comm_fraction,"
                            "grad_sqr,grad_var_per_sample,noise_scale_samples,test_accuracy,peak_memory_mb "
                            "(transformer-lm and dynamic networks: see the README)",
         .threads = "Compute threads per rank",
         .seed = "Initialisation and data order"});
    app_->add_flag("--eval-only", o_.eval_only,
                   "Only evaluate the --resume checkpoint on the test set (accuracy, loss); train nothing");
    app_->add_option("--predictions", o_.predictions_path,
                     "Write the model's class for every test sample here at the end (with --eval-only: the "
                     "checkpoint's): 'sample predicted label' per line");
    app_->add_option("--status", o_.status_path,
                     "Keep a status file current (for a scheduler; see job_control.h)");
    app_->add_option("--stop-file", o_.stop_path,
                     "When this file appears: checkpoint the current step and stop");
    app_->add_option("--batch-file", o_.batch_path,
                     "With --adaptive-batch: when this file appears, go on at the batch per rank it holds "
                     "(and remove it)");
  }

  bool NeedsMpi() const override { return true; }

  // transformer-lm's own options (see dl/lm_trainer.h).
  void AddLanguageModelOptions() {
    dl::TransformerOptions& m = lm_.model;
    app_->add_option("--level", level_, "text: char or word tokens")->capture_default_str();
    app_->add_option("--layers", m.layers, "transformer-lm: blocks")
        ->check(Between(1, 1000))
        ->capture_default_str();
    app_->add_option("--d-model", m.d_model, "transformer-lm: model width")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--heads", m.heads, "transformer-lm: attention heads")
        ->check(Between(1, 1e4))
        ->capture_default_str();
    app_->add_option("--ffn", m.ffn, "transformer-lm: feed-forward width (each expert's)")
        ->check(Between(1, 1e7))
        ->capture_default_str();
    app_->add_option("--seq", m.seq, "transformer-lm: sequence length")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--tensor-parallel", lm_.tensor_parallel, "transformer-lm: ranks that split each layer")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--moe-experts", m.moe_experts,
                     "transformer-lm: experts per mixture-of-experts layer (0: dense)")
        ->check(Between(0, 1e6))
        ->capture_default_str();
    app_->add_option("--moe-top-k", m.moe_top_k, "transformer-lm: experts per token (1 or 2)")
        ->check(Between(1, 2))
        ->capture_default_str();
    app_->add_option("--moe-every", m.moe_every, "transformer-lm: every N-th block is a mixture of experts")
        ->check(Between(1, 1000))
        ->capture_default_str();
    app_->add_option("--capacity-factor", m.capacity_factor, "transformer-lm: expert capacity while training")
        ->check(Between(0.01, 1000))
        ->capture_default_str();
    app_->add_option("--eval-capacity-factor", m.eval_capacity_factor,
                     "transformer-lm: expert capacity evaluating")
        ->check(Between(0.01, 1000))
        ->capture_default_str();
    app_->add_option("--aux-loss-coef", lm_.aux_loss_coef, "transformer-lm: load-balancing loss weight")
        ->check(Between(0, 1e6))
        ->capture_default_str();
    app_->add_option("--router-z-loss-coef", lm_.z_loss_coef, "transformer-lm: router z-loss weight")
        ->check(Between(0, 1e6))
        ->capture_default_str();
    app_->add_option("--expert-parallel", lm_.expert_parallel,
                     "transformer-lm: replicas that split the experts")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--eval-batches", lm_.eval_batches,
                     "transformer-lm: validation batches at most (0: all)")
        ->check(NonNegative())
        ->capture_default_str();
  }

  // The dynamic networks' options (see dl/dynamic/dynamic_trainer.h).
  void AddDynamicOptions() {
    app_->add_option("--hidden", dyn_.hidden, "dynamic networks: hidden state width")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--embedding", dyn_.embedding, "dynamic networks: word vector width")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--embeddings", dyn_.embeddings_path,
                     "dynamic networks: word vectors, 'word v1 ... vD' per line");
    app_->add_option("--dropout", dyn_.dropout, "dynamic networks: dropout before the output layer")
        ->check(Between(0, 0.95))
        ->capture_default_str();
    app_->add_option("--batching", batching_,
                     "dynamic networks: batched (by level, across graphs) or per-node")
        ->capture_default_str();
    app_->add_flag("--no-lazy-batching", no_lazy_,
                   "dynamic networks: project inputs level by level, not all at once");
    app_->add_option("--trees", dyn_.tree_count, "tree-fc: synthetic trees")
        ->check(Between(1, 1e8))
        ->capture_default_str();
    app_->add_option("--tree-depth", dyn_.tree_depth, "tree-fc: levels of each complete binary tree")
        ->check(Between(1, 20))
        ->capture_default_str();
  }

  bool Dynamic() const { return o_.model == "tree-lstm" || o_.model == "lstm-lm" || o_.model == "tree-fc"; }

  void Validate() override {
    dl::ParseSyncMode(sync_);
    dl::ParseBackend(comm_);
    if (!o_.status_path.empty()) CheckOutputFile("--status", o_.status_path);
    if (!o_.predictions_path.empty()) CheckOutputFile("--predictions", o_.predictions_path);
    if (!o_.predictions_path.empty() && (o_.model == "transformer-lm" || Dynamic()))
      throw InvalidArgumentError("--predictions: for the image classifiers (mlp, lenet, resnet20, vgg)");
    CheckRunOptions(&run_, 0);  // no --checkpoint-every: the trainers checkpoint at the end
    o_.threads = static_cast<int>(run_.threads);
    ApplyRunOptions(run_, &o_);
    o_.metrics_path = run_.metrics;
    o_.sync.timeout_ms = run_.timeout();
    if (o_.model == "transformer-lm") ValidateLanguageModel();
    if (Dynamic()) ValidateDynamic();
    if (o_.device == "cuda" && (o_.model == "transformer-lm" || Dynamic())) {
      throw InvalidArgumentError(
          fmt::format("--device cuda: mlp, lenet, resnet20 or vgg (--model {} trains on CPU)", o_.model));
    }
    if (o_.device == "cuda" && o_.sync_batch_norm)
      throw InvalidArgumentError("--sync-bn is not supported with --device cuda");
    if (!image_size_.empty()) o_.data.shape = ImageShape();
    if (o_.spatial_parallel > 1 && (o_.model == "transformer-lm" || Dynamic()))
      throw InvalidArgumentError("--spatial-parallel: for the image classifiers (lenet, resnet20, vgg)");
  }

  // --image-size HxW or N, with the model's channels.
  std::vector<int64_t> ImageShape() const {
    if (o_.data.kind != "synthetic") throw InvalidArgumentError("--image-size: for --dataset synthetic");
    const std::vector<std::string_view> sides = SplitFields(image_size_, 'x');
    int64_t h = 0, w = 0;
    const bool parsed = sides.size() <= 2 && ParseNumber(sides[0], &h) && ParseNumber(sides.back(), &w);
    if (!parsed || h < 1 || w < 1 || h > 65536 || w > 65536) {
      throw InvalidArgumentError(
          fmt::format("--image-size '{}': HxW or N, whole numbers from 1 to 65536", image_size_));
    }
    return {dl::DefaultInputShape(o_.model)[0], h, w};
  }

  void ValidateDynamic() {
    const std::string want = o_.model == "tree-lstm" ? "sst" : o_.model == "lstm-lm" ? "text" : "synthetic";
    if (app_->count("--dataset") > 0 && o_.data.kind != want) {
      throw InvalidArgumentError(fmt::format("--model {} trains on --dataset {}", o_.model, want));
    }
    if (want != "synthetic" && o_.data.dir.empty())
      throw InvalidArgumentError(fmt::format("--model {} needs --data", o_.model));
    if (batching_ != "batched" && batching_ != "per-node") {
      throw InvalidArgumentError(fmt::format("--batching {}: batched or per-node", batching_));
    }
    for (const char* unsupported : {"--batch-file", "--adaptive-batch", "--batch-max", "--sync-bn", "--lars",
                                    "--shard-updates", "--eval-only", "--lr-schedule"}) {
      if (app_->count(unsupported) > 0) {
        throw InvalidArgumentError(fmt::format("{} is not supported with --model {}", unsupported, o_.model));
      }
    }
  }

  // What transformer-lm takes of the shared options, and what it does not take.
  void ValidateLanguageModel() {
    if (o_.data.kind != "text") throw InvalidArgumentError("--model transformer-lm trains on --dataset text");
    if (o_.data.dir.empty()) throw InvalidArgumentError("--dataset text needs --data FILE");
    for (const char* unsupported : {"--batch-file", "--adaptive-batch", "--batch-max", "--sync-bn", "--lars",
                                    "--eval-only", "--lr-schedule"}) {
      if (app_->count(unsupported) > 0) {
        throw InvalidArgumentError(
            fmt::format("{} is not supported with --model transformer-lm", unsupported));
      }
    }
    if (o_.sync.shard_updates && (!o_.checkpoint_dir.empty() || !o_.resume_dir.empty())) {
      throw InvalidArgumentError("transformer-lm: --checkpoint and --resume do not take --shard-updates");
    }
    lm_.level = dl::ParseTextLevel(level_);
  }

  int Run(comm::MpiRuntime* mpi) override {
    if (o_.model == "transformer-lm") return RunLanguageModel(mpi);
    if (Dynamic()) return RunDynamic(mpi);
    o_.sync.mode = dl::ParseSyncMode(sync_);
    o_.sync.backend = dl::ParseBackend(comm_);
    o_.sync.bucket_bytes = static_cast<uint64_t>(bucket_mb_ * (1 << 20));
    o_.evaluate = !no_eval_;
    o_.cosine_lr = lr_schedule_.empty() ? !o_.adaptive_batch : lr_schedule_ == "cosine";
    o_.log = &std::cout;
    o_.progress_bar = !no_progress_ && StdoutIsATerminal();
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
    dl::TrainResult r = dl::Train(ctx, o_);
    if (ctx.rank() == 0 && !o_.eval_only) {
      // A run stopped before its first evaluation, or one with --no-eval, has no accuracy to show.
      const std::string accuracy = r.epoch_accuracy.empty()
                                       ? "not evaluated"
                                       : fmt::format("test accuracy {:.2f}%", 100 * r.test_accuracy);
      std::cout << fmt::format(
          "median step {:.2f} ms, {:.0f} samples/s, exposed communication {:.3f}, sent {:.1f} MB per rank, "
          "{}\n",
          1e3 * r.median_step_seconds, r.median_samples_per_sec, r.exposed_comm_fraction,
          r.sync.bytes_sent / 1e6, accuracy);
    }
    return 0;
  }

  int RunLanguageModel(comm::MpiRuntime* mpi) {
    lm_.data_path = o_.data.dir;
    lm_.batch = o_.batch;
    lm_.epochs = o_.epochs;
    lm_.steps = o_.steps;
    lm_.optimizer.lr = app_->count("--lr") > 0 ? o_.optimizer.lr : 1e-3;  // Adam's usual rate
    lm_.optimizer.weight_decay = o_.optimizer.weight_decay;
    lm_.optimizer.warmup_steps = o_.optimizer.warmup_steps;
    lm_.sync = o_.sync;
    lm_.sync.mode = dl::ParseSyncMode(sync_);
    lm_.sync.backend = dl::ParseBackend(comm_);
    lm_.sync.bucket_bytes = static_cast<uint64_t>(bucket_mb_ * (1 << 20));
    lm_.threads = o_.threads;
    lm_.seed = o_.seed;
    lm_.evaluate = !no_eval_;
    lm_.metrics_path = o_.metrics_path;
    lm_.checkpoint_dir = o_.checkpoint_dir;
    lm_.checkpoint_every = o_.checkpoint_every;
    lm_.resume_dir = o_.resume_dir;
    lm_.control = {.status = o_.status_path, .stop = o_.stop_path};
    lm_.log = &std::cout;
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
    const dl::LmResult r = dl::TrainLm(ctx, lm_);
    if (ctx.rank() == 0) {
      const std::string validation =
          r.evaluations.empty() ? "not evaluated"
                                : fmt::format("validation loss {:.4f}, perplexity {:.3f}",
                                              r.evaluations.back().loss, r.evaluations.back().perplexity);
      std::cout << fmt::format(
          "median {:.0f} tokens/s, {} parameters on rank 0, sent {:.1f} MB per rank, {}\n",
          r.median_tokens_per_sec, r.parameters, r.sync.bytes_sent / 1e6, validation);
    }
    return 0;
  }

  int RunDynamic(comm::MpiRuntime* mpi) {
    dyn_.model = o_.model;
    dyn_.data = o_.data.dir;
    dyn_.batching =
        batching_ == "per-node" ? dl::dynamic::Batching::kPerNode : dl::dynamic::Batching::kBatched;
    dyn_.hoist_inputs = !no_lazy_;
    dyn_.batch = app_->count("--batch") > 0 ? o_.batch : 25;
    dyn_.epochs = app_->count("--epochs") > 0 ? o_.epochs : 10;
    dyn_.steps = o_.steps;
    if (app_->count("--lr") > 0) dyn_.optimizer.lr = o_.optimizer.lr;
    if (app_->count("--weight-decay") > 0) dyn_.optimizer.weight_decay = o_.optimizer.weight_decay;
    dyn_.optimizer.warmup_steps = o_.optimizer.warmup_steps;
    dyn_.sync = o_.sync;
    dyn_.sync.mode = app_->count("--sync") > 0 ? dl::ParseSyncMode(sync_) : dl::SyncMode::kAfterBackward;
    dyn_.sync.backend = dl::ParseBackend(comm_);
    dyn_.threads = o_.threads;
    dyn_.seed = o_.seed;
    dyn_.evaluate = !no_eval_;
    dyn_.metrics_path = o_.metrics_path;
    dyn_.checkpoint_dir = o_.checkpoint_dir;
    dyn_.checkpoint_every = o_.checkpoint_every;
    dyn_.resume_dir = o_.resume_dir;
    dyn_.control = {.status = o_.status_path, .stop = o_.stop_path};
    dyn_.log = &std::cout;
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
    const dl::dynamic::DynamicResult r = dl::dynamic::TrainDynamic(ctx, dyn_);
    if (ctx.rank() == 0) {
      if (r.best_evaluation >= 0) {
        const dl::dynamic::DynamicEvaluation& e = r.evaluations[static_cast<size_t>(r.best_evaluation)];
        std::cout << fmt::format(
            "best dev epoch {}: root accuracy fine-grained test {:.2f}%, binary test {:.2f}%\n", e.epoch,
            100 * e.test_fine, 100 * e.test_binary);
      }
      std::cout << fmt::format("median {:.1f} samples/s, last batch's loss {:.4f}\n",
                               r.median_samples_per_sec, r.final_loss);
    }
    return 0;
  }

 private:
  dl::TrainOptions o_;
  dl::LmOptions lm_;
  dl::dynamic::DynamicTrainOptions dyn_;
  std::string batching_ = "batched";
  bool no_lazy_ = false;
  std::string level_ = "char";
  std::string sync_ = "wfbp";
  std::string lr_schedule_;  // empty: cosine, or constant with --adaptive-batch
  std::string image_size_;
  std::string comm_ = "allreduce";
  double bucket_mb_ = 25;
  bool no_eval_ = false, no_progress_ = false;
  RunOptions run_;
};

}  // namespace

std::unique_ptr<Command> MakeTrainCommand(CLI::App& parent) { return std::make_unique<TrainCommand>(parent); }

}  // namespace parasol::tools
