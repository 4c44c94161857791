#include "parasol/dl/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/checksum.h"
#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

// Format 2 ends with an FNV-1a checksum of everything before it (format 1 had none); format 3
// adds the progress, data position, base batch and gradient noise after the step.
constexpr char kMagic[8] = {'P', 'S', 'L', 'T', 'R', 'N', '0', '3'};

std::string PathOf(const std::string& dir) { return (std::filesystem::path(dir) / "train.ckpt").string(); }

// Writes and checksums as it goes (a checkpoint can be most of memory: it is not copied whole).
class SummingWriter {
 public:
  explicit SummingWriter(std::ostream& out) : out_(out) {}
  void Put(const void* data, size_t n) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    sum_ = Fnv1a64(data, n, sum_);
  }
  void PutTensor(const torch::Tensor& t) {
    const int64_t n = t.numel();
    Put(&n, sizeof n);
    torch::Tensor c = t.contiguous();
    Put(c.data_ptr<float>(), static_cast<size_t>(n) * sizeof(float));
  }
  void Finish() { out_.write(reinterpret_cast<const char*>(&sum_), sizeof sum_); }

 private:
  std::ostream& out_;
  uint64_t sum_ = kFnvSeed;
};

class SummingReader {
 public:
  explicit SummingReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  void Get(void* data, size_t n, const char* what) {
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(n));
    if (!in_) throw ParseError(path_, 0, fmt::format("truncated in the {}", what));
    sum_ = Fnv1a64(data, n, sum_);
  }
  torch::Tensor GetTensor(int64_t expected, const char* what) {
    int64_t n = -1;
    Get(&n, sizeof n, what);
    if (n != expected)
      throw ParseError(path_, 0, fmt::format("{}: {} values, this model has {}", what, n, expected));
    torch::Tensor t = torch::empty({n});
    Get(t.data_ptr<float>(), static_cast<size_t>(n) * sizeof(float), what);
    return t;
  }
  // Reads the stored checksum and checks it, and that nothing follows.
  void Finish() {
    uint64_t stored = 0;
    in_.read(reinterpret_cast<char*>(&stored), sizeof stored);
    if (!in_) throw ParseError(path_, 0, "truncated before the checksum");
    if (stored != sum_) throw ParseError(path_, 0, "checksum mismatch: the file is corrupt");
    if (in_.peek() != std::char_traits<char>::eof())
      throw ParseError(path_, 0, "trailing bytes after the checkpoint");
  }

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t sum_ = kFnvSeed;
};

}  // namespace

void WriteCheckpoint(FileSystem& fs, const std::string& dir, const TrainCheckpoint& c) {
  std::filesystem::create_directories(dir);
  WriteFileAtomically(fs, PathOf(dir), [&](std::ostream& out) {
    SummingWriter w(out);
    w.Put(kMagic, sizeof kMagic);
    const uint32_t len = static_cast<uint32_t>(c.model.size());
    w.Put(&len, sizeof len);
    w.Put(c.model.data(), len);
    w.Put(&c.step, sizeof c.step);
    w.Put(&c.progress, sizeof c.progress);
    w.Put(&c.samples_seen, sizeof c.samples_seen);
    w.Put(&c.base_batch, sizeof c.base_batch);
    w.Put(c.noise, sizeof c.noise);
    w.PutTensor(c.parameters);
    w.PutTensor(c.momentum);
    w.PutTensor(c.buffers);
    w.Finish();
  });
}

TrainCheckpoint ReadCheckpoint(const std::string& dir, const std::string& model, int64_t parameters,
                               int64_t buffers) {
  const std::string path = PathOf(dir);
  if (!std::filesystem::exists(path))
    throw IoError(fmt::format("{}: cannot open (no checkpoint in {})", path, dir));
  SummingReader in(path);
  char magic[sizeof kMagic];
  in.Get(magic, sizeof magic, "header");
  if (!std::equal(magic, magic + 6, kMagic)) throw ParseError(path, 0, "not a parasol training checkpoint");
  const std::string_view format(magic + 6, 2);
  if (format != "02" && format != "03") {
    throw ParseError(path, 0, fmt::format("format {} (this parasol reads formats 02 and 03)", format));
  }
  uint32_t len = 0;
  in.Get(&len, sizeof len, "header");
  if (len > 64) throw ParseError(path, 0, "corrupt header");
  TrainCheckpoint c;
  c.model.resize(len);
  in.Get(c.model.data(), len, "header");
  in.Get(&c.step, sizeof c.step, "header");
  c.progress = static_cast<double>(c.step);
  if (format == "03") {
    in.Get(&c.progress, sizeof c.progress, "header");
    in.Get(&c.samples_seen, sizeof c.samples_seen, "header");
    in.Get(&c.base_batch, sizeof c.base_batch, "header");
    in.Get(c.noise, sizeof c.noise, "header");
    const bool noise_ok = std::all_of(c.noise, c.noise + 3, [](double v) { return std::isfinite(v); }) &&
                          c.noise[2] >= 0 && c.noise[2] <= 1;
    if (c.step < 0 || !std::isfinite(c.progress) || c.progress < 0 || c.samples_seen < 0 ||
        c.base_batch < 0 || !noise_ok) {
      throw ParseError(path, 0, "corrupt header (progress, data position, base batch or gradient noise)");
    }
  }
  if (c.model != model)
    throw ParseError(path, 0, fmt::format("a checkpoint of model {}, not {}", c.model, model));
  c.parameters = in.GetTensor(parameters, "parameters");
  c.momentum = in.GetTensor(parameters, "momentum");
  c.buffers = in.GetTensor(buffers, "batch-norm statistics");
  in.Finish();
  return c;
}

}  // namespace parasol::dl
