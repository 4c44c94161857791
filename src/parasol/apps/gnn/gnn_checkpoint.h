// GNN checkpoints, taken after an epoch. Format:
//   DIR/params.bin  the model's parameters (core/array_file.h; floats stored as doubles, exactly)
//   DIR/adam.bin    Adam's first then second moments
//   DIR/best.bin    the parameters at the epoch early stopping would report
//   DIR/gnn.txt     "key value" lines, written last: marks a complete checkpoint
// Dropout masks are a function of the seed and the epoch, so a resumed run draws what the
// uninterrupted run draws and ends where it ends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::apps::gnn {

struct GnnCheckpoint {
  std::string shape;  // layer widths, "1433x16x7" (GCN), "gat:1433x64x7": a checkpoint fits one model
  uint64_t epoch = 0, adam_steps = 0;
  std::vector<double> params, adam, best;  // adam: 2 x params
  // Early stopping's state: the reported epoch's figures and the epochs since it.
  uint64_t best_epoch = 0, since_best = 0;
  double best_train_loss = 0, best_train_accuracy = 0, best_val_loss = 0, best_val_accuracy = 0,
         best_test_accuracy = 0;
};

// Rank 0. Atomic per file, gnn.txt last. Throws IoError.
void WriteGnnCheckpoint(FileSystem& fs, const std::string& dir, const GnnCheckpoint& c);
// `shape` and `params` come from the model being trained: a checkpoint of another model is an
// InvalidArgumentError; IoError when missing; ParseError "file:line: ..." when malformed or
// corrupt.
GnnCheckpoint ReadGnnCheckpoint(const std::string& dir, const std::string& shape, uint64_t params);

}  // namespace parasol::apps::gnn
