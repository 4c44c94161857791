#include "parasol/dl/checkpoint.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

constexpr char kMagic[8] = {'P', 'S', 'L', 'T', 'R', 'N', '0', '1'};

std::string PathOf(const std::string& dir) { return (std::filesystem::path(dir) / "train.ckpt").string(); }

void WriteTensor(std::ostream& out, const torch::Tensor& t) {
  const int64_t n = t.numel();
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
  torch::Tensor c = t.contiguous();
  out.write(reinterpret_cast<const char*>(c.data_ptr<float>()), static_cast<std::streamsize>(n * sizeof(float)));
}

torch::Tensor ReadTensor(std::ifstream& in, int64_t expected, const std::string& path, const char* what) {
  int64_t n = -1;
  in.read(reinterpret_cast<char*>(&n), sizeof n);
  if (!in || n != expected) {
    throw ParseError(path, 0, fmt::format("{}: {} values, this model has {}", what, n, expected));
  }
  torch::Tensor t = torch::empty({n});
  in.read(reinterpret_cast<char*>(t.data_ptr<float>()), static_cast<std::streamsize>(n * sizeof(float)));
  if (!in) throw ParseError(path, 0, fmt::format("truncated in the {}", what));
  return t;
}

}  // namespace

void WriteCheckpoint(const std::string& dir, const TrainCheckpoint& c) {
  std::filesystem::create_directories(dir);
  WriteFileAtomically(PathOf(dir), [&](std::ostream& out) {
    out.write(kMagic, sizeof kMagic);
    const uint32_t len = static_cast<uint32_t>(c.model.size());
    out.write(reinterpret_cast<const char*>(&len), sizeof len);
    out.write(c.model.data(), len);
    out.write(reinterpret_cast<const char*>(&c.step), sizeof c.step);
    WriteTensor(out, c.parameters);
    WriteTensor(out, c.momentum);
    WriteTensor(out, c.buffers);
  });
}

TrainCheckpoint ReadCheckpoint(const std::string& dir, const std::string& model, int64_t parameters, int64_t buffers) {
  const std::string path = PathOf(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open (no checkpoint in {})", path, dir));
  char magic[sizeof kMagic];
  in.read(magic, sizeof magic);
  if (!in || !std::equal(magic, magic + sizeof magic, kMagic)) throw ParseError(path, 0, "not a parasol training checkpoint");
  uint32_t len = 0;
  in.read(reinterpret_cast<char*>(&len), sizeof len);
  if (!in || len > 64) throw ParseError(path, 0, "corrupt header");
  TrainCheckpoint c;
  c.model.resize(len);
  in.read(c.model.data(), len);
  in.read(reinterpret_cast<char*>(&c.step), sizeof c.step);
  if (!in) throw ParseError(path, 0, "truncated header");
  if (c.model != model) throw ParseError(path, 0, fmt::format("a checkpoint of model {}, not {}", c.model, model));
  c.parameters = ReadTensor(in, parameters, path, "parameters");
  c.momentum = ReadTensor(in, parameters, path, "momentum");
  c.buffers = ReadTensor(in, buffers, path, "batch-norm statistics");
  if (in.peek() != std::char_traits<char>::eof()) throw ParseError(path, 0, "trailing bytes after the checkpoint");
  return c;
}

}  // namespace parasol::dl
