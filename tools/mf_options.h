// What `parasol mf` and `parasol ps-bench` share: where the ratings come from, the model's
// options on the command line, and a per-clock view of a training run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "parasol/apps/mf/mf_trainer.h"
#include "parasol/apps/mf/ratings.h"
#include "tools/run_options.h"

namespace parasol::tools {

struct RatingsSource {
  apps::mf::RatingSet data;
  std::string note;  // one line for the report: what was read, or why synthetic ratings stand in
};
// `data`: a MovieLens file, or "synthetic" for seeded synthetic ratings.
RatingsSource LoadRatings(const std::string& data, uint64_t seed);

// The MF options every command takes (rank, learning rate, ...), registered on `app`.
struct MfFlags {
  std::string data;
  std::string straggler;  // "WORKER:FACTOR"
  std::string step = "sgd";
  int workers = 0;  // per process; 0: 4 workers over the processes
  RunOptions run;   // --seed and --timeout-ms here; a command adds the others it has
  apps::mf::MfOptions options;
  void Register(CLI::App* app);
  // Fills options (workers per process, the straggler, the run options) from the flags, for
  // `processes`.
  void Resolve(int processes);
};

}  // namespace parasol::tools
