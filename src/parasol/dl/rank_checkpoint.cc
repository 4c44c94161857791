#include "parasol/dl/rank_checkpoint.h"

#include <filesystem>

#include <fmt/format.h>

#include "parasol/core/array_file.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol::dl {
namespace {

namespace fs = std::filesystem;
constexpr char kHeader[] = "parasol-rank-checkpoint";
constexpr char kMagic[] = "PSRANKS1";

std::string RankFile(const std::string& dir, int rank, int64_t step) {
  return (fs::path(dir) / fmt::format("rank-{}.step-{}.bin", rank, step)).string();
}

}  // namespace

void WriteRankState(FileSystem& files, const std::string& dir, int rank, int64_t step,
                    std::span<const double> values) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  WriteArrayFile(files, RankFile(dir, rank, step), kMagic, values);
}

void WriteCheckpointMeta(FileSystem& files, const std::string& dir, const RankCheckpointMeta& m) {
  KeyValueWriter(kHeader, 1)
      .Add("step", m.step)
      .Add("ranks", m.ranks)
      .Add("tensor_parallel", m.tensor_parallel)
      .Add("expert_parallel", m.expert_parallel)
      .Add("shape", m.shape)
      .Write(files, (fs::path(dir) / "checkpoint.txt").string());
  // The previous checkpoints' rank files: no longer named by checkpoint.txt.
  const std::string keep = fmt::format(".step-{}.bin", m.step);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank-", 0) == 0 && name.size() > keep.size() &&
        name.compare(name.size() - keep.size(), keep.size(), keep) != 0) {
      fs::remove(entry.path(), ec);
    }
  }
}

RankCheckpointMeta ReadCheckpointMeta(const std::string& dir) {
  const KeyValueFile f = KeyValueFile::Read((fs::path(dir) / "checkpoint.txt").string(), kHeader, 1,
                                            {"step", "ranks", "tensor_parallel", "expert_parallel", "shape"});
  f.Require({"step", "ranks", "tensor_parallel", "expert_parallel", "shape"});
  RankCheckpointMeta m;
  m.step = f.NumberIn<int64_t>("step", 0, int64_t{1} << 50);
  m.ranks = f.NumberIn<int>("ranks", 1, 1 << 20);
  m.tensor_parallel = f.NumberIn<int>("tensor_parallel", 1, m.ranks);
  m.expert_parallel = f.NumberIn<int>("expert_parallel", 1, m.ranks);
  m.shape = std::string(f.Text("shape"));
  return m;
}

std::vector<double> ReadRankState(const std::string& dir, int rank, int64_t step, uint64_t count) {
  return ReadArrayFile(RankFile(dir, rank, step), kMagic, count);
}

}  // namespace parasol::dl
