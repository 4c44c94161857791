#include "parasol/apps/mtrl/mtrl_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>

#include "parasol/core/array_file.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol::apps::mtrl {

namespace fs = std::filesystem;

namespace {
constexpr char kHeader[] = "parasol-mtrl-checkpoint";
constexpr int kKeys = 6;
std::string PathIn(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }
}  // namespace

void WriteMtrlCheckpoint(const std::string& dir, const MtrlCheckpoint& c) {
  WriteArrayFile(PathIn(dir, "alpha.bin"), "PSMTRLA1", c.alpha);
  WriteArrayFile(PathIn(dir, "omega.bin"), "PSMTRLO1", c.omega);
  WriteFileAtomically(PathIn(dir, "mtrl.txt"), [&](std::ostream& out) {
    out << fmt::format(
        "{} 1\niteration {}\nrounds {}\ntasks {}\nfeatures {}\nsamples {}\nobjective {:.17g}\n", kHeader,
        c.iteration, c.rounds, c.tasks, c.features, c.samples, c.objective);
  });
}

namespace {

MtrlCheckpoint ReadMeta(const std::string& path) {
  LineReader in(path);
  MtrlCheckpoint c;
  std::string_view line;
  int seen = 0;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view key = NextField(line, pos), value = NextField(line, pos);
    if (in.line_number() == 1) {
      if (key != kHeader || value != "1") in.Fail("not a parasol MTRL checkpoint (version 1)");
      continue;
    }
    if (!NextField(line, pos).empty()) in.Fail(fmt::format("'{}' takes one value", key));
    if (key == "iteration") {
      c.iteration = in.Number<uint64_t>(value, key);
    } else if (key == "rounds") {
      c.rounds = in.Number<uint64_t>(value, key);
    } else if (key == "tasks") {
      c.tasks = in.Number<uint64_t>(value, key);
    } else if (key == "features") {
      c.features = in.Number<uint64_t>(value, key);
    } else if (key == "samples") {
      c.samples = in.Number<uint64_t>(value, key);
    } else if (key == "objective") {
      c.objective = in.Number<double>(value, key);
    } else {
      in.Fail(fmt::format("unknown key '{}'", key));
    }
    ++seen;
  }
  if (in.line_number() == 0) throw ParseError(path, 0, "empty file");
  if (seen != kKeys) throw ParseError(path, in.line_number(), fmt::format("{} of the {} keys", seen, kKeys));
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
