// SVM checkpoints: the multipliers of the two-class machines solved so far and of the one under
// way, from which training goes on (the gradient is rebuilt from them). Files in DIR:
//   svm.txt              "key value" lines (core/key_value_file.h), written last: the commit point
//   pairs-K.bin          the K machines done: rho, objective and iterations of each, then the
//                        multipliers of each (core/array_file.h)
//   current-K-I.bin      machine K's multipliers after I iterations (none between machines)
// Array files are named by what they hold, so a crash between two writes leaves svm.txt naming
// files that are still there; the ones it no longer names are removed after it is replaced.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/svm/kernel.h"
#include "parasol/core/file_system.h"

namespace parasol::apps::svm {

// What a checkpoint was trained on and with: a resume must match it.
struct SvmCheckpointKey {
  uint64_t samples = 0, features = 0, classes = 0;
  uint64_t data_fingerprint = 0;  // data::Fingerprint
  KernelParams kernel;
  double c = 0;
};

struct SvmCheckpoint {
  SvmCheckpointKey key;
  struct Pair {
    double rho = 0, objective = 0;
    uint64_t iterations = 0;
    std::vector<double> alpha;
  };
  std::vector<Pair> done;
  uint64_t current_iterations = 0;
  std::vector<double> current_alpha;  // empty: no machine under way
};

// Rank 0. Creates `dir` if needed. Throws IoError.
void WriteSvmCheckpoint(FileSystem& fs, const std::string& dir, const SvmCheckpoint& c);

// `pair_samples`: the sample count of each machine, in training order, from the data. A
// checkpoint of another data set, kernel or C is an InvalidArgumentError; IoError when a file is
// missing; ParseError "file:line: ..." when malformed or corrupt.
SvmCheckpoint ReadSvmCheckpoint(const std::string& dir, const SvmCheckpointKey& key,
                                std::span<const uint64_t> pair_samples);

}  // namespace parasol::apps::svm
