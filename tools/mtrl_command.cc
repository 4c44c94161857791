// `parasol mtrl`: multi-task relationship learning (regression tasks that learn how they relate)
// by the distributed primal-dual method: tasks spread over MPI ranks, V on the parameter server.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "parasol/apps/mtrl/mtrl_solver.h"
#include "parasol/apps/mtrl/task_covariance.h"
#include "parasol/apps/mtrl/task_set.h"
#include "parasol/comm/context.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

using apps::mtrl::TaskSet;

class MtrlCommand : public Command {
 public:
  explicit MtrlCommand(CLI::App& parent) {
    app_ =
        parent.add_subcommand("mtrl", "Multi-task relationship learning: task models and how tasks relate");
    app_->add_option("--data", data_, "Training set: CSV with a header, a task column and a target column")
        ->required();
    app_->add_option("--test", test_, "Test set (same columns): explained variance after each iteration");
    app_->add_option("--split", split_, "Split --data per task: this fraction to train, the rest to test")
        ->check(Between(0.01, 0.99));
    app_->add_option("--split-seed", split_seed_, "Seed of --split")->capture_default_str();
    app_->add_option("--task-column", task_column_, "The task's column")->capture_default_str();
    app_->add_option("--label-column", label_column_, "The target's column")->capture_default_str();
    app_->add_option("--lambda1", o_.lambda1, "Ridge weight on every task's weights")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--lambda2", o_.lambda2, "Weight of the task-relationship term tr(W Omega^-1 W')")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--epsilon", o_.epsilon, "Keeps Omega invertible: (W'W + epsilon I)^1/2")
        ->check(Positive())
        ->capture_default_str();
    app_->add_flag("--fixed-covariance", fixed_, "Keep Omega = I / tasks (no relationships learned)");
    app_->add_option("--iterations", o_.iterations, "Omega steps at most")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--rounds", o_.rounds, "Weight rounds (one exchange each) per Omega step")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--local-passes", o_.local_passes, "Passes over a process's samples per round")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--tolerance", o_.tolerance,
                     "Stop when objective change and duality gap are below (relative)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--consistency", consistency_, "Of V on the parameter server: bsp, ssp:S, essp:S or asp")
        ->capture_default_str();
    AddRunOptions(app_, &run_,
                  {.which = RunOptions::kAll & ~RunOptions::kThreads,
                   .metrics_columns = "iteration,rounds,seconds,objective,duality_gap,train_mse,"
                                      "test_explained_variance,bytes_sent",
                   .seed = "Seed of the sample order"});
    app_->add_option("--model", model_, "CSV: each task's intercept and weights, in the data's units");
    app_->add_option("--relationships", relationships_, "CSV: the learned task correlations (from Omega)");
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    if (!test_.empty() && split_ > 0) throw InvalidArgumentError("give --test or --split, not both");
    o_.consistency = ps::ParseConsistencySpec(consistency_);
    if (o_.consistency.model == ps::Consistency::kVap)
      throw InvalidArgumentError("--consistency vap is not for mtrl (its rows change whole every round)");
    if (o_.lambda1 + o_.lambda2 <= 0) throw InvalidArgumentError("--lambda1 and --lambda2 cannot both be 0");
    o_.learn_covariance = !fixed_;
    for (const auto& [option, path] :
         {std::pair{"--model", model_}, std::pair{"--relationships", relationships_}})
      if (!path.empty()) CheckOutputFile(option, path);
    CheckRunOptions(&run_, o_.iterations);
    ApplyRunOptions(run_, &o_);
  }

  int Run(comm::MpiRuntime* mpi) override;

 private:
  void WriteModel(const apps::mtrl::MtrlResult& r, const apps::mtrl::Standardizer& st,
                  const TaskSet& train) const;
  void WriteRelationships(const apps::mtrl::MtrlModel& m) const;

  apps::mtrl::MtrlOptions o_;
  std::string data_, test_, task_column_ = "task", label_column_ = "y", consistency_ = "bsp";
  RunOptions run_;
  std::string model_, relationships_;
  double split_ = 0;
  uint64_t split_seed_ = 1;
  bool fixed_ = false;
};

// The weights back in the data's units: w / scale, and the intercept y_mean - sum w mean / scale.
void MtrlCommand::WriteModel(const apps::mtrl::MtrlResult& r, const apps::mtrl::Standardizer& st,
                             const TaskSet& train) const {
  std::vector<std::string> columns{"task", "intercept"};
  columns.insert(columns.end(), train.feature_names.begin(), train.feature_names.end());
  CsvWriter csv(model_, columns);
  const size_t d = train.features;
  for (size_t i = 0; i < train.tasks(); ++i) {
    std::vector<std::string> row{std::to_string(train.task_ids[i]), ""};
    double intercept = st.y_mean;
    for (size_t f = 0; f < d; ++f) {
      const double w = r.model.weights[i * d + f] / st.scale[f];
      intercept -= w * st.mean[f];
      row.push_back(fmt::format("{:.10g}", w));
    }
    row[1] = fmt::format("{:.10g}", intercept);
    csv.Row(row);
  }
  csv.Commit();
}

