// `parasol mf`: matrix factorisation by SGD through the parameter server, with checkpoints and
// --resume, or by CCD++ (--algorithm ccd: model-parallel rank-one coordinate descent). Prints the
// objective after every clock (CCD++: every outer iteration); --metrics writes it as CSV; --test
// prints the test RMSE, --model writes the factors (apps/mf/mf_model.h). `parasol mf-predict`
// applies a model to a ratings file.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "parasol/apps/mf/ccd_trainer.h"
#include "parasol/apps/mf/mf_model.h"
#include "parasol/comm/context.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/divergence_guard.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/ps/table_config.h"
#include "tools/command.h"
#include "tools/mf_options.h"
#include "tools/option_checks.h"
#include "tools/predict_command.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

class MfCommand : public Command {
 public:
  explicit MfCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("mf", "Matrix factorisation: SGD on the parameter server, or CCD++");
    flags_.Register(app_);
    app_->add_option("--algorithm", algorithm_,
                     "sgd (parameter server) or ccd (CCD++: --clocks outer iterations, --workers threads)")
        ->capture_default_str();
    app_->add_option("--inner", inner_, "CCD++: alternations of w_k and h_k per factor")
        ->check(Between(1, 1000))
        ->capture_default_str();
    app_->add_option("--consistency", consistency_, "bsp, ssp:S, essp:S, vap:S:V or asp")
        ->capture_default_str();
    app_->add_option("--ps-reads", ps_reads_,
                     "How workers read item rows: two-sided (ask the shard's thread) or one-sided (get them "
                     "from the shard's memory; bsp or ssp)")
        ->capture_default_str();
    app_->add_option("--eval-every", flags_.options.eval_every,
                     "SGD: the objective at the start and every N clocks (0: at the end only)")
        ->check(Between(0, 1e9))
        ->capture_default_str();
    app_->add_option("--test", test_, "Held-out ratings (the --data format): the test RMSE after training");
    app_->add_option("--model", model_, "Write the trained factors here (read by mf-predict)");
    AddRunOptions(app_, &flags_.run,
                  {.which = RunOptions::kMetrics | RunOptions::kCheckpoint | RunOptions::kResume,
                   .unit = "clock",
                   .metrics_columns = "clock,seconds,objective"});
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    if (algorithm_ != "sgd" && algorithm_ != "ccd")
      throw InvalidArgumentError(fmt::format("--algorithm {}: expected sgd or ccd", algorithm_));
    if (algorithm_ == "ccd") {
      for (const char* name : {"--consistency", "--checkpoint", "--checkpoint-every", "--resume", "--lr",
                               "--straggler", "--step", "--eval-every"}) {
        if (app_->count(name) > 0)
          throw InvalidArgumentError(fmt::format("{} is an option of --algorithm sgd, not ccd", name));
      }
    }
    const ps::ConsistencySpec spec = ps::ParseConsistencySpec(consistency_);
    if (ps_reads_ != "two-sided" && ps_reads_ != "one-sided")
      throw InvalidArgumentError(fmt::format("--ps-reads {}: expected two-sided or one-sided", ps_reads_));
    if (ps_reads_ == "one-sided" && algorithm_ == "ccd")
      throw InvalidArgumentError("--ps-reads is an option of --algorithm sgd, not ccd");
    if (ps_reads_ == "one-sided" && spec.model != ps::Consistency::kBsp &&
        spec.model != ps::Consistency::kSsp) {
      throw InvalidArgumentError(fmt::format(
          "--ps-reads one-sided needs --consistency bsp or ssp:S, not {} (shards push rows or take updates "
          "in pieces)",
          spec.ToString()));
    }
    flags_.options.one_sided_reads = ps_reads_ == "one-sided";
    CheckRunOptions(&flags_.run, flags_.options.clocks);
    if (!model_.empty()) CheckOutputFile("--model", model_);
    flags_.options.keep_model = !model_.empty() || !test_.empty();
  }

  int Run(comm::MpiRuntime* mpi) override {
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = flags_.run.timeout()});
    flags_.Resolve(ctx.size());
    const ps::ConsistencySpec spec = ps::ParseConsistencySpec(consistency_);
    flags_.options.consistency = spec.model;
    flags_.options.staleness = spec.staleness;
    flags_.options.vap_threshold = spec.vap_threshold;
    RatingsSource source = LoadRatings(flags_.data, flags_.options.seed);
    if (!test_.empty()) test_ratings_ = apps::mf::ReadMovieLens(test_);  // before the work it judges
    std::unique_ptr<CsvWriter> csv;
    if (ctx.rank() == 0 && !flags_.run.metrics.empty())
      csv = std::make_unique<CsvWriter>(flags_.run.metrics,
                                        std::vector<std::string>{"clock", "seconds", "objective"});
    if (algorithm_ == "ccd") return RunCcd(ctx, source, csv.get());
    auto& o = flags_.options;
    if (ctx.rank() == 0) {
      std::cout << fmt::format("# parasol mf: {}\n# rank {}, {} lr {}, lambda {}, {} x {}, {}{}\n",
                               source.note, o.rank,
                               o.step == apps::mf::MfStep::kAdaptive ? "adaptive" : "sgd", o.learning_rate,
                               o.lambda, Count(ctx.size(), "process"), Count(o.workers_per_process, "worker"),
                               spec.ToString() + (o.one_sided_reads ? ", item rows read one-sided" : ""),
                               o.resume_dir.empty() ? "" : ", resumed from " + o.resume_dir)
                << fmt::format("{:>6} {:>10} {:>12}\n", "clock", "seconds", "objective");
    }
    // Each clock as soon as every worker has finished it (a run can be watched with tail -f).
    DivergenceGuard diverged("objective", "clock", "lower --lr");
    auto print = [&](const apps::mf::ClockObjective& p) {
      std::cout << fmt::format("{:>6} {:>10.3f} {:>12.6f}\n", p.clock, p.seconds, p.objective);
      if (csv) {
        csv->Row(
            {std::to_string(p.clock), fmt::format("{:.6f}", p.seconds), fmt::format("{:.9g}", p.objective)});
      }
      diverged.Check(static_cast<int64_t>(p.clock), p.objective);
    };
    if (ctx.rank() == 0) o.on_clock = print;
    apps::mf::MfResult r = apps::mf::TrainMf(ctx, source.data, o);
    if (ctx.rank() != 0) return 0;
    std::cout << fmt::format("final objective {:.9g} (every update applied); {:.3f} s\n", r.final_objective,
                             r.seconds);
    if (csv) csv->Commit();
    Finish(ctx, r.model);
    return 0;
  }

 private:
  int RunCcd(comm::Context& ctx, const RatingsSource& source, CsvWriter* csv) {
    const auto& f = flags_.options;
    const apps::mf::CcdOptions o{.rank = f.rank,
                                 .lambda = f.lambda,
                                 .init_scale = f.init_scale,
                                 .iterations = static_cast<uint32_t>(f.clocks),
                                 .inner = inner_,
                                 .seed = f.seed,
                                 .threads = static_cast<uint32_t>(f.workers_per_process)};
    const bool root = ctx.rank() == 0;
    if (root) {
      std::cout << fmt::format("# parasol mf: {}\n# CCD++ rank {}, lambda {}, {} inner, {} x {}\n",
                               source.note, o.rank, o.lambda, o.inner, Count(ctx.size(), "process"),
                               Count(o.threads, "thread"))
                << fmt::format("{:>6} {:>10} {:>12}\n", "clock", "seconds", "objective");
    }
    apps::mf::CcdResult r = apps::mf::TrainCcd(ctx, source.data, o, [&](const apps::mf::CcdIteration& it) {
      if (!root) return;
      std::cout << fmt::format("{:>6} {:>10.3f} {:>12.6f}\n", it.iteration, it.seconds, it.objective)
                << std::flush;
      if (csv)
        csv->Row({std::to_string(it.iteration), fmt::format("{:.6f}", it.seconds),
                  fmt::format("{:.9g}", it.objective)});
    });
    if (!root) return 0;
    std::cout << fmt::format("final objective {:.9g}; {:.3f} s\n", r.iterations.back().objective,
                             r.iterations.back().seconds);
    if (csv) csv->Commit();
    if (flags_.options.keep_model) Finish(ctx, FromCcd(r, source.data, o.rank));
    return 0;
  }

  // CCD++'s factor-major doubles as the model file's rows.
  static apps::mf::MfModel FromCcd(const apps::mf::CcdResult& r, const apps::mf::RatingSet& d,
                                   uint32_t rank) {
    apps::mf::MfModel m{.rank = rank, .users = d.num_users, .items = d.num_items, .mean = r.mean};
    m.user_factors.resize(m.users * rank);
    m.item_factors.resize(m.items * rank);
    for (uint32_t k = 0; k < rank; ++k) {
      for (uint64_t i = 0; i < m.users; ++i)
        m.user_factors[i * rank + k] = static_cast<float>(r.user_factors[k * m.users + i]);
      for (uint64_t j = 0; j < m.items; ++j)
        m.item_factors[j * rank + k] = static_cast<float>(r.item_factors[k * m.items + j]);
    }
    return m;
  }

  // Rank 0: the test RMSE and the model file.
  void Finish(comm::Context& ctx, const apps::mf::MfModel& model) {
    if (ctx.rank() != 0) return;
    if (test_ratings_) {
      std::cout << fmt::format("test RMSE {:.6f} on {} ratings of {}\n",
                               apps::mf::Rmse(model, *test_ratings_), test_ratings_->ratings.size(), test_);
    }
    if (!model_.empty()) apps::mf::WriteMfModel(ctx.env().files(), model_, model);
  }

  MfFlags flags_;
  std::string test_, model_;
  std::optional<apps::mf::RatingSet> test_ratings_;
  std::string consistency_ = "ssp:3";
  std::string ps_reads_ = "two-sided";
  std::string algorithm_ = "sgd";
  uint32_t inner_ = 3;
};

