#include "parasol/dl/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/section_file.h"

namespace parasol::dl {
namespace {

constexpr char kKind[] = "train-checkpoint";
// The hand-written formats 01 to 03 began with these six bytes and a two-digit version.
constexpr char kOldMagic[6] = {'P', 'S', 'L', 'T', 'R', 'N'};
constexpr size_t kMaxModelName = 64;

std::string PathOf(const std::string& dir) { return (std::filesystem::path(dir) / "train.ckpt").string(); }

// A file of the old formats gets its own message rather than "not a parasol section file".
void RefuseOldFormat(const std::string& path) {
  char head[8] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(head, sizeof head) || std::memcmp(head, kOldMagic, sizeof kOldMagic) != 0) return;
  throw ParseError(path, 0,
                   fmt::format("format {} of an older parasol (this one reads section files): resume it with "
                               "the parasol that wrote it, or train afresh",
                               std::string_view(head + 6, 2)));
}

torch::Tensor ReadTensor(const SectionReader& in, const char* name, int64_t expected, const char* what) {
  const uint64_t n = in.Count(name);
  if (n != static_cast<uint64_t>(expected))
    in.Fail(fmt::format("{}: {} values, this model has {}", what, n, expected));
  torch::Tensor t = torch::empty({expected});
  in.ReadInto(name, t.data_ptr<float>(), sizeof(float), n);
  return t;
}

}  // namespace

void WriteCheckpoint(FileSystem& fs, const std::string& dir, const TrainCheckpoint& c) {
  std::filesystem::create_directories(dir);
  // The writer streams the tensors' memory: contiguous copies that live until Write.
  const torch::Tensor parameters = c.parameters.contiguous(), momentum = c.momentum.contiguous(),
                      buffers = c.buffers.contiguous();
  SectionWriter w(kKind);
  w.Add("model", c.model.data(), 1, c.model.size());
  w.AddValue("step", c.step);
  w.AddValue("progress", c.progress);
  w.AddValue("samples_seen", c.samples_seen);
  w.AddValue("base_batch", c.base_batch);
  w.Add("noise", c.noise, sizeof(double), 3);
  w.Add("parameters", parameters.data_ptr<float>(), sizeof(float), parameters.numel());
  w.Add("momentum", momentum.data_ptr<float>(), sizeof(float), momentum.numel());
  w.Add("buffers", buffers.data_ptr<float>(), sizeof(float), buffers.numel());
  w.Write(fs, PathOf(dir));
}

TrainCheckpoint ReadCheckpoint(const std::string& dir, const std::string& model, int64_t parameters,
                               int64_t buffers) {
  const std::string path = PathOf(dir);
  if (!std::filesystem::exists(path))
    throw IoError(fmt::format("{}: cannot open (no checkpoint in {})", path, dir));
  RefuseOldFormat(path);
  const SectionReader in(path, kKind);
  TrainCheckpoint c;
  const uint64_t name_length = in.Count("model");
  if (name_length > kMaxModelName) in.Fail("corrupt header (model name)");
  c.model.resize(name_length);
  in.ReadInto("model", c.model.data(), 1, name_length);
  c.step = in.GetValue<int64_t>("step");
  c.progress = in.GetValue<double>("progress");
  c.samples_seen = in.GetValue<int64_t>("samples_seen");
  c.base_batch = in.GetValue<int64_t>("base_batch");
  in.ReadInto("noise", c.noise, sizeof(double), 3);
  const bool noise_ok = std::all_of(c.noise, c.noise + 3, [](double v) { return std::isfinite(v); }) &&
                        c.noise[2] >= 0 && c.noise[2] <= 1;
  if (c.step < 0 || !std::isfinite(c.progress) || c.progress < 0 || c.samples_seen < 0 || c.base_batch < 0 ||
      !noise_ok) {
    in.Fail("corrupt header (progress, data position, base batch or gradient noise)");
  }
  if (c.model != model) in.Fail(fmt::format("a checkpoint of model {}, not {}", c.model, model));
  c.parameters = ReadTensor(in, "parameters", parameters, "parameters");
  c.momentum = ReadTensor(in, "momentum", parameters, "momentum");
  c.buffers = ReadTensor(in, "buffers", buffers, "batch-norm statistics");
  return c;
}

}  // namespace parasol::dl
