#include "parasol/apps/mlr/mlr_checkpoint.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "parasol/core/atomic_file.h"
#include "parasol/core/checksum.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol::apps::mlr {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'P', 'S', 'M', 'L', 'R', 'W', '0', '1'};

struct WeightsHeader {
  char magic[8];
  uint64_t features, classes;
};

}  // namespace

void WriteMlrMeta(const std::string& dir, const MlrCheckpointMeta& m) {
  WriteFileAtomically((fs::path(dir) / "mlr.txt").string(), [&](std::ostream& out) {
    out << fmt::format(
        "parasol-mlr-checkpoint 1\ncomm {}\nepoch {}\nsteps {}\nscale {:.17g}\nclasses {}\nfeatures {}\n",
        m.comm, m.epoch, m.steps, m.scale, m.classes, m.features);
  });
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

void WriteMlrWeights(const std::string& dir, const std::vector<double>& v, const std::vector<double>& b) {
  WeightsHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.classes = b.size();
  h.features = b.empty() ? 0 : v.size() / b.size();
  std::string bytes(sizeof(h) + (v.size() + b.size()) * sizeof(double) + sizeof(uint64_t), '\0');
  char* at = bytes.data();
  std::memcpy(at, &h, sizeof(h));
  std::memcpy(at += sizeof(h), v.data(), v.size() * sizeof(double));
  std::memcpy(at += v.size() * sizeof(double), b.data(), b.size() * sizeof(double));
  const uint64_t sum = Fnv1a64(bytes.data(), bytes.size() - sizeof(sum));
  std::memcpy(bytes.data() + bytes.size() - sizeof(sum), &sum, sizeof(sum));
  WriteFileAtomically((fs::path(dir) / "weights.bin").string(), [&](std::ostream& out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

void ReadMlrWeights(const std::string& dir, uint64_t features, uint64_t classes, std::vector<double>* v,
                    std::vector<double>* b) {
  const std::string path = (fs::path(dir) / "weights.bin").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open", path));
  // The expected size comes from the training data, not from the file: nothing is sized by it.
  const uint64_t want = sizeof(WeightsHeader) + (features + 1) * classes * sizeof(double) + sizeof(uint64_t);
  std::error_code ec;
  if (fs::file_size(path, ec) != want || ec) {
    throw ParseError(path, 0,
                     fmt::format("{} bytes; {} features x {} classes need {}", fs::file_size(path, ec),
                                 features, classes, want));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WeightsHeader h{};
  if (bytes.size() >= sizeof(h)) std::memcpy(&h, bytes.data(), sizeof(h));
  if (bytes.size() < sizeof(h) || std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    throw ParseError(path, 0, "not a parasol MLR weights file");
  if (h.features != features || h.classes != classes) {
    throw ParseError(path, 0,
                     fmt::format("weights of {} features x {} classes; the data has {} x {}", h.features,
                                 h.classes, features, classes));
  }
  uint64_t sum = 0;
  if (bytes.size() == want) std::memcpy(&sum, bytes.data() + bytes.size() - sizeof(sum), sizeof(sum));
  if (bytes.size() != want || Fnv1a64(bytes.data(), bytes.size() - sizeof(sum)) != sum)
    throw ParseError(path, 0, "checksum mismatch: the file is corrupt or truncated");
  const char* at = bytes.data() + sizeof(h);
  v->resize(features * classes);
  b->resize(classes);
  std::memcpy(v->data(), at, v->size() * sizeof(double));
  std::memcpy(b->data(), at + v->size() * sizeof(double), b->size() * sizeof(double));
}

}  // namespace parasol::apps::mlr
