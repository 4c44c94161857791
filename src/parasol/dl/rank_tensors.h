// A rank's training state as tensors, written to and read from its rank_checkpoint file (the
// file holds doubles; the tensors keep their own types and shapes). Shared by the trainers whose
// checkpoints are per rank (dl/lm_trainer, dl/dynamic).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "parasol/core/file_system.h"

namespace parasol::dl {

void WriteRankTensors(FileSystem& fs, const std::string& dir, int rank, int64_t step,
                      const std::vector<torch::Tensor>& state);
// Copies the file's values into `state` in place. IoError, ParseError (another size, damaged)
// naming the file.
void ReadRankTensors(const std::string& dir, int rank, int64_t step, const std::vector<torch::Tensor>& state);

}  // namespace parasol::dl
