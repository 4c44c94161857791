// `parasol mlr`: multiclass logistic regression by minibatch SGD over MPI ranks, the weights kept
// in sync on the parameter server (--comm ps, any consistency model) or by sufficient-factor
// broadcasting (--comm sfb); --comm auto picks the one that sends fewer bytes for this problem.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <set>

#include "parasol/apps/mlr/mlr_trainer.h"
#include "parasol/apps/mlr/text_features.h"
#include "parasol/comm/context.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/divergence_guard.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/data/dataset.h"
#include "parasol/data/libsvm_reader.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/predict_command.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

class MlrCommand : public Command {
 public:
  explicit MlrCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("mlr",
                                 "Multiclass logistic regression: parameter server or sufficient factors");
    app_->add_option("--data", data_, "Training set: LIBSVM file (multiclass labels), or NAME.csv");
    app_->add_option("--corpus", corpus_,
                     "Training set as text: a folder or .tar.gz of CLASS/FILE documents, as tf-idf features");
    app_->add_option("--test-corpus", test_corpus_, "Test set as text (the training vocabulary and idf)");
    app_->add_option("--min-count", min_count_, "With --corpus: words seen fewer times are dropped")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--save-features", save_features_,
                     "With --corpus: write the tf-idf rows to DIR/train.svm and DIR/test.svm (LIBSVM)");
    app_->add_option("--label-column", label_column_, "The label's column in a CSV file")
        ->capture_default_str();
    app_->add_option("--test", test_, "Test set: accuracy after each epoch");
    app_->add_option("--model", model_,
                     "Write the trained model here (read by mlr-predict; with --corpus, apply it to the "
                     "rows of --save-features)");
    app_->add_option("--comm", comm_, "ps, sfb or auto")->capture_default_str();
    app_->add_option("--consistency", consistency_, "With --comm ps: bsp, ssp:S, essp:S, vap:S:V or asp")
        ->capture_default_str();
    app_->add_option("--lr", o_.learning_rate, "Learning rate")->check(Positive())->capture_default_str();
    app_->add_option("--lr-decay", o_.lr_decay, "Epoch e uses lr / (1 + decay (e - 1))")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--lambda", o_.lambda, "L2 weight (scikit-learn's C = 1 / (n lambda))")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--batch", o_.batch, "Samples per process per step")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--epochs", o_.epochs, "Passes over the data")->check(Positive())->capture_default_str();
    app_->add_option("--max-steps", o_.max_steps, "Stop after this many steps (0: the epochs)")
        ->capture_default_str();
    AddRunOptions(app_, &run_,
                  {.which = RunOptions::kAll & ~RunOptions::kThreads,
                   .unit = "epoch",
                   .metrics_columns = "epoch,steps,seconds,train_loss,test_accuracy,bytes_sent",
                   .seed = "Seed of the sample order"});
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    if (data_.empty() == corpus_.empty()) throw InvalidArgumentError("give --data or --corpus (one of them)");
    if (!model_.empty()) CheckOutputFile("--model", model_);
    if (!test_.empty() && !corpus_.empty())
      throw InvalidArgumentError("with --corpus, the test set is --test-corpus");
    if (!test_corpus_.empty() && corpus_.empty())
      throw InvalidArgumentError("--test-corpus goes with --corpus");
    if (!save_features_.empty()) {
      if (corpus_.empty()) throw InvalidArgumentError("--save-features goes with --corpus");
      CheckOutputFolder("--save-features", save_features_);
    }
    if (comm_ != "auto") o_.comm = apps::mlr::ParseComm(comm_);
    o_.consistency = ps::ParseConsistencySpec(consistency_);
    if (comm_ == "sfb" && consistency_ != "bsp")
      throw InvalidArgumentError(
          "--consistency is for --comm ps; sufficient factors are exchanged every step");
    CheckRunOptions(&run_, o_.epochs);
    ApplyRunOptions(run_, &o_);
  }

  int Run(comm::MpiRuntime* mpi) override;

 private:
  apps::mlr::Comm Choose(const data::Dataset& d, int ranks) const;

  apps::mlr::MlrOptions o_;
  RunOptions run_;
  std::string data_, label_column_ = "y", test_, comm_ = "auto", consistency_ = "bsp", model_;
  std::string corpus_, test_corpus_, save_features_;
  uint32_t min_count_ = 5;
};

