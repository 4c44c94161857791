// `parasol mf`: matrix factorisation by SGD through the parameter server, with checkpoints and
// --resume, or by CCD++ (--algorithm ccd: model-parallel rank-one coordinate descent). Prints the
// objective after every clock (CCD++: every outer iteration); --metrics writes it as CSV.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "parasol/apps/mf/ccd_trainer.h"
#include "parasol/comm/context.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/divergence_guard.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/ps/table_config.h"
#include "tools/command.h"
#include "tools/mf_options.h"
#include "tools/option_checks.h"
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
      for (const char* name :
           {"--consistency", "--checkpoint", "--checkpoint-every", "--resume", "--lr", "--straggler"}) {
        if (app_->count(name) > 0)
          throw InvalidArgumentError(fmt::format("{} is an option of --algorithm sgd, not ccd", name));
      }
    }
    ps::ParseConsistencySpec(consistency_);
    CheckRunOptions(&flags_.run, flags_.options.clocks);
  }

  int Run(comm::MpiRuntime* mpi) override {
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = flags_.run.timeout()});
    flags_.Resolve(ctx.size());
    ps::ConsistencySpec spec = ps::ParseConsistencySpec(consistency_);
    flags_.options.consistency = spec.model;
    flags_.options.staleness = spec.staleness;
    flags_.options.vap_threshold = spec.vap_threshold;
    RatingsSource source = LoadRatings(flags_.data, flags_.options.seed);
    std::unique_ptr<CsvWriter> csv;
    if (ctx.rank() == 0 && !flags_.run.metrics.empty())
      csv = std::make_unique<CsvWriter>(flags_.run.metrics,
                                        std::vector<std::string>{"clock", "seconds", "objective"});
    if (algorithm_ == "ccd") return RunCcd(ctx, source, csv.get());
    auto& o = flags_.options;
    if (ctx.rank() == 0) {
      std::cout << fmt::format("# parasol mf: {}\n# rank {}, lr {}, lambda {}, {} x {}, {}{}\n", source.note,
                               o.rank, o.learning_rate, o.lambda, Count(ctx.size(), "process"),
                               Count(o.workers_per_process, "worker"), spec.ToString(),
                               o.resume_dir.empty() ? "" : ", resumed from " + o.resume_dir)
                << fmt::format("{:>6} {:>10} {:>12}\n", "clock", "seconds", "objective");
    }
    // Each clock as soon as every worker has finished it (a run can be watched with tail -f).
    DivergenceGuard diverged("objective", "clock", "lower --lr");
    auto print = [&](const apps::mf::ClockObjective& p) {
      std::cout << fmt::format("{:>6} {:>10.3f} {:>12.6f}\n", p.clock, p.seconds, p.objective);
      if (csv)
        csv->Row(
            {std::to_string(p.clock), fmt::format("{:.6f}", p.seconds), fmt::format("{:.9g}", p.objective)});
      diverged.Check(static_cast<int64_t>(p.clock), p.objective);
    };
    if (ctx.rank() == 0) o.on_clock = print;
    apps::mf::MfResult r = apps::mf::TrainMf(ctx, source.data, o);
    if (ctx.rank() != 0) return 0;
    std::cout << fmt::format("final objective {:.9g} (every update applied); {:.3f} s\n", r.final_objective,
                             r.seconds);
    if (csv) csv->Commit();
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
    return 0;
  }

  MfFlags flags_;
  std::string consistency_ = "ssp:3";
  std::string algorithm_ = "sgd";
  uint32_t inner_ = 3;
};

}  // namespace

std::unique_ptr<Command> MakeMfCommand(CLI::App& parent) { return std::make_unique<MfCommand>(parent); }

}  // namespace parasol::tools
