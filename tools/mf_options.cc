#include "tools/mf_options.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"
#include "parasol/core/units.h"
#include "tools/option_checks.h"

namespace parasol::tools {

RatingsSource LoadRatings(const std::string& data, uint64_t seed) {
  RatingsSource s;
  if (data == "synthetic") {
    s.data = apps::mf::SyntheticRatings({.seed = seed});
    s.note = s.data.source;
    return s;
  }
  s.data = apps::mf::ReadMovieLens(data);
  s.note = fmt::format("{} ({} ratings, {} users, {} items)", s.data.source, s.data.ratings.size(),
                       s.data.num_users, s.data.num_items);
  return s;
}

void MfFlags::Register(CLI::App* app) {
  app->add_option("--data", data,
                  "MovieLens ratings (u.data, or ratings.csv of current releases), or 'synthetic' (a seeded "
                  "low-rank model of MovieLens 100K's shape)")
      ->required();
  app->add_option("--workers", workers, "Worker threads per process (default: 4 workers over all processes)")
      ->check(Between(1, 256));
  app->add_option("--rank", options.rank, "Factor rank")->check(Between(1, 4096))->capture_default_str();
  app->add_option("--lr", options.learning_rate, "SGD learning rate (adaptive: the step at G = 1)")
      ->check(Positive())
      ->capture_default_str();
  app->add_option("--step", step,
                  "sgd (a fixed --lr) or adaptive (LIBMF's: --lr / sqrt(G), G a row's summed mean squared "
                  "gradients from 1)")
      ->check(CLI::IsMember({"sgd", "adaptive"}))
      ->capture_default_str();
  app->add_option("--lambda", options.lambda, "L2 regularisation")
      ->check(NonNegative())
      ->capture_default_str();
  app->add_option("--clocks", options.clocks, "Clocks (passes over each worker's ratings)")
      ->check(Between(1, 100000))
      ->capture_default_str();
  app->add_option("--straggler", straggler, "WORKER:FACTOR: global worker WORKER runs at 1/FACTOR speed");
  AddRunOptions(app, &run,
                {.which = RunOptions::kSeed | RunOptions::kTimeout,
                 .seed = "Seed for initial values, pass order and synthetic data"});
}

void MfFlags::Resolve(int processes) {
  options.workers_per_process = workers > 0 ? workers : std::max(1, 4 / processes);
  options.timeout_ms = run.timeout();
  options.seed = run.seed;
  options.checkpoint_dir = run.checkpoint_dir;
  options.checkpoint_every = run.checkpoint_every;
  options.resume_dir = run.resume_dir;
  options.step = step == "adaptive" ? apps::mf::MfStep::kAdaptive : apps::mf::MfStep::kSgd;
  if (straggler.empty()) return;
  size_t colon = straggler.find(':');
  if (colon == std::string::npos)
    throw InvalidArgumentError(fmt::format("--straggler '{}': expected WORKER:FACTOR", straggler));
  options.straggler = static_cast<int>(ParseInt(straggler.substr(0, colon), "--straggler worker"));
  if (!ParseNumber(std::string_view(straggler).substr(colon + 1), &options.straggler_factor) ||
      !(options.straggler_factor >= 1)) {
    throw InvalidArgumentError(
        fmt::format("--straggler '{}': FACTOR is not a number of at least 1", straggler));
  }
}

}  // namespace parasol::tools
