// MTRL checkpoints, taken after an iteration's Omega step. Format:
//   DIR/alpha.bin  every sample's dual variable, in the training set's order (core/array_file.h)
//   DIR/omega.bin  the task covariance, tasks x tasks
//   DIR/mtrl.txt   "key value" lines, written last: marks a complete checkpoint
// The weights follow from them (V = sum alpha x, W = V Sigma), so nothing else is stored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::apps::mtrl {

struct MtrlCheckpoint {
  uint64_t iteration = 0, rounds = 0;
  uint64_t tasks = 0, features = 0, samples = 0;
  double objective = 0;  // after `iteration`, for the next one's stopping test
  std::vector<double> alpha, omega;
};

// Rank 0. Atomic per file, mtrl.txt last. Throws IoError.
void WriteMtrlCheckpoint(FileSystem& fs, const std::string& dir, const MtrlCheckpoint& c);
// The shape comes from the training data (tasks, features, samples): a checkpoint of another
// shape is an InvalidArgumentError; IoError when missing; ParseError "file:line: ..." when
// malformed or corrupt.
MtrlCheckpoint ReadMtrlCheckpoint(const std::string& dir, uint64_t tasks, uint64_t features,
                                  uint64_t samples);

}  // namespace parasol::apps::mtrl
