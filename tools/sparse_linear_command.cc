// `parasol lasso` (Lasso and elastic net) and `parasol logreg` (sparse logistic regression): L1-
// penalised linear models by model-parallel coordinate descent (the STRADS scheduler in
// modelpar/). Prints a line per duality-gap check; --metrics writes them as CSV, --model the
// fitted weights.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "parasol/apps/sparse_linear/lasso_solver.h"
#include "parasol/apps/sparse_linear/linear_model.h"
#include "parasol/apps/sparse_linear/logistic_solver.h"
#include "parasol/comm/context.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/data/dataset.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/predict_command.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

enum class Loss { kSquared, kLogistic };

class SparseLinearCommand : public Command {
 public:
  SparseLinearCommand(CLI::App& parent, Loss loss) : loss_(loss) {
    app_ =
        loss == Loss::kSquared
            ? parent.add_subcommand("lasso",
                                    "Lasso / elastic net by scheduled model-parallel coordinate descent")
            : parent.add_subcommand("logreg",
                                    "Sparse (L1) logistic regression by scheduled model-parallel coordinate "
                                    "descent (labels: two values)");
    app_->add_option("--data", data_, "LIBSVM file, or NAME.csv with a header and a label column")
        ->required();
    app_->add_option("--label-column", label_column_, "The label's column in a CSV file")
        ->capture_default_str();
    app_->add_option("--lambda", o_.lambda, "The L1 weight (as scikit-learn's alpha)")->check(Positive());
    app_->add_option("--lambda-path", o_.path_length, "Fit N lambdas from lambda_max down, warm-started")
        ->check(Positive());
    app_->add_option("--lambda-min-ratio", o_.path_min_ratio, "The path's last lambda / lambda_max")
        ->check(Between(1e-12, 0.999999))
        ->capture_default_str();
    app_->add_option("--l1-ratio", o_.l1_ratio, "1: L1 only; below 1: elastic net")
        ->check(Between(1e-9, 1))
        ->capture_default_str();
    app_->add_flag("--no-intercept", no_intercept_, "Fit no intercept");
    app_->add_option("--scheduler", order_,
                     "priority, random, cyclic or shuffled (cyclic in a new random order each sweep)")
        ->capture_default_str();
    app_->add_option("--schedule-size", o_.engine.schedule.schedule_size,
                     "Coordinates updated together per round")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--dependency-threshold", o_.engine.schedule.dependency_threshold,
                     "Columns correlated above this are never updated together (1: no check)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--tolerance", o_.tolerance, "Stop at this duality gap / objective at w = 0")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--max-rounds", o_.max_rounds, "Rounds per lambda at most")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--check-every", o_.check_every, "Rounds between gap checks (0: adaptive)")
        ->check(NonNegative());
    run_.threads = static_cast<uint32_t>(o_.engine.workers);
    run_.seed = o_.engine.schedule.seed;
    AddRunOptions(
        app_, &run_,
        {.which = RunOptions::kThreads | RunOptions::kSeed | RunOptions::kMetrics | RunOptions::kTimeout,
         .unit = "duality-gap check",
         .metrics_columns = "lambda,round,updates,seconds,objective,nonzeros,gap,relative_gap",
         .seed = "Seed of the scheduler's draws"});
    app_->add_option("--model", model_, "Write the fitted weights here (read by linear-predict)");
    app_->add_option("--test", test_,
                     "Labelled rows (the --data format): the last fit's test error (lasso: MSE and R^2; "
                     "logreg: accuracy)");
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    o_.engine.schedule.order = modelpar::ParseOrder(order_);
    o_.intercept = !no_intercept_;
    if (o_.lambda == 0 && o_.path_length == 0) throw InvalidArgumentError("give --lambda or --lambda-path");
    if (o_.lambda > 0 && o_.path_length > 0)
      throw InvalidArgumentError("give --lambda or --lambda-path, not both");
    if (!model_.empty()) CheckOutputFile("--model", model_);
    CheckRunOptions(&run_, 0);
    o_.engine.workers = run_.threads;
    o_.engine.schedule.seed = run_.seed;
  }

  int Run(comm::MpiRuntime* mpi) override;

 private:
  Loss loss_;
  apps::sparse_linear::PathOptions o_;
  RunOptions run_;
  std::string data_, label_column_ = "y", order_ = "priority", model_, test_;
  bool no_intercept_ = false;
};

