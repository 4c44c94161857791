// `parasol ps-bench`: the consistency models side by side on one real model. Matrix
// factorisation trains through the parameter server under each model, one worker made slow;
// the report gives each model's time (and clocks) to reach the objective BSP ends with.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "parasol/comm/context.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/core/stats.h"
#include "parasol/core/units.h"
#include "parasol/ps/table_config.h"
#include "tools/command.h"
#include "tools/mf_options.h"

namespace parasol::tools {
namespace {

using apps::mf::MfResult;

// One model's run, reduced to what the report needs.
struct Run {
  MfResult result;
  double time_to_target = NAN;    // seconds; NaN: never reached
  double clocks_to_target = NAN;  // the global clock then (see GlobalClockAt)
};

// The global clock (the clock every worker has finished) at time t, with the fraction of the way
// to the next one: when a model reaches the target between two global clocks, it counts that far.
double GlobalClockAt(const std::vector<apps::mf::MfEvent>& events, double t) {
  std::map<uint64_t, std::pair<int, double>> done;  // clock -> (workers that finished it, when the last did)
  int workers = 0;
  for (const auto& e : events) {
    workers = std::max(workers, e.worker + 1);
    auto& [n, when] = done[e.clock];
    ++n;
    when = std::max(when, e.seconds);
  }
  double clock_before = 0, time_before = 0;
  bool first = true;
  for (const auto& [clock, d] : done) {
    const auto& [n, when] = d;
    if (n < workers) break;  // the global clock never got here
    if (when >= t) {
      if (first) return static_cast<double>(clock);
      double f = when > time_before ? (t - time_before) / (when - time_before) : 1;
      return clock_before + std::clamp(f, 0.0, 1.0);
    }
    clock_before = static_cast<double>(clock);
    time_before = when;
    first = false;
  }
  return clock_before;
}

// When the exact objective first reached `target` (linear between evaluations), and at which
// global clock.
void MeasureAgainst(Run& run, double target) {
  const auto& ev = run.result.evaluations;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (!(ev[i].objective <= target)) continue;
    double t = ev[i].seconds;
    if (i > 0 && ev[i - 1].objective > ev[i].objective) {
      double f = (ev[i - 1].objective - target) / (ev[i - 1].objective - ev[i].objective);
      t = ev[i - 1].seconds + f * (ev[i].seconds - ev[i - 1].seconds);
    }
    run.time_to_target = t;
    run.clocks_to_target = GlobalClockAt(run.result.events, t);
    return;
  }
}

// Median over the runs that reached the target; NaN if fewer than half did.
double MedianReached(const std::vector<double>& xs) {
  std::vector<double> ok;
  for (double x : xs) {
    if (!std::isnan(x)) ok.push_back(x);
  }
  return ok.size() * 2 < xs.size() || ok.empty() ? NAN : Median(ok);
}

std::string Fmt(double x, const char* spec) {
  return std::isnan(x) ? "never" : fmt::format(fmt::runtime(spec), x);
}

class PsBench : public Command {
 public:
  explicit PsBench(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "ps-bench", "Consistency models side by side: MF on the parameter server with a straggler");
    flags_.options.clocks = 20;
    flags_.Register(app_);
    app_->add_option("--models", models_, "Comma-separated: bsp, ssp:S, essp:S, vap:S:V, asp")
        ->capture_default_str();
    app_->add_option("--extra-clocks", extra_clocks_,
                     "Clocks the other models may run past BSP's to reach its objective (default: clocks/2)");
    app_->add_option("--repeat", repeat_, "Runs of every model (medians are reported)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app_->add_option("--eval-ms", eval_ms_, "Period of the exact objective's evaluation on rank 0")
        ->check(CLI::Range(1, 60000))
        ->capture_default_str();
    app_->add_option("--csv", csv_, "Write model,consistency,staleness,clock,seconds,objective to this file");
  }

  bool NeedsMpi() const override { return true; }

