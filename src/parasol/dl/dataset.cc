#include "parasol/dl/dataset.h"

#include <filesystem>

#include <fmt/format.h>
#include <zlib.h>

#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

namespace fs = std::filesystem;

// The largest IDX file read (uncompressed): MNIST-sized sets are 50 MB; a gzip stream that
// inflates past this is refused rather than allowed to fill memory.
constexpr size_t kMaxIdxBytes = size_t{4} << 30;

// Reads a gzip or plain file whole (zlib reads both).
std::vector<uint8_t> ReadAll(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IoError(fmt::format("{}: cannot open", path));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.insert(out.end(), buf, buf + n);
    if (out.size() > kMaxIdxBytes) {
      gzclose(f);
      throw ParseError(path, 0, fmt::format("more than {} bytes uncompressed", kMaxIdxBytes));
    }
  }
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw ParseError(path, 0, "corrupt gzip data");
  return out;
}

uint32_t BigEndian32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// The path of an IDX file in dir, gzipped or not; "" if neither exists.
std::string FindIdx(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".gz", ""}) {
    fs::path p = fs::path(dir) / (stem + ext);
    if (fs::exists(p)) return p.string();
  }
  return "";
}

Dataset Slice(const Dataset& d, int64_t begin, int64_t end) {
  return {d.images.slice(0, begin, end), d.labels.slice(0, begin, end)};
}

Dataset LoadMnist(const std::string& dir, std::string& description) {
  const std::string test_images = FindIdx(dir, "t10k-images-idx3-ubyte");
  const std::string test_labels = FindIdx(dir, "t10k-labels-idx1-ubyte");
  if (test_images.empty() || test_labels.empty()) {
    throw IoError(fmt::format("{}: no t10k-images-idx3-ubyte[.gz] and t10k-labels-idx1-ubyte[.gz]", dir));
  }
  description = fmt::format("MNIST from {}", dir);
  return ReadMnist(test_images, test_labels);
}

Dataset Synthetic(const std::vector<int64_t>& shape, int64_t n, torch::Generator& gen, const torch::Tensor& patterns) {
  std::vector<int64_t> full = {n};
  full.insert(full.end(), shape.begin(), shape.end());
  Dataset d;
  d.labels = torch::randint(10, {n}, gen, torch::TensorOptions().dtype(torch::kInt64));
  d.images = torch::randn(full, gen);
  if (patterns.defined()) d.images = d.images.mul_(0.5).add_(patterns.index_select(0, d.labels));
  return d;
}

}  // namespace

Dataset ReadMnist(const std::string& images_path, const std::string& labels_path) {
  std::vector<uint8_t> img = ReadAll(images_path);
  std::vector<uint8_t> lab = ReadAll(labels_path);
  if (img.size() < 16 || BigEndian32(img, 0) != 0x803) {
    throw ParseError(images_path, 0, "not an IDX image file (magic 0x00000803 expected)");
  }
  if (lab.size() < 8 || BigEndian32(lab, 0) != 0x801) {
    throw ParseError(labels_path, 0, "not an IDX label file (magic 0x00000801 expected)");
  }
  const int64_t n = BigEndian32(img, 4), rows = BigEndian32(img, 8), cols = BigEndian32(img, 12);
  // Each factor is below 2^32 and the file below 2^33 bytes: check the image size before the
  // product (which could overflow) is formed.
  const int64_t pixels = static_cast<int64_t>(img.size()) - 16;
  if (rows < 1 || cols < 1 || rows > 65536 || cols > 65536 || pixels % (rows * cols) != 0 ||
      pixels / (rows * cols) != n) {
    throw ParseError(images_path, 0, fmt::format("{} bytes, but the header promises {} images of {}x{}",
                                                img.size(), n, rows, cols));
  }
  if (BigEndian32(lab, 4) != n || lab.size() != static_cast<size_t>(8 + n)) {
    throw ParseError(labels_path, 0, fmt::format("expected {} labels", n));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (lab[8 + i] > 9) throw ParseError(labels_path, 0, fmt::format("label {} of image {} is not a digit", lab[8 + i], i));
  }
  Dataset d;
  d.images = torch::from_blob(img.data() + 16, {n, 1, rows, cols}, torch::kUInt8).to(torch::kFloat32).div_(255.0);
  d.images.sub_(0.1307).div_(0.3081);
  d.labels = torch::from_blob(lab.data() + 8, {n}, torch::kUInt8).to(torch::kInt64);
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
  s.description = fmt::format("{} ({} train / {} test, seed {})", o.kind, o.train_samples, o.test_samples, o.seed);
  return s;
}

BatchOrder::BatchOrder(int64_t samples, int64_t batch_per_rank, int ranks, uint64_t seed)
    : samples_(samples), batch_(batch_per_rank), ranks_(ranks), seed_(seed) {
  steps_per_epoch_ = samples / (batch_per_rank * ranks);
  if (steps_per_epoch_ == 0) {
    throw InvalidArgumentError(fmt::format("{} samples do not fill one global batch of {} x {} ranks", samples,
                                           batch_per_rank, ranks));
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
