#include "parasol/core/job_status.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"

namespace parasol {

JobStatus ReadJobStatus(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("{}: cannot read the job status", path));
  JobStatus s;
  std::set<std::string> seen;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    std::string key, value, extra;
    if (!(fields >> key >> value) || (fields >> extra)) throw ParseError(path, n, "expected 'key value'");
    try {
      if (key == "step") s.step = std::stoll(value);
      else if (key == "total_steps") s.total_steps = std::stoll(value);
      else if (key == "ranks") s.ranks = std::stoi(value);
      else if (key == "batch_per_rank") s.batch_per_rank = std::stoll(value);
      else if (key == "step_seconds") s.step_seconds = std::stod(value);
      else if (key == "sync_seconds") s.sync_seconds = std::stod(value);
      else if (key == "state") s.state = value;
      else throw ParseError(path, n, fmt::format("unknown key '{}'", key));
    } catch (const std::logic_error&) {
      throw ParseError(path, n, fmt::format("'{}' is not a number", value));
    }
    seen.insert(key);
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
