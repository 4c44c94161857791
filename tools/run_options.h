// The options every long-running command shares, declared by one function with one type, one
// meaning and one check in every command:
//   --threads N           worker threads per process
//   --seed S              the run's seed (a fixed seed on one process gives the same result)
//   --metrics FILE        CSV with a header, one row per UNIT (iteration, epoch, clock, step)
//   --checkpoint DIR      checkpoints into DIR, every --checkpoint-every N UNITs (default: the last)
//   --resume DIR          continue from the checkpoint in DIR
//   --timeout-ms MS       the deadline of every wait on another process
// `--checkpoint-every` without `--checkpoint` is an error in every command.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

namespace parasol::tools {

struct RunOptions {
  // Which of the options a command has (a sum of these).
  enum Which : unsigned {
    kThreads = 1,
    kSeed = 2,
    kMetrics = 4,
    kCheckpoint = 8,  // --checkpoint and --checkpoint-every
    kResume = 16,
    kTimeout = 32,
    kAll = 63,
  };

  uint32_t threads = 1;
  uint64_t seed = 1;
  std::string metrics;
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;  // after Check: the UNITs between checkpoints (0: no checkpoints)
  std::string resume_dir;
  uint64_t timeout_ms = 60000;

  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms); }
};

// What a command says about its run options on `--help`.
struct RunOptionsHelp {
  unsigned which = RunOptions::kAll;
  std::string unit = "iteration";  // what --checkpoint-every counts and a metrics row is
  std::string metrics_columns;     // the CSV's columns, as the header names them
  std::string threads = "Worker threads per process";
  std::string seed = "Random seed";
  std::string checkpoint_default;  // what no --checkpoint-every means (default: "the last UNIT")
};

// Declares the options `help.which` names on `app`, their defaults the values in `*o`.
void AddRunOptions(CLI::App* app, RunOptions* o, const RunOptionsHelp& help);

// Before any work: the metrics file and the checkpoint folder can be written, --checkpoint-every
// has --checkpoint; with --checkpoint and no --checkpoint-every, checkpoint_every becomes
// `last_unit` (a checkpoint at the end). Throws InvalidArgumentError or IoError.
void CheckRunOptions(RunOptions* o, uint64_t last_unit);

// Hands the run options to a command's own options struct: its seed, checkpoint_dir,
// checkpoint_every (held within the field's type), resume_dir and, where it has one, timeout_ms.
template <typename Options>
void ApplyRunOptions(const RunOptions& run, Options* o) {
  using Every = decltype(o->checkpoint_every);
  o->seed = run.seed;
  o->checkpoint_dir = run.checkpoint_dir;
  o->checkpoint_every =
      static_cast<Every>(std::min<uint64_t>(run.checkpoint_every, std::numeric_limits<Every>::max()));
  o->resume_dir = run.resume_dir;
  if constexpr (requires { o->timeout_ms = run.timeout(); }) o->timeout_ms = run.timeout();
}

}  // namespace parasol::tools
