#include "parasol/dl/tensor_dataset.h"

#include <filesystem>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/dl/idx_file.h"

namespace parasol::dl {
namespace {

namespace fs = std::filesystem;

// The path of an IDX file in dir, gzipped or not; "" if neither exists.
std::string FindIdx(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".gz", ""}) {
    fs::path p = fs::path(dir) / (stem + ext);
    if (fs::exists(p)) return p.string();
  }
  return "";
}

TensorDataset Slice(const TensorDataset& d, int64_t begin, int64_t end) {
  return {d.images.slice(0, begin, end), d.labels.slice(0, begin, end)};
}

TensorDataset LoadMnist(const std::string& dir, std::string& description) {
  const std::string test_images = FindIdx(dir, "t10k-images-idx3-ubyte");
  const std::string test_labels = FindIdx(dir, "t10k-labels-idx1-ubyte");
  if (test_images.empty() || test_labels.empty()) {
    throw IoError(fmt::format("{}: no t10k-images-idx3-ubyte[.gz] and t10k-labels-idx1-ubyte[.gz]", dir));
  }
  description = fmt::format("MNIST from {}", dir);
  return ReadMnist(test_images, test_labels);
}

TensorDataset Synthetic(const std::vector<int64_t>& shape, int64_t n, torch::Generator& gen,
                        const torch::Tensor& patterns) {
  std::vector<int64_t> full = {n};
  full.insert(full.end(), shape.begin(), shape.end());
  TensorDataset d;
  d.labels = torch::randint(10, {n}, gen, torch::TensorOptions().dtype(torch::kInt64));
  d.images = torch::randn(full, gen);
  if (patterns.defined()) d.images = d.images.mul_(0.5).add_(patterns.index_select(0, d.labels));
  return d;
}

}  // namespace

TensorDataset ReadMnist(const std::string& images_path, const std::string& labels_path) {
  IdxImages img = ReadIdxImages(images_path);
  std::vector<uint8_t> lab = ReadIdxLabels(labels_path, img.count);
  const int64_t n = img.count, rows = img.rows, cols = img.cols;
  TensorDataset d;
  d.images = torch::from_blob(img.file.data() + 16, {n, 1, rows, cols}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0);
  d.images.sub_(0.1307).div_(0.3081);
  d.labels = torch::from_blob(lab.data(), {n}, torch::kUInt8).to(torch::kInt64);
  return d;
}

DataSplit LoadData(const DataOptions& o) {
  DataSplit s;
  if (o.kind == "mnist") {
    if (o.dir.empty()) throw InvalidArgumentError("--dataset mnist needs --data DIR");
    const std::string train_images = FindIdx(o.dir, "train-images-idx3-ubyte");
    const std::string train_labels = FindIdx(o.dir, "train-labels-idx1-ubyte");
    s.test = LoadMnist(o.dir, s.description);
    if (!train_images.empty() && !train_labels.empty()) {
      s.train = ReadMnist(train_images, train_labels);
    } else {
      const int64_t cut = s.test.size() * 4 / 5;
      s.train = Slice(s.test, 0, cut);
      s.test = Slice(s.test, cut, s.test.size());
      s.description += fmt::format(" (test set only: {} train / {} test)", s.train.size(), s.test.size());
    }
    return s;
  }
  torch::Generator gen = at::detail::createCPUGenerator(o.seed);
  torch::Tensor patterns;
  std::vector<int64_t> shape = o.shape;
  if (o.kind == "cifar10-synthetic") {
    shape = {3, 32, 32};
    patterns = torch::randn({10, 3, 32, 32}, gen);
  } else if (o.kind != "synthetic") {
    throw InvalidArgumentError(fmt::format("--dataset '{}': mnist, cifar10-synthetic or synthetic", o.kind));
  }
  s.train = Synthetic(shape, o.train_samples, gen, patterns);
  s.test = Synthetic(shape, o.test_samples, gen, patterns);
  s.description =
      fmt::format("{} ({} train / {} test, seed {})", o.kind, o.train_samples, o.test_samples, o.seed);
  return s;
}

BatchOrder::BatchOrder(int64_t samples, int64_t batch_per_rank, int ranks, uint64_t seed)
    : samples_(samples), batch_(batch_per_rank), ranks_(ranks), seed_(seed) {
  steps_per_epoch_ = samples / (batch_per_rank * ranks);
  if (steps_per_epoch_ == 0) {
    throw InvalidArgumentError(fmt::format("{} samples do not fill one global batch of {} x {} ranks",
                                           samples, batch_per_rank, ranks));
  }
}

torch::Tensor BatchOrder::Indices(int64_t epoch, int64_t step, int rank) {
  if (epoch != epoch_) {
    torch::Generator gen = at::detail::createCPUGenerator(seed_ * 1000003 + static_cast<uint64_t>(epoch));
    order_ = torch::randperm(samples_, gen, torch::TensorOptions().dtype(torch::kInt64));
    epoch_ = epoch;
  }
  return order_.slice(0, (step * ranks_ + rank) * batch_, (step * ranks_ + rank + 1) * batch_);
}

}  // namespace parasol::dl