// The fits as a model file holds them; a logistic model keeps the label values of its classes.
apps::sparse_linear::LinearModel ModelOf(const std::vector<apps::sparse_linear::LinearFit>& fits,
                                         const data::Dataset* logistic_data) {
  apps::sparse_linear::LinearModel m;
  if (logistic_data) {
    const std::set<double> labels(logistic_data->labels.begin(), logistic_data->labels.end());
    m.logistic = true;
    m.negative_label = *labels.begin();  // BinaryLabels' -1
    m.positive_label = *labels.rbegin();
  }
  for (const auto& f : fits)
    m.fits.push_back({.lambda = f.lambda, .intercept = f.intercept, .weights = f.weights});
  return m;
}

// The last fit's (or `lambda`'s) score on labelled rows, one line.
void PrintTestScore(const apps::sparse_linear::LinearModel& model, const data::Dataset& d,
                    const std::string& what, double lambda = -1) {
  const auto& fit = model.Choose(lambda);
  const apps::sparse_linear::LinearScore s = apps::sparse_linear::Score(model, fit, d);
  if (model.logistic) {
    std::cout << fmt::format("test accuracy {:.4f} on {} rows of {} (lambda {:.6g})\n", s.accuracy, d.rows(),
                             what, fit.lambda);
  } else {
    std::cout << fmt::format("test MSE {:.6g}, R^2 {:.4f} on {} rows of {} (lambda {:.6g})\n", s.mse, s.r2,
                             d.rows(), what, fit.lambda);
  }
}

int SparseLinearCommand::Run(comm::MpiRuntime* mpi) {
  comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
  const bool root = ctx.rank() == 0;
  const data::Dataset d = data::ReadDataset(data_, label_column_);
  std::optional<data::Dataset> test;
  if (!test_.empty()) test = data::ReadDataset(test_, label_column_);  // before the work it judges
  const bool logistic = loss_ == Loss::kLogistic;
  const char* name = logistic ? "logreg" : "lasso";
  if (logistic) {
    try {
      apps::sparse_linear::BinaryLabels(d);
    } catch (const InvalidArgumentError& e) {
      throw ParseError(data_, 0, e.what());
    }
  }
  std::unique_ptr<CsvWriter> csv;
  if (root && !run_.metrics.empty()) {
    csv = std::make_unique<CsvWriter>(
        run_.metrics, std::vector<std::string>{"lambda", "round", "updates", "seconds", "objective",
                                               "nonzeros", "gap", "relative_gap"});
  }
  if (root) {
    const auto& s = o_.engine.schedule;
    std::cout << fmt::format(
                     "# parasol {}: {} samples, {} features, {} nonzeros; l1 ratio {}, {} scheduler, U {}, "
                     "dependency threshold {}; {} x {}; lambda_max {:.6g}\n",
                     name, d.rows(), d.cols, d.nonzeros(), o_.l1_ratio, modelpar::OrderName(s.order),
                     s.schedule_size, s.dependency_threshold, Count(ctx.size(), "process"),
                     Count(o_.engine.workers, "thread"),
                     logistic ? apps::sparse_linear::LogisticLambdaMax(d, o_.l1_ratio, o_.intercept)
                              : apps::sparse_linear::LassoLambdaMax(d, o_.l1_ratio, o_.intercept))
              << fmt::format("{:>12} {:>9} {:>11} {:>9} {:>14} {:>8} {:>10}\n", "lambda", "round", "updates",
                             "seconds", "objective", "nonzeros", "rel_gap");
    o_.on_check = [&](const apps::sparse_linear::FitCheck& c) {
      std::cout << fmt::format("{:>12.6g} {:>9} {:>11} {:>9.3f} {:>14.9g} {:>8} {:>10.3g}\n", c.lambda,
                               c.rounds, c.updates, c.seconds, c.objective, c.nonzeros, c.relative_gap);
      if (csv) {
        csv->Row({fmt::format("{:.17g}", c.lambda), std::to_string(c.rounds), std::to_string(c.updates),
                  fmt::format("{:.6f}", c.seconds), fmt::format("{:.17g}", c.objective),
                  std::to_string(c.nonzeros), fmt::format("{:.6g}", c.gap),
                  fmt::format("{:.6g}", c.relative_gap)});
      }
    };
  }
  std::vector<apps::sparse_linear::LinearFit> fits =
      logistic ? apps::sparse_linear::FitLogistic(ctx, d, o_) : apps::sparse_linear::FitLasso(ctx, d, o_);
  if (!root) return 0;
  if (csv) csv->Commit();
  const apps::sparse_linear::LinearFit& last = fits.back();
  if (last.status == apps::sparse_linear::FitStatus::kDiverged) {
    throw DivergedError(
        fmt::format("diverged at lambda {:.6g}, round {} (objective {:.6g}): coordinates updated "
                    "together were too correlated; lower --schedule-size or --dependency-threshold",
                    last.lambda, last.last.rounds, last.last.objective));
  }
  for (const auto& f : fits) {
    if (f.status == apps::sparse_linear::FitStatus::kRoundLimit) {
      std::cerr << fmt::format(
          "warning: lambda {:.6g} stopped at --max-rounds with relative gap {:.3g} (tolerance {})\n",
          f.lambda, f.last.relative_gap, o_.tolerance);
    }
  }
  std::cout << fmt::format(
      "final: lambda {:.6g}, objective {:.12g}, {} nonzeros, relative gap {:.3g}, {:.3f} s\n", last.lambda,
      last.last.objective, last.weights.size(), last.last.relative_gap, last.last.seconds);
  const apps::sparse_linear::LinearModel model = ModelOf(fits, logistic ? &d : nullptr);
  if (test) PrintTestScore(model, *test, test_);
  if (!model_.empty()) apps::sparse_linear::WriteLinearModel(model_, model);
  return 0;
}

}  // namespace

