#include "parasol/apps/mlr/mlr_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <span>

#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"
#include "parasol/core/section_file.h"

namespace parasol::apps::mlr {

namespace fs = std::filesystem;

void WriteMlrMeta(FileSystem& fs, const std::string& dir, const MlrCheckpointMeta& m) {
  KeyValueWriter("parasol-mlr-checkpoint", 1)
      .Add("comm", m.comm)
      .Add("epoch", m.epoch)
      .Add("steps", m.steps)
      .Add("scale", m.scale)
      .Add("classes", m.classes)
      .Add("features", m.features)
      .Write(fs, (fs::path(dir) / "mlr.txt").string());
}

MlrCheckpointMeta ReadMlrMeta(const std::string& dir) {
  const KeyValueFile f = KeyValueFile::Read((fs::path(dir) / "mlr.txt").string(), "parasol-mlr-checkpoint", 1,
                                            {"comm", "epoch", "steps", "scale", "classes", "features"});
  MlrCheckpointMeta m;
  m.comm = f.Text("comm");
  if (m.comm != "ps" && m.comm != "sfb")
    f.Fail("comm", fmt::format("comm '{}' is neither ps nor sfb", m.comm));
  m.epoch = f.Number<uint64_t>("epoch");
  m.steps = f.Number<uint64_t>("steps");
  m.scale = f.Number<double>("scale");
  if (!(m.scale > 0 && m.scale <= 1)) f.Fail("scale", "scale must be in (0, 1]");
  m.classes = f.Number<uint64_t>("classes");
  m.features = f.Number<uint64_t>("features");
  return m;
}

void WriteMlrWeights(FileSystem& fs, const std::string& dir, const std::vector<double>& v,
                     const std::vector<double>& b) {
  const uint64_t shape[2] = {b.empty() ? 0 : v.size() / b.size(), b.size()};  // features, classes
  SectionWriter w("mlr-weights");
  w.Add("shape", std::span<const uint64_t>(shape));
  w.Add("v", v);
  w.Add("b", b);
  w.Write(fs, (fs::path(dir) / "weights.bin").string());
}

void ReadMlrWeights(const std::string& dir, uint64_t features, uint64_t classes, std::vector<double>* v,
                    std::vector<double>* b) {
  const SectionReader r((fs::path(dir) / "weights.bin").string(), "mlr-weights");
  // The shape comes from the training data, not from the file: nothing is sized by it.
  const std::vector<uint64_t> shape = r.Get<uint64_t>("shape", 2);
  if (shape[0] != features || shape[1] != classes) {
    r.Fail(fmt::format("weights of {} features x {} classes; the data has {} x {}", shape[0], shape[1],
                       features, classes));
  }
  *v = r.Get<double>("v", features * classes);
  *b = r.Get<double>("b", classes);
}

}  // namespace parasol::apps::mlr
