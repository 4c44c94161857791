#include "tools/run_options.h"

#include <fmt/format.h>

#include "tools/option_checks.h"

namespace parasol::tools {

void AddRunOptions(CLI::App* app, RunOptions* o, const RunOptionsHelp& help) {
  const unsigned w = help.which;
  if (w & RunOptions::kThreads) {
    app->add_option("--threads", o->threads, help.threads)->check(Between(1, 1024))->capture_default_str();
  }
  if (w & RunOptions::kSeed) app->add_option("--seed", o->seed, help.seed)->capture_default_str();
  if (w & RunOptions::kMetrics) {
    app->add_option("--metrics", o->metrics,
                    fmt::format("Write a CSV row per {} to this file: {}", help.unit, help.metrics_columns));
  }
  if (w & RunOptions::kCheckpoint) {
    app->add_option("--checkpoint", o->checkpoint_dir,
                    "Write checkpoints to this folder (see --checkpoint-every)");
    app->add_option(
           "--checkpoint-every", o->checkpoint_every,
           fmt::format("{}s between checkpoints, with --checkpoint (default: {})", help.unit,
                       help.checkpoint_default.empty() ? "the last " + help.unit : help.checkpoint_default))
        ->check(Between(1, 1e18));
  }
  if (w & RunOptions::kResume) {
    app->add_option("--resume", o->resume_dir, "Continue from the checkpoint in this folder");
  }
  if (w & RunOptions::kTimeout) {
    app->add_option("--timeout-ms", o->timeout_ms, "Deadline of every wait on another process")
        ->check(Between(1, 86400000))
        ->capture_default_str();
  }
}

void CheckRunOptions(RunOptions* o, uint64_t last_unit) {
  if (!o->metrics.empty()) CheckOutputFile("--metrics", o->metrics);
  CheckCheckpointOptions(o->checkpoint_dir, &o->checkpoint_every, last_unit);
}

}  // namespace parasol::tools
