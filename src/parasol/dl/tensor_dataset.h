// Training data for `parasol train`: MNIST from IDX files (gzip or plain), and seeded synthetic
// sets; the order of an epoch and each rank's share of every global batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace parasol::dl {

struct TensorDataset {
  torch::Tensor images;  // N x C x H x W, float
  torch::Tensor labels;  // N, int64
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct DataOptions {
  std::string kind = "synthetic";  // mnist, cifar10-synthetic, synthetic
  std::string dir;                 // mnist: folder of the IDX files
  std::vector<int64_t> shape;      // synthetic: C, H, W
  int64_t train_samples = 4096;    // synthetic sets
  int64_t test_samples = 1024;
  uint64_t seed = 1;
};

struct DataSplit {
  TensorDataset train;
  TensorDataset test;
  std::string description;
};

// mnist: train-images-idx3-ubyte[.gz] and t10k-... when the folder has both; with only the 10,000
// test images, the first 8,000 train and the last 2,000 test. Pixels scaled to mean 0, sd 1.
// synthetic: standard normal inputs, uniform labels (throughput runs; nothing to learn).
// cifar10-synthetic: 3x32x32, 10 classes, each a fixed random pattern plus noise (learnable).
// Throws InvalidArgumentError (unknown kind), IoError/ParseError naming the file.
DataSplit LoadData(const DataOptions& options);

// Reads an IDX image file (N x rows x cols, unsigned bytes) and its label file.
TensorDataset ReadMnist(const std::string& images_path, const std::string& labels_path);

// Every rank draws the same permutation for an epoch; global batch t is order[t*B*P, (t+1)*B*P)
// and rank r takes its r-th slice of B, so P ranks with batch B see exactly the samples one rank
// with batch P x B sees. The last incomplete global batch is dropped.
class BatchOrder {
 public:
  BatchOrder(int64_t samples, int64_t batch_per_rank, int ranks, uint64_t seed);
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  // Indices of rank `rank`'s part of global batch `step` (0-based within the epoch).
  torch::Tensor Indices(int64_t epoch, int64_t step, int rank);

 private:
  int64_t samples_;
  int64_t batch_;
  int ranks_;
  uint64_t seed_;
  int64_t steps_per_epoch_;
  int64_t epoch_ = -1;
  torch::Tensor order_;
};

}  // namespace parasol::dl