void MtrlCommand::WriteRelationships(const apps::mtrl::MtrlModel& m) const {
  const size_t n = m.task_ids.size();
  std::vector<std::string> columns{"task"};
  for (int64_t id : m.task_ids) columns.push_back(std::to_string(id));
  CsvWriter csv(relationships_, columns);
  const std::vector<double> corr = apps::mtrl::Correlation(m.omega, n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> row{std::to_string(m.task_ids[i])};
    for (size_t k = 0; k < n; ++k) row.push_back(fmt::format("{:.6f}", corr[i * n + k]));
    csv.Row(row);
  }
  csv.Commit();
}

int MtrlCommand::Run(comm::MpiRuntime* mpi) {
  comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
  const bool root = ctx.rank() == 0;
  TaskSet train = apps::mtrl::ReadTaskCsv(data_, task_column_, label_column_);
  std::unique_ptr<TaskSet> test;
  if (split_ > 0) {
    apps::mtrl::TaskSplit s = apps::mtrl::SplitTasks(train, split_, split_seed_);
    train = std::move(s.train);
    test = std::make_unique<TaskSet>(std::move(s.test));
  } else if (!test_.empty()) {
    test = std::make_unique<TaskSet>(apps::mtrl::ReadTaskCsv(test_, task_column_, label_column_));
    if (test->feature_names != train.feature_names)
      throw ParseError(test_, 1, "the feature columns differ from the training set's");
    for (int64_t id : test->task_ids)
      if (train.IndexOf(id) < 0)
        throw ParseError(test_, 0, fmt::format("task {} has no training samples", id));
  }
  // Standardised on the training set's statistics: the penalties then weigh every feature alike.
  const apps::mtrl::Standardizer st = apps::mtrl::FitStandardizer(train);
  apps::mtrl::Standardize(st, &train);
  if (test) apps::mtrl::Standardize(st, test.get());
  std::unique_ptr<CsvWriter> csv;
  if (root) {
    std::cout << fmt::format(
                     "# parasol mtrl: {} tasks, {} features, {} training samples{}; lambda1 {} lambda2 {}{}; "
                     "{}, {}\n",
                     train.tasks(), train.features, train.samples(),
                     test ? fmt::format(", {} test samples", test->samples()) : "", o_.lambda1, o_.lambda2,
                     fixed_ ? " (Omega fixed)" : "", Count(ctx.size(), "process"), o_.consistency.ToString())
              << fmt::format("{:>5} {:>7} {:>8} {:>13} {:>11} {:>10} {:>8} {:>9}\n", "iter", "rounds",
                             "seconds", "objective", "gap", "train_mse", "test_ev", "MB_sent");
    if (!run_.metrics.empty()) {
      csv = std::make_unique<CsvWriter>(
          run_.metrics, std::vector<std::string>{"iteration", "rounds", "seconds", "objective", "duality_gap",
                                                 "train_mse", "test_explained_variance", "bytes_sent"});
    }
  }
  auto on_iteration = [&](const apps::mtrl::MtrlIteration& e) {
    const bool has_test = e.test_explained_variance >= -1;
    std::cout << fmt::format("{:>5} {:>7} {:>8.3f} {:>13.8g} {:>11.3e} {:>10.5f} {:>8} {:>9.3f}\n",
                             e.iteration, e.rounds, e.seconds, e.objective, e.duality_gap, e.train_mse,
                             has_test ? fmt::format("{:.4f}", e.test_explained_variance) : "-",
                             static_cast<double>(e.bytes_sent) / 1e6);
    if (csv) {
      csv->Row({std::to_string(e.iteration), std::to_string(e.rounds), fmt::format("{:.6f}", e.seconds),
                fmt::format("{:.12g}", e.objective), fmt::format("{:.6g}", e.duality_gap),
                fmt::format("{:.9g}", e.train_mse),
                has_test ? fmt::format("{:.6f}", e.test_explained_variance) : "",
                std::to_string(e.bytes_sent)});
    }
  };
  if (root && !o_.resume_dir.empty()) std::cout << fmt::format("# resuming from {}\n", o_.resume_dir);
  const apps::mtrl::MtrlResult r = apps::mtrl::TrainMtrl(ctx, train, test.get(), o_, on_iteration);
  if (!root) return 0;
  if (csv) csv->Commit();
  if (!model_.empty()) WriteModel(r, st, train);
  if (!relationships_.empty()) WriteRelationships(r.model);
  if (r.iterations.empty()) {
    std::cout << fmt::format("final: the checkpoint is at iteration {} already\n", r.first_iteration - 1);
    return 0;
  }
  const apps::mtrl::MtrlIteration& last = r.iterations.back();
  std::cout << fmt::format(
      "final: {} after {} iterations ({} rounds), {:.3f} s, objective {:.8g}{}, {:.3f} MB sent\n",
      r.converged ? "converged" : "stopped", last.iteration, last.rounds, r.seconds, last.objective,
      test ? fmt::format(", test explained variance {:.4f}", last.test_explained_variance) : "",
      static_cast<double>(r.bytes_sent) / 1e6);
  return 0;
}

}  // namespace

std::unique_ptr<Command> MakeMtrlCommand(CLI::App& parent) { return std::make_unique<MtrlCommand>(parent); }

}  // namespace parasol::tools