  int Run(comm::MpiRuntime* mpi) override {
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = flags_.run.timeout()});
    flags_.Resolve(ctx.size());
    std::vector<ps::ConsistencySpec> specs;
    for (const auto& m : SplitList(models_, "--models")) specs.push_back(ps::ParseConsistencySpec(m));
    auto bsp = std::find_if(specs.begin(), specs.end(),
                            [](const auto& s) { return s.model == ps::Consistency::kBsp; });
    if (bsp == specs.end())
      throw InvalidArgumentError("--models: bsp is needed (it sets the target objective)");
    const size_t bsp_index = static_cast<size_t>(bsp - specs.begin());
    RatingsSource source = LoadRatings(flags_.data, flags_.options.seed);
    std::unique_ptr<CsvWriter> csv;
    if (ctx.rank() == 0 && !csv_.empty()) {
      csv = std::make_unique<CsvWriter>(csv_, std::vector<std::string>{"model", "consistency", "staleness",
                                                                       "clock", "seconds", "objective"});
    }
    PrintHeader(ctx, source);
    // runs[model][repeat]; each repeat starts at another model, so drift on a shared machine
    // does not favour one.
    std::vector<std::vector<struct Run>> runs(specs.size());
    for (int rep = 0; rep < repeat_; ++rep) {
      for (size_t k = 0; k < specs.size(); ++k) {
        size_t m = (k + static_cast<size_t>(rep)) % specs.size();
        runs[m].push_back(Train(ctx, source, specs[m], m == bsp_index));
      }
      double target = runs[bsp_index].back().result.final_objective;
      for (auto& model_runs : runs) {
        if (model_runs.size() > static_cast<size_t>(rep)) MeasureAgainst(model_runs.back(), target);
      }
    }
    if (ctx.rank() == 0) Report(specs, runs, bsp_index, csv.get());
    if (csv) csv->Commit();
    return 0;
  }

 private:
  void PrintHeader(comm::Context& ctx, const RatingsSource& source) const {
    if (ctx.rank() != 0) return;
    const auto& o = flags_.options;
    std::cout << fmt::format("# parasol ps-bench: mf on {}\n", source.note)
              << fmt::format("# rank {}, lr {}, lambda {}; {} x {}; ", o.rank, o.learning_rate, o.lambda,
                             Count(ctx.size(), "process"), Count(o.workers_per_process, "worker"))
              << (o.straggler >= 0 ? fmt::format("worker {} at 1/{} speed", o.straggler, o.straggler_factor)
                                   : "no straggler")
              << fmt::format("; bsp {} clocks, others up to {}; median of {} runs\n", o.clocks,
                             o.clocks + ExtraClocks(), repeat_);
  }

  uint64_t ExtraClocks() const {
    return extra_clocks_ >= 0 ? static_cast<uint64_t>(extra_clocks_) : flags_.options.clocks / 2;
  }

  struct Run Train(comm::Context& ctx, const RatingsSource& source, const ps::ConsistencySpec& spec,
                   bool is_bsp) {
    apps::mf::MfOptions o = flags_.options;
    o.consistency = spec.model;
    o.staleness = spec.staleness;
    o.vap_threshold = spec.vap_threshold;
    if (!is_bsp) o.clocks += ExtraClocks();
    o.eval_every_ms = eval_ms_;
    struct Run run;
    run.result = apps::mf::TrainMf(ctx, source.data, o);
    return run;
  }

  void Report(const std::vector<ps::ConsistencySpec>& specs, const std::vector<std::vector<struct Run>>& runs,
              size_t bsp_index, CsvWriter* csv) const {
    std::vector<double> bsp_times;
    for (const auto& r : runs[bsp_index]) bsp_times.push_back(r.time_to_target);
    std::cout << fmt::format("{:<11} {:>9} {:>7} {:>8} {:>10} {:>8} {:>9} {:>9} {:>9} {:>10} {:>8}\n",
                             "model", "target_s", "vs_bsp", "clocks", "final_obj", "run_s", "wait_ms", "gets",
                             "upd_msgs", "msg_bytes", "pushed");
    std::map<std::string, std::pair<double, double>> summary;  // model -> (ratio, clocks)
    for (size_t m = 0; m < specs.size(); ++m) {
      std::vector<double> times, ratios, clocks, finals, seconds, waits, gets, msgs, bytes, pushed;
      for (size_t rep = 0; rep < runs[m].size(); ++rep) {
        const struct Run& r = runs[m][rep];
        const auto& s = r.result.stats;
        times.push_back(r.time_to_target);
        ratios.push_back(r.time_to_target / bsp_times[rep]);
        clocks.push_back(r.clocks_to_target);
        finals.push_back(r.result.final_objective);
        seconds.push_back(r.result.seconds);
        double worker_clocks = static_cast<double>(r.result.events.size());
        waits.push_back(1e3 * r.result.wait_seconds / worker_clocks);
        gets.push_back(static_cast<double>(s.gets_sent));
        msgs.push_back(static_cast<double>(s.update_batches));
        bytes.push_back(s.update_batches
                            ? static_cast<double>(s.update_bytes) / static_cast<double>(s.update_batches)
                            : 0);
        pushed.push_back(static_cast<double>(s.rows_pushed));
      }
      double ratio = MedianReached(ratios), at = MedianReached(clocks);
      summary[specs[m].ToString()] = {ratio, at};
      std::cout << fmt::format(
          "{:<11} {:>9} {:>7} {:>8} {:>10.5f} {:>8.3f} {:>9.3f} {:>9.0f} {:>9.0f} {:>10.0f} {:>8.0f}\n",
          specs[m].ToString(), Fmt(MedianReached(times), "{:.3f}"), Fmt(ratio, "{:.2f}x"), Fmt(at, "{:.1f}"),
          Median(finals), Median(seconds), Median(waits), Median(gets), Median(msgs), Median(bytes),
          Median(pushed));
      if (csv) WriteCsv(*csv, specs[m], MedianRun(runs[m]));
    }
    PrintTargets(summary);
  }

  // The run whose time to target is the median one (the first if none reached it).
  static const struct Run& MedianRun(const std::vector<struct Run>& runs) {
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      double x = runs[a].time_to_target, y = runs[b].time_to_target;
      return std::isnan(y) ? !std::isnan(x) : (!std::isnan(x) && x < y);
    });
    return runs[order[order.size() / 2]];
  }

  // One row per evaluation: the exact objective, with the clocks every worker had finished.
  static void WriteCsv(CsvWriter& csv, const ps::ConsistencySpec& spec, const struct Run& run) {
    const auto& events = run.result.events;
    for (const auto& ev : run.result.evaluations) {
      std::map<int, uint64_t> clocks;
      for (const auto& e : events) {
        if (e.seconds <= ev.seconds) clocks[e.worker] = e.clock;
      }
      uint64_t all = clocks.empty() ? 0 : ~uint64_t{0};
      for (const auto& [w, c] : clocks) all = std::min(all, c);
      csv.Row({"mf", std::string(ps::ConsistencyName(spec.model)), std::to_string(spec.staleness),
               std::to_string(all), fmt::format("{:.6f}", ev.seconds), fmt::format("{:.9g}", ev.objective)});
    }
  }

  static void PrintTargets(const std::map<std::string, std::pair<double, double>>& s) {
    auto ratio = [&](const std::string& m) { return s.count(m) ? s.at(m).first : NAN; };
    auto clocks = [&](const std::string& m) { return s.count(m) ? s.at(m).second : NAN; };
    for (const char* m : {"ssp:3", "essp:3"}) {
      if (!s.count(m)) continue;
      double r = ratio(m);
      std::cout << fmt::format("# target: {} reaches bsp's final objective in <= 0.70x its time: {} ({})\n",
                               m, Fmt(r, "{:.2f}x"), !std::isnan(r) && r <= 0.7 ? "met" : "missed");
    }
    if (s.count("ssp:3") && s.count("essp:3")) {
      double e = clocks("essp:3"), p = clocks("ssp:3");
      std::cout << fmt::format("# target: essp:3 needs no more clocks than ssp:3: {} vs {} ({})\n",
                               Fmt(e, "{:.1f}"), Fmt(p, "{:.1f}"),
                               !std::isnan(e) && !std::isnan(p) && e <= p ? "met" : "missed");
    }
  }

  MfFlags flags_;
  std::string models_ = "bsp,ssp:1,ssp:3,ssp:10,essp:3,vap:3:2,asp";
  int64_t extra_clocks_ = -1;
  int repeat_ = 3;
  uint32_t eval_ms_ = 10;
  std::string csv_;
};

}  // namespace

std::unique_ptr<Command> MakePsBench(CLI::App& parent) { return std::make_unique<PsBench>(parent); }

}  // namespace parasol::tools
