#include "parasol/core/job_status.h"

#include <fmt/format.h>

#include <cstdint>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol {

JobStatus ReadJobStatus(const std::string& path) {
  const KeyValueFile f =
      KeyValueFile::Read(path, "", 0,
                         {"step", "total_steps", "progress", "ranks", "batch_per_rank", "step_seconds",
                          "sync_seconds", "grad_sqr", "grad_var", "state"});
  JobStatus s;
  if (f.Has("step")) s.step = f.NumberIn<int64_t>("step", 0, INT64_MAX);
  if (f.Has("total_steps")) s.total_steps = f.NumberIn<int64_t>("total_steps", 0, INT64_MAX);
  s.progress = f.Has("progress") ? f.NumberIn<double>("progress", 0, 1e18) : static_cast<double>(s.step);
  if (f.Has("ranks")) s.ranks = f.NumberIn<int>("ranks", 1, 1 << 20);
  if (f.Has("batch_per_rank")) s.batch_per_rank = f.NumberIn<int64_t>("batch_per_rank", 0, INT64_MAX);
  if (f.Has("step_seconds")) s.step_seconds = f.NumberIn<double>("step_seconds", 0, 1e9);
  if (f.Has("sync_seconds")) s.sync_seconds = f.NumberIn<double>("sync_seconds", 0, 1e9);
  if (f.Has("grad_sqr") || f.Has("grad_var")) {
    f.Require({"grad_sqr", "grad_var"});
    s.grad_measured = true;
    s.grad_sqr = f.NumberIn<double>("grad_sqr", 0, 1e300);
    s.grad_var = f.NumberIn<double>("grad_var", 0, 1e300);
  }
  if (f.Has("state")) s.state = f.Text("state");
  f.Require({"step", "total_steps", "ranks", "state"});
  return s;
}

void WriteJobStatus(const std::string& path, const JobStatus& s) {
  KeyValueWriter w;
  w.Add("step", s.step)
      .Add("total_steps", s.total_steps)
      .Add("progress", s.progress)
      .Add("ranks", s.ranks)
      .Add("batch_per_rank", s.batch_per_rank)
      .Add("step_seconds", s.step_seconds)
      .Add("sync_seconds", s.sync_seconds);
  if (s.grad_measured) w.Add("grad_sqr", s.grad_sqr).Add("grad_var", s.grad_var);
  w.Add("state", s.state).Write(path);
}

}  // namespace parasol
