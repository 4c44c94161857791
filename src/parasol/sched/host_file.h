// The hosts of a multi-host live cluster (`parasol cluster --hosts FILE`), in MPI's hostfile
// format: one host per line, `NAME [slots=N]` (1 slot when not given), '#' starts a comment.
#pragma once

#include <string>
#include <vector>

namespace parasol::sched {

struct Host {
  std::string name;
  int slots = 1;  // the ranks ("GPUs") it runs
};

// Throws ParseError "file:line: ..." for a malformed line, a host named twice, or hosts with
// different slot counts (the schedulers model a cluster of equal nodes), and when the file names
// no host; IoError when it cannot be read.
std::vector<Host> ReadHostFile(const std::string& path);

}  // namespace parasol::sched
