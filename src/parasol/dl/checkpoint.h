// Training checkpoints: parameters, momentum and batch-norm statistics at a step boundary, in
// one file (DIR/train.ckpt) written to a temporary name and renamed, so a crash leaves the last
// complete checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace parasol::dl {

struct TrainCheckpoint {
  std::string model;
  int64_t step = 0;            // steps done
  torch::Tensor parameters;    // flat float
  torch::Tensor momentum;      // flat float
  torch::Tensor buffers;       // flat float (running statistics)
};

void WriteCheckpoint(const std::string& dir, const TrainCheckpoint& c);
// Throws IoError (missing), ParseError naming the file (corrupt, truncated, another model or size).
TrainCheckpoint ReadCheckpoint(const std::string& dir, const std::string& model, int64_t parameters, int64_t buffers);

}  // namespace parasol::dl
