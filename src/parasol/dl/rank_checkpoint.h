// Checkpoints of training whose state is split or replicated over the ranks (dl/lm_trainer,
// dl/dynamic): every rank's parameters and optimizer moments in a file of its own, named by the
// step (`rank-R.step-S.bin`, checksummed), and `checkpoint.txt`, written by rank 0 once every
// rank's file is whole, naming the step, the layout and the model's shape. A crash while writing
// leaves the previous checkpoint whole: its files are removed only after the new checkpoint.txt.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::dl {

struct RankCheckpointMeta {
  int64_t step = 0;  // steps done
  int ranks = 1, tensor_parallel = 1, expert_parallel = 1;
  std::string shape;  // the model's dimensions, "v65-l4-d128-h4-f512-s128-e0-k2-m1"
};

// Every rank, then rank 0 once all have (the caller's barrier between them).
void WriteRankState(FileSystem& fs, const std::string& dir, int rank, int64_t step,
                    std::span<const double> values);
// Rank 0: the commit point; then removes the rank files of other steps.
void WriteCheckpointMeta(FileSystem& fs, const std::string& dir, const RankCheckpointMeta& meta);

// IoError (missing), ParseError (damaged) naming the file.
RankCheckpointMeta ReadCheckpointMeta(const std::string& dir);
std::vector<double> ReadRankState(const std::string& dir, int rank, int64_t step, uint64_t count);

}  // namespace parasol::dl
