#include "parasol/apps/mtrl/mtrl_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>

#include "parasol/core/array_file.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol::apps::mtrl {

namespace fs = std::filesystem;

namespace {
constexpr char kHeader[] = "parasol-mtrl-checkpoint";
std::string PathIn(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }
}  // namespace

void WriteMtrlCheckpoint(FileSystem& fs, const std::string& dir, const MtrlCheckpoint& c) {
  WriteArrayFile(fs, PathIn(dir, "alpha.bin"), "PSMTRLA1", c.alpha);
  WriteArrayFile(fs, PathIn(dir, "omega.bin"), "PSMTRLO1", c.omega);
  KeyValueWriter(kHeader, 1)
      .Add("iteration", c.iteration)
      .Add("rounds", c.rounds)
      .Add("tasks", c.tasks)
      .Add("features", c.features)
      .Add("samples", c.samples)
      .Add("objective", c.objective)
      .Write(fs, PathIn(dir, "mtrl.txt"));
}

namespace {

MtrlCheckpoint ReadMeta(const std::string& path) {
  const KeyValueFile f = KeyValueFile::Read(
      path, kHeader, 1, {"iteration", "rounds", "tasks", "features", "samples", "objective"});
  MtrlCheckpoint c;
  c.iteration = f.Number<uint64_t>("iteration");
  c.rounds = f.Number<uint64_t>("rounds");
  c.tasks = f.Number<uint64_t>("tasks");
  c.features = f.Number<uint64_t>("features");
  c.samples = f.Number<uint64_t>("samples");
  c.objective = f.Number<double>("objective");
  return c;
}

}  // namespace

MtrlCheckpoint ReadMtrlCheckpoint(const std::string& dir, uint64_t tasks, uint64_t features,
                                  uint64_t samples) {
  MtrlCheckpoint c = ReadMeta(PathIn(dir, "mtrl.txt"));
  if (c.tasks != tasks || c.features != features || c.samples != samples) {
    throw InvalidArgumentError(
        fmt::format("{}: a checkpoint of {} tasks, {} features, {} samples; the data has {}, {}, {}", dir,
                    c.tasks, c.features, c.samples, tasks, features, samples));
  }
  c.alpha = ReadArrayFile(PathIn(dir, "alpha.bin"), "PSMTRLA1", samples);
  c.omega = ReadArrayFile(PathIn(dir, "omega.bin"), "PSMTRLO1", tasks * tasks);
  return c;
}

}  // namespace parasol::apps::mtrl