// The scheme whose estimated bytes per step are fewer, from the data's shape: nonzeros per sample,
// and the distinct features a step's samples touch (measured on the first batches).
apps::mlr::Comm MlrCommand::Choose(const data::Dataset& d, int ranks) const {
  std::set<double> classes(d.labels.begin(), d.labels.end());
  const double nnz = static_cast<double>(d.nonzeros()) / static_cast<double>(std::max<size_t>(d.rows(), 1));
  double rows = 0;
  uint64_t batches = 0;
  for (size_t from = 0; from + o_.batch <= d.rows() && batches < 20; from += o_.batch, ++batches) {
    std::set<uint32_t> touched;
    for (size_t r = from; r < from + o_.batch; ++r)
      touched.insert(d.row_indices(r).begin(), d.row_indices(r).end());
    rows += static_cast<double>(touched.size() + 1);
  }
  rows = batches ? rows / static_cast<double>(batches) : 1;
  const apps::mlr::CommCost c = apps::mlr::EstimateCommCost(classes.size(), nnz, rows, o_.batch, ranks);
  return c.sfb_bytes <= c.ps_bytes ? apps::mlr::Comm::kSfb : apps::mlr::Comm::kPs;
}

int MlrCommand::Run(comm::MpiRuntime* mpi) {
  comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
  const bool root = ctx.rank() == 0;
  data::Dataset d;
  std::unique_ptr<data::Dataset> test;
  if (!corpus_.empty()) {
    apps::mlr::TextFeatures f = apps::mlr::ReadTextFeatures(corpus_, test_corpus_, min_count_);
    if (root) {
      std::cout << fmt::format("# {}: {} documents, {} classes, {} words (tf-idf){}\n", corpus_,
                               f.train.rows(), f.classes.size(), f.vocab.size(),
                               test_corpus_.empty() ? "" : fmt::format("; test {} documents", f.test.rows()));
      if (!save_features_.empty()) {
        data::WriteLibsvm(save_features_ + "/train.svm", f.train);
        if (!test_corpus_.empty()) data::WriteLibsvm(save_features_ + "/test.svm", f.test);
      }
    }
    d = std::move(f.train);
    if (!test_corpus_.empty()) test = std::make_unique<data::Dataset>(std::move(f.test));
  } else {
    d = data::ReadDataset(data_, label_column_);
    if (!test_.empty()) test = std::make_unique<data::Dataset>(data::ReadDataset(test_, label_column_));
  }
  if (comm_ == "auto") o_.comm = Choose(d, ctx.size());
  if (std::set<double>(d.labels.begin(), d.labels.end()).size() < 2)
    throw ParseError(data_.empty() ? corpus_ : data_, 0,
                     "multiclass logistic regression needs two classes at least");
  std::unique_ptr<CsvWriter> csv;
  if (root) {
    std::cout << fmt::format(
                     "# parasol mlr: {} samples, {} features, {} nonzeros; --comm {}{}; {}, "
                     "batch {} each\n",
                     d.rows(), d.cols, d.nonzeros(), apps::mlr::CommName(o_.comm),
                     o_.comm == apps::mlr::Comm::kPs ? " " + o_.consistency.ToString() : "",
                     Count(ctx.size(), "process"), o_.batch)
              << fmt::format("{:>6} {:>8} {:>9} {:>11} {:>9} {:>11}\n", "epoch", "steps", "seconds",
                             "train_loss", "test_acc", "MB_sent");
    if (!run_.metrics.empty()) {
      csv = std::make_unique<CsvWriter>(
          run_.metrics,
          std::vector<std::string>{"epoch", "steps", "seconds", "train_loss", "test_accuracy", "bytes_sent"});
    }
  }
  // The model starts at zero, where the loss is ln(classes) per sample: a loss far above that
  // diverged even in the first epoch.
  DivergenceGuard diverged("training loss", "epoch", "lower --lr");
  diverged.Check(0, std::log(static_cast<double>(std::set<double>(d.labels.begin(), d.labels.end()).size())));
  auto on_epoch = [&](const apps::mlr::MlrEpoch& e) {
    const std::string acc = e.test_accuracy < 0 ? "-" : fmt::format("{:.4f}", e.test_accuracy);
    std::cout << fmt::format("{:>6} {:>8} {:>9.3f} {:>11.6f} {:>9} {:>11.3f}\n", e.epoch, e.steps, e.seconds,
                             e.train_loss, acc, static_cast<double>(e.bytes_sent) / 1e6);
    if (csv) {
      csv->Row({std::to_string(e.epoch), std::to_string(e.steps), fmt::format("{:.6f}", e.seconds),
                fmt::format("{:.9g}", e.train_loss),
                e.test_accuracy < 0 ? "" : fmt::format("{:.6f}", e.test_accuracy),
                std::to_string(e.bytes_sent)});
    }
    diverged.Check(e.epoch, e.train_loss);
  };
  if (root && !o_.resume_dir.empty()) std::cout << fmt::format("# resuming from {}\n", o_.resume_dir);
  const apps::mlr::MlrResult r = apps::mlr::TrainMlr(ctx, d, test.get(), o_, on_epoch);
  if (!root) return 0;
  if (csv) csv->Commit();
  if (!model_.empty()) apps::mlr::WriteMlrModel(ctx.env().files(), model_, r.model);
  if (r.epochs.empty()) {
    std::cout << fmt::format("final: the checkpoint is at epoch {} already ({} steps)\n", r.first_epoch - 1,
                             r.steps);
    return 0;
  }
  std::cout << fmt::format("final: {} steps, {:.3f} s, train loss {:.6f}{}, {:.3f} MB sent by this process\n",
                           r.steps, r.seconds, r.epochs.back().train_loss,
                           test ? fmt::format(", test accuracy {:.4f}", r.epochs.back().test_accuracy) : "",
                           static_cast<double>(r.bytes_sent) / 1e6);
  return 0;
}

