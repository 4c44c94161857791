// MLR checkpoints, taken at the end of an epoch. Format:
//   DIR/mlr.txt       "key value" lines, written last by rank 0: marks a complete checkpoint
//   DIR/weights.bin   (sufficient factors) the stored rows V, then the biases, with a checksum
//   the parameter server's own checkpoint files (--comm ps), written by its shards
// The weights are s V: the scale s is in mlr.txt, so a resumed run decays exactly as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::apps::mlr {

struct MlrCheckpointMeta {
  std::string comm;  // "ps" or "sfb"
  uint64_t epoch = 0, steps = 0;
  double scale = 1;
  uint64_t classes = 0, features = 0;
};

// Rank 0, after the weights are written. Atomic. Throws IoError.
void WriteMlrMeta(FileSystem& fs, const std::string& dir, const MlrCheckpointMeta& m);
// IoError when missing; ParseError "file:line: ..." when malformed.
MlrCheckpointMeta ReadMlrMeta(const std::string& dir);
// v: features x classes, b: classes. Atomic, with a checksum. Throws IoError.
void WriteMlrWeights(FileSystem& fs, const std::string& dir, const std::vector<double>& v,
                     const std::vector<double>& b);
// Reads what WriteMlrWeights wrote for this shape; ParseError for a corrupt, torn or foreign file.
void ReadMlrWeights(const std::string& dir, uint64_t features, uint64_t classes, std::vector<double>* v,
                    std::vector<double>* b);

}  // namespace parasol::apps::mlr
