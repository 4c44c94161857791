// Training checkpoints: parameters, momentum and batch-norm statistics at a step boundary, in
// one section file (core/section_file.h, kind "train-checkpoint": DIR/train.ckpt) written to a
// temporary name and renamed, so a crash leaves the last complete checkpoint. The hand-written
// formats 01 to 03 of older parasols are refused with a message saying so.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "parasol/core/file_system.h"

namespace parasol::dl {

struct TrainCheckpoint {
  std::string model;
  int64_t step = 0;             // steps done
  double progress = 0;          // scale-invariant iterations (steps at the base batch) done
  int64_t samples_seen = 0;     // where the data order stands
  int64_t base_batch = 0;       // the total batch the learning rate is set for (0: unset)
  double noise[3] = {0, 0, 0};  // NoiseScale::State: sqr sum, var sum, weight
  torch::Tensor parameters;     // flat float
  torch::Tensor momentum;       // flat float
  torch::Tensor buffers;        // flat float (running statistics)
};

void WriteCheckpoint(FileSystem& fs, const std::string& dir, const TrainCheckpoint& c);
// Throws IoError (missing), ParseError naming the file (corrupt, truncated, another model or size).
TrainCheckpoint ReadCheckpoint(const std::string& dir, const std::string& model, int64_t parameters,
                               int64_t buffers);

}  // namespace parasol::dl