// `parasol mlr-predict --model FILE --data FILE [--output FILE]`: the class of each row, and the
// accuracy when the rows are labelled.
class MlrPredictCommand : public PredictCommand {
 public:
  explicit MlrPredictCommand(CLI::App& parent)
      : PredictCommand(parent, {.name = "mlr-predict",
                                .description = "Apply a model of 'parasol mlr --model' to rows",
                                .data = "Rows: LIBSVM file, or NAME.csv with a label column",
                                .output = "Write each row's class here, one per line",
                                .label_column = true}) {}

  int Run(comm::MpiRuntime*) override {
    const apps::mlr::MlrModel model = apps::mlr::ReadMlrModel(model_);
    const data::Dataset d = data::ReadDataset(data_, label_column_);
    const std::vector<double> predicted = model.Predict(d);
    WriteOutput(predicted.size(), [&](size_t r) { return fmt::format("{:g}\n", predicted[r]); });
    std::cout << fmt::format(
        "accuracy {:.4f} on {} rows of {}\n",
        d.rows() ? static_cast<double>(data::CountCorrect(d, predicted)) / static_cast<double>(d.rows())
                 : 0.0,
        d.rows(), data_);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> MakeMlrCommand(CLI::App& parent) { return std::make_unique<MlrCommand>(parent); }
std::unique_ptr<Command> MakeMlrPredictCommand(CLI::App& parent) {
  return std::make_unique<MlrPredictCommand>(parent);
}

}  // namespace parasol::tools
