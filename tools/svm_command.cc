// `parasol svm` (C-SVC by SMO with sample elimination over MPI ranks; several classes one against
// one; checkpoints) and
// `parasol svm-predict` (LIBSVM's svm-predict: TEST MODEL OUTPUT). Models are LIBSVM's files.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "parasol/apps/svm/one_vs_one.h"
#include "parasol/apps/svm/svm_model.h"
#include "parasol/collective/collectives.h"
#include "parasol/comm/context.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/data/dataset.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

// Prints "Accuracy = P% (right/total) (classification)" as svm-predict does.
void ReportAccuracy(const data::Dataset& test, const std::vector<double>& predicted) {
  const size_t right = data::CountCorrect(test, predicted);
  const double percent = 100.0 * static_cast<double>(right) / static_cast<double>(test.rows());
  std::cout << fmt::format("Accuracy = {:g}% ({}/{}) (classification)\n", percent, right, test.rows());
}

class SvmCommand : public Command {
 public:
  explicit SvmCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "svm", "Kernel SVM (C-SVC; several classes one against one) by parallel SMO with sample elimination");
    app_->add_option("--data", data_, "Training set: LIBSVM file, or NAME.csv with a label column")
        ->required();
    app_->add_option("--label-column", label_column_, "The label's column in a CSV file")
        ->capture_default_str();
    app_->add_option("--test", test_, "Test set: accuracy printed after training");
    app_->add_option("--kernel", kernel_, "linear, poly, rbf or sigmoid")->capture_default_str();
    app_->add_option("--c", o_.c, "The cost of a margin violation (LIBSVM's -c)")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--gamma", gamma_, "Kernel gamma (default 1 / number of features)")->check(Positive());
    app_->add_option("--degree", kp_.degree, "Polynomial degree")
        ->check(Between(1, 100))
        ->capture_default_str();
    app_->add_option("--coef0", kp_.coef0, "Polynomial and sigmoid offset")
        ->check(Between(-1e300, 1e300))
        ->capture_default_str();
    app_->add_option("--tolerance", o_.tolerance, "Stop when the maximal KKT violation is below this (-e)")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--cache-mb", cache_mb_, "Kernel column cache per process, MB (-m)")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--elimination", elimination_, "none, earliest, standard or lazy")
        ->capture_default_str();
    app_->add_option("--max-iterations", o_.max_iterations,
                     "At most this many SMO steps (0: max(1e7, 100 n))")
        ->capture_default_str();
    app_->add_option("--progress-every", o_.progress_every, "Iterations between progress lines")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--model", model_, "Write the model here (LIBSVM's format)");
    // A checkpoint after each two-class machine, and with --checkpoint-every also within one.
    AddRunOptions(app_, &run_,
                  {.which = RunOptions::kAll & ~(RunOptions::kThreads | RunOptions::kSeed),
                   .unit = "SMO iteration",
                   .metrics_columns = "pair,iteration,seconds,violation,active,support_vectors",
                   .checkpoint_default = "after each two-class machine only"});
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    kp_.type = apps::svm::ParseKernelType(kernel_);
    o_.elimination = apps::svm::ParseElimination(elimination_);
    o_.cache_bytes = cache_mb_ << 20;
    if (!model_.empty()) CheckOutputFile("--model", model_);
    CheckRunOptions(&run_, 0);
    checkpointing_.dir = run_.checkpoint_dir;
    checkpointing_.every_iterations = run_.checkpoint_every;
    checkpointing_.resume_dir = run_.resume_dir;
  }

  int Run(comm::MpiRuntime* mpi) override;

 private:
  void PrintPair(const apps::svm::PairReport& p, bool several) const;

  apps::svm::SmoOptions o_;
  apps::svm::KernelParams kp_;
  apps::svm::SvmCheckpointing checkpointing_;
  RunOptions run_;
  std::string data_, label_column_ = "y", test_, kernel_ = "rbf", elimination_ = "standard", model_;
  double gamma_ = 0;
  uint64_t cache_mb_ = 100;
};

