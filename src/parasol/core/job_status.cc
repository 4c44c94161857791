#include "parasol/core/job_status.h"

#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol {

JobStatus ReadJobStatus(const std::string& path) {
  LineReader in(path);
  JobStatus s;
  std::set<std::string> seen;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view key = NextField(line, pos), value = NextField(line, pos);
    if (key.empty() || value.empty() || !NextField(line, pos).empty()) in.Fail("expected 'key value'");
    if (key == "step") s.step = in.NumberIn<int64_t>(value, "step", 0, INT64_MAX);
    else if (key == "total_steps") s.total_steps = in.NumberIn<int64_t>(value, "total_steps", 0, INT64_MAX);
    else if (key == "ranks") s.ranks = in.NumberIn<int>(value, "ranks", 1, 1 << 20);
    else if (key == "batch_per_rank") s.batch_per_rank = in.NumberIn<int64_t>(value, "batch_per_rank", 0, INT64_MAX);
    else if (key == "step_seconds") s.step_seconds = in.NumberIn<double>(value, "step_seconds", 0, 1e9);
    else if (key == "sync_seconds") s.sync_seconds = in.NumberIn<double>(value, "sync_seconds", 0, 1e9);
    else if (key == "state") s.state = value;
    else in.Fail(fmt::format("unknown key '{}'", key));
    seen.emplace(key);
  }
  for (const char* key : {"step", "total_steps", "ranks", "state"}) {
    if (!seen.contains(key)) throw ParseError(path, 0, fmt::format("no '{}' line", key));
  }
  return s;
}

void WriteJobStatus(const std::string& path, const JobStatus& s) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    out << fmt::format("step {}\ntotal_steps {}\nranks {}\nbatch_per_rank {}\nstep_seconds {:.6f}\nsync_seconds {:.6f}\n"
                       "state {}\n",
                       s.step, s.total_steps, s.ranks, s.batch_per_rank, s.step_seconds, s.sync_seconds, s.state);
  });
}

}  // namespace parasol