// `parasol linear-predict --model FILE --data FILE`: a lasso or logreg model applied to rows; the
// score when they are labelled, and with --output one prediction per row (lasso: the value; logreg:
// the label and the probability of the positive class).
class LinearPredictCommand : public PredictCommand {
 public:
  explicit LinearPredictCommand(CLI::App& parent)
      : PredictCommand(parent, {.name = "linear-predict",
                                .description = "Apply a model of 'parasol lasso/logreg --model' to rows",
                                .data = "Rows: LIBSVM file, or NAME.csv with a label column",
                                .output = "Write one prediction per row here",
                                .label_column = true}) {
    app_->add_option("--lambda", lambda_, "Use the path's fit nearest this lambda (default: the last)")
        ->check(Positive());
  }

  int Run(comm::MpiRuntime*) override {
    const apps::sparse_linear::LinearModel model = apps::sparse_linear::ReadLinearModel(model_);
    const data::Dataset d = data::ReadDataset(data_, label_column_);
    const auto& fit = model.Choose(lambda_);
    WriteOutput(d.rows(), [&](size_t r) {
      const double m = apps::sparse_linear::LinearModel::Margin(fit, d, r);
      if (!model.logistic) return fmt::format("{:.17g}\n", m);
      return fmt::format("{:g} {:.6f}\n", m > 0 ? model.positive_label : model.negative_label,
                         1 / (1 + std::exp(-m)));
    });
    PrintTestScore(model, d, data_, lambda_);
    return 0;
  }

 private:
  double lambda_ = -1;
};

std::unique_ptr<Command> MakeLinearPredictCommand(CLI::App& parent) {
  return std::make_unique<LinearPredictCommand>(parent);
}

std::unique_ptr<Command> MakeLassoCommand(CLI::App& parent) {
  return std::make_unique<SparseLinearCommand>(parent, Loss::kSquared);
}

std::unique_ptr<Command> MakeLogregCommand(CLI::App& parent) {
  return std::make_unique<SparseLinearCommand>(parent, Loss::kLogistic);
}

}  // namespace parasol::tools