// `parasol mf-predict --model FILE --data RATINGS [--output FILE]`: the model's RMSE on the
// ratings, and with --output a prediction per rating (`user item rating prediction`, ids as in the
// file).
class MfPredictCommand : public PredictCommand {
 public:
  explicit MfPredictCommand(CLI::App& parent)
      : PredictCommand(parent, {.name = "mf-predict",
                                .description = "Apply a model of 'parasol mf --model' to a ratings file",
                                .data = "Ratings (MovieLens u.data or ratings.csv)",
                                .output = "Write 'user item rating prediction' per rating here",
                                .label_column = false}) {}

  int Run(comm::MpiRuntime*) override {
    const apps::mf::MfModel model = apps::mf::ReadMfModel(model_);
    const apps::mf::RatingSet data = apps::mf::ReadMovieLens(data_);
    WriteOutput(data.ratings.size(), [&](size_t i) {
      const apps::mf::Rating& r = data.ratings[i];
      return fmt::format("{} {} {:g} {:.6f}\n", r.user + 1, r.item + 1, r.value,
                         model.Predict(r.user, r.item));
    });
    std::cout << fmt::format("RMSE {:.6f} on {} ratings of {}\n", apps::mf::Rmse(model, data),
                             data.ratings.size(), data_);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> MakeMfCommand(CLI::App& parent) { return std::make_unique<MfCommand>(parent); }
std::unique_ptr<Command> MakeMfPredictCommand(CLI::App& parent) {
  return std::make_unique<MfPredictCommand>(parent);
}

}  // namespace parasol::tools