int SvmCommand::Run(comm::MpiRuntime* mpi) {
  comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
  const bool root = ctx.rank() == 0;
  const data::Dataset d = data::ReadDataset(data_, label_column_);
  const data::Dataset test = test_.empty() ? data::Dataset{} : data::ReadDataset(test_, label_column_);
  std::vector<double> labels;
  try {
    labels = apps::svm::ClassOrder(d);
  } catch (const InvalidArgumentError& e) {
    throw ParseError(data_, 0, e.what());
  }
  kp_.gamma = gamma_ > 0 ? gamma_ : 1.0 / static_cast<double>(std::max<uint64_t>(d.cols, 1));
  std::unique_ptr<CsvWriter> csv;
  apps::svm::SvmCallbacks callbacks;
  if (root) {
    std::cout << fmt::format(
        "# parasol svm: {} samples, {} features, {} nonzeros; {} classes ({}); {} kernel, gamma {:.6g}, C "
        "{}; "
        "elimination {}; {}\n",
        d.rows(), d.cols, d.nonzeros(), labels.size(), fmt::join(labels, " "),
        apps::svm::KernelName(kp_.type), kp_.gamma, o_.c, apps::svm::EliminationName(o_.elimination),
        Count(ctx.size(), "process"));
    std::cout << fmt::format("{:>11} {:>9} {:>11} {:>9} {:>9}\n", "iteration", "seconds", "violation",
                             "active", "SVs");
    if (!run_.metrics.empty()) {
      csv = std::make_unique<CsvWriter>(
          run_.metrics,
          std::vector<std::string>{"pair", "iteration", "seconds", "violation", "active", "support_vectors"});
    }
    callbacks.on_progress = [&](size_t pair, const apps::svm::SmoProgress& p) {
      std::cout << fmt::format("{:>11} {:>9.3f} {:>11.4g} {:>9} {:>9}\n", p.iteration, p.seconds, p.violation,
                               p.active, p.support_vectors);
      if (csv) {
        csv->Row({std::to_string(pair), std::to_string(p.iteration), fmt::format("{:.6f}", p.seconds),
                  fmt::format("{:.6g}", p.violation), std::to_string(p.active),
                  std::to_string(p.support_vectors)});
      }
    };
    callbacks.on_pair = [&](const apps::svm::PairReport& p) { PrintPair(p, labels.size() > 2); };
  }
  if (root && !checkpointing_.resume_dir.empty())
    std::cout << fmt::format("# resuming from {}\n", checkpointing_.resume_dir);
  const apps::svm::SvmModel m = apps::svm::TrainOneVsOne(ctx, d, kp_, o_, callbacks, checkpointing_);
  if (root) {
    if (csv) csv->Commit();
    std::cout << fmt::format("Total nSV = {}\n", m.support_vectors.rows());
    if (!model_.empty()) apps::svm::WriteSvmModel(model_, m);
  }
  if (test_.empty()) return 0;
  // Every process predicts a block of the test rows.
  const auto [begin, end] = collective::BlockRange(test.rows(), ctx.size(), ctx.rank());
  const std::vector<double> mine = apps::svm::Predict(m, test, begin, end);
  const std::vector<double> predicted = collective::AllgatherBlocks<double>(ctx, mine, test.rows());
  if (root) ReportAccuracy(test, predicted);
  return 0;
}

// LIBSVM's summary of one two-class machine, with parasol's counters.
void SvmCommand::PrintPair(const apps::svm::PairReport& p, bool several) const {
  const apps::svm::SmoResult& r = p.result;
  const std::string which =
      several ? fmt::format("classes {} and {} ({} samples): ", p.first, p.second, p.samples) : "";
  if (p.restored) {
    std::cout << fmt::format(
        "{}from the checkpoint: {} iterations, obj = {:.6f}, rho = {:.6f}, nSV = {}, nBSV = {}\n", which,
        r.iterations, r.objective, r.rho, p.support_vectors, p.bounded);
    return;
  }
  if (r.iteration_limit)
    std::cerr << fmt::format("warning: stopped at --max-iterations ({}) before the tolerance\n",
                             r.iterations);
  std::cout << fmt::format(
      "{}optimization finished: {} iterations, obj = {:.6f}, rho = {:.6f}, nSV = {}, nBSV = {}, {:.3f} s "
      "(eliminated {}, rebuilt {} times, {} of them too early; cache hits {}, misses {})\n",
      which, r.iterations, r.objective, r.rho, p.support_vectors, p.bounded, r.seconds, r.eliminations,
      r.reconstructions, r.wrongly_eliminated, r.cache_hits, r.cache_misses);
}

class SvmPredictCommand : public Command {
 public:
  explicit SvmPredictCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("svm-predict",
                                 "Predict with an SVM model (LIBSVM's svm-predict): TEST MODEL OUTPUT");
    app_->add_option("test", test_, "LIBSVM file (its labels give the accuracy)")->required();
    app_->add_option("model", model_, "Model file (parasol svm --model, or LIBSVM's svm-train)")->required();
    app_->add_option("output", output_, "One predicted label per line")->required();
  }
  bool NeedsMpi() const override { return false; }
  void Validate() override { CheckOutputFile("output", output_); }
  int Run(comm::MpiRuntime*) override {
    const apps::svm::SvmModel m = apps::svm::ReadSvmModel(model_);
    const data::Dataset test = data::ReadDataset(test_);
    const std::vector<double> predicted = apps::svm::Predict(m, test);
    ReportAccuracy(test, predicted);
    WriteFileAtomically(output_, [&](std::ostream& out) {
      for (double p : predicted) out << fmt::format("{}\n", p);
    });
    return 0;
  }

 private:
  std::string test_, model_, output_;
};

}  // namespace

std::unique_ptr<Command> MakeSvmCommand(CLI::App& parent) { return std::make_unique<SvmCommand>(parent); }
std::unique_ptr<Command> MakeSvmPredictCommand(CLI::App& parent) {
  return std::make_unique<SvmPredictCommand>(parent);
}

}  // namespace parasol::tools
