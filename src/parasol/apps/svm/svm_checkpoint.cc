#include "parasol/apps/svm/svm_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>

#include "parasol/core/array_file.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol::apps::svm {

namespace fs = std::filesystem;

namespace {

constexpr char kHeader[] = "parasol-svm-checkpoint";
constexpr char kPairsMagic[] = "PSSVMP01";
constexpr char kCurrentMagic[] = "PSSVMC01";
constexpr uint64_t kPerPair = 3;  // rho, objective, iterations

std::string PairsName(size_t done) { return fmt::format("pairs-{}.bin", done); }
std::string CurrentName(size_t pair, uint64_t iterations) {
  return fmt::format("current-{}-{}.bin", pair, iterations);
}
std::string PathIn(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

// The array files of this checkpoint's folder that svm.txt does not name.
void RemoveStale(const std::string& dir, const std::string& pairs, const std::string& current) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool ours = name.ends_with(".bin") && (name.starts_with("pairs-") || name.starts_with("current-"));
    if (ours && name != pairs && name != current) fs::remove(e.path(), ec);
  }
}

std::string KeyMismatch(const SvmCheckpointKey& a, const SvmCheckpointKey& b) {
  if (a.samples != b.samples || a.features != b.features || a.classes != b.classes ||
      a.data_fingerprint != b.data_fingerprint) {
    return fmt::format(
        "it was trained on {} samples of {} features in {} classes (fingerprint {:016x}); "
        "the data has {}, {}, {} ({:016x})",
        a.samples, a.features, a.classes, a.data_fingerprint, b.samples, b.features, b.classes,
        b.data_fingerprint);
  }
  if (a.kernel.type != b.kernel.type || a.kernel.gamma != b.kernel.gamma ||
      a.kernel.coef0 != b.kernel.coef0 || a.kernel.degree != b.kernel.degree) {
    return fmt::format(
        "its kernel is {} (gamma {:g}, coef0 {:g}, degree {}); this run's is {} ({:g}, {:g}, {})",
        KernelName(a.kernel.type), a.kernel.gamma, a.kernel.coef0, a.kernel.degree, KernelName(b.kernel.type),
        b.kernel.gamma, b.kernel.coef0, b.kernel.degree);
  }
  if (a.c != b.c) return fmt::format("it was trained with C {:g}; this run has {:g}", a.c, b.c);
  return "";
}

}  // namespace

void WriteSvmCheckpoint(FileSystem& fs, const std::string& dir, const SvmCheckpoint& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create the checkpoint folder: {}", dir, ec.message()));
  std::vector<double> pairs;
  for (const SvmCheckpoint::Pair& p : c.done)
    pairs.insert(pairs.end(), {p.rho, p.objective, static_cast<double>(p.iterations)});
  for (const SvmCheckpoint::Pair& p : c.done) pairs.insert(pairs.end(), p.alpha.begin(), p.alpha.end());
  const std::string pairs_name = PairsName(c.done.size());
  WriteArrayFile(fs, PathIn(dir, pairs_name), kPairsMagic, pairs);
  std::string current_name;
  if (!c.current_alpha.empty()) {
    current_name = CurrentName(c.done.size(), c.current_iterations);
    WriteArrayFile(fs, PathIn(dir, current_name), kCurrentMagic, c.current_alpha);
  }
  const SvmCheckpointKey& k = c.key;
  KeyValueWriter(kHeader, 1)
      .Add("samples", k.samples)
      .Add("features", k.features)
      .Add("classes", k.classes)
      .Add("fingerprint", k.data_fingerprint)
      .Add("kernel", KernelName(k.kernel.type))
      .Add("gamma", k.kernel.gamma)
      .Add("coef0", k.kernel.coef0)
      .Add("degree", k.kernel.degree)
      .Add("c", k.c)
      .Add("pairs_done", c.done.size())
      .Add("current_iterations", c.current_alpha.empty() ? 0 : c.current_iterations)
      .Write(fs, PathIn(dir, "svm.txt"));
  RemoveStale(dir, pairs_name, current_name);
}

SvmCheckpoint ReadSvmCheckpoint(const std::string& dir, const SvmCheckpointKey& key,
                                std::span<const uint64_t> pair_samples) {
  const KeyValueFile f =
      KeyValueFile::Read(PathIn(dir, "svm.txt"), kHeader, 1,
                         {"samples", "features", "classes", "fingerprint", "kernel", "gamma", "coef0",
                          "degree", "c", "pairs_done", "current_iterations"});
  SvmCheckpoint c;
  c.key.samples = f.Number<uint64_t>("samples");
  c.key.features = f.Number<uint64_t>("features");
  c.key.classes = f.Number<uint64_t>("classes");
  c.key.data_fingerprint = f.Number<uint64_t>("fingerprint");
  try {
    c.key.kernel.type = ParseKernelType(f.Text("kernel"));
  } catch (const InvalidArgumentError& e) {
    f.Fail("kernel", e.what());
  }
  c.key.kernel.gamma = f.Number<double>("gamma");
  c.key.kernel.coef0 = f.Number<double>("coef0");
  c.key.kernel.degree = f.Number<int>("degree");
  c.key.c = f.Number<double>("c");
  if (const std::string why = KeyMismatch(c.key, key); !why.empty())
    throw InvalidArgumentError(fmt::format("{}: a checkpoint of another problem: {}", dir, why));
  const uint64_t done = f.NumberIn<uint64_t>("pairs_done", 0, pair_samples.size());
  c.current_iterations = f.Number<uint64_t>("current_iterations");
  uint64_t values = kPerPair * done;
  for (uint64_t p = 0; p < done; ++p) values += pair_samples[p];
  const std::vector<double> pairs = ReadArrayFile(PathIn(dir, PairsName(done)), kPairsMagic, values);
  const double* alpha = pairs.data() + kPerPair * done;
  for (uint64_t p = 0; p < done; ++p) {
    const double* head = pairs.data() + kPerPair * p;
    c.done.push_back({.rho = head[0],
                      .objective = head[1],
                      .iterations = static_cast<uint64_t>(head[2]),
                      .alpha = std::vector<double>(alpha, alpha + pair_samples[p])});
    alpha += pair_samples[p];
  }
  if (c.current_iterations > 0) {
    if (done == pair_samples.size()) f.Fail("current_iterations", "every machine is done; none is under way");
    c.current_alpha = ReadArrayFile(PathIn(dir, CurrentName(done, c.current_iterations)), kCurrentMagic,
                                    pair_samples[done]);
  }
  return c;
}

}  // namespace parasol::apps::svm
