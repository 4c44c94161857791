#include "parasol/apps/gnn/gnn_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>

#include "parasol/core/array_file.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"

namespace parasol::apps::gnn {

namespace {

namespace fs = std::filesystem;

constexpr char kHeader[] = "parasol-gnn-checkpoint";
std::string PathIn(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

}  // namespace

void WriteGnnCheckpoint(FileSystem& fs, const std::string& dir, const GnnCheckpoint& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  WriteArrayFile(fs, PathIn(dir, "params.bin"), "PSGNNPA1", c.params);
  WriteArrayFile(fs, PathIn(dir, "adam.bin"), "PSGNNAD1", c.adam);
  WriteArrayFile(fs, PathIn(dir, "best.bin"), "PSGNNBE1", c.best);
  KeyValueWriter(kHeader, 1)
      .Add("shape", c.shape)
      .Add("epoch", c.epoch)
      .Add("adam_steps", c.adam_steps)
      .Add("best_epoch", c.best_epoch)
      .Add("since_best", c.since_best)
      .Add("best_train_loss", c.best_train_loss)
      .Add("best_train_accuracy", c.best_train_accuracy)
      .Add("best_val_loss", c.best_val_loss)
      .Add("best_val_accuracy", c.best_val_accuracy)
      .Add("best_test_accuracy", c.best_test_accuracy)
      .Write(fs, PathIn(dir, "gnn.txt"));
}

GnnCheckpoint ReadGnnCheckpoint(const std::string& dir, const std::string& shape, uint64_t params) {
  const KeyValueFile f =
      KeyValueFile::Read(PathIn(dir, "gnn.txt"), kHeader, 1,
                         {"shape", "epoch", "adam_steps", "best_epoch", "since_best", "best_train_loss",
                          "best_train_accuracy", "best_val_loss", "best_val_accuracy", "best_test_accuracy"});
  GnnCheckpoint c;
  c.shape = std::string(f.Text("shape"));
  if (c.shape != shape) {
    throw InvalidArgumentError(fmt::format(
        "{}: a checkpoint of a {} model; this graph and these options make {}", dir, c.shape, shape));
  }
  c.epoch = f.Number<uint64_t>("epoch");
  c.adam_steps = f.Number<uint64_t>("adam_steps");
  c.best_epoch = f.NumberIn<uint64_t>("best_epoch", 0, c.epoch);
  c.since_best = f.NumberIn<uint64_t>("since_best", 0, c.epoch);
  c.best_train_loss = f.Number<double>("best_train_loss");
  c.best_train_accuracy = f.Number<double>("best_train_accuracy");
  c.best_val_loss = f.Number<double>("best_val_loss");
  c.best_val_accuracy = f.Number<double>("best_val_accuracy");
  c.best_test_accuracy = f.Number<double>("best_test_accuracy");
  c.params = ReadArrayFile(PathIn(dir, "params.bin"), "PSGNNPA1", params);
  c.adam = ReadArrayFile(PathIn(dir, "adam.bin"), "PSGNNAD1", 2 * params);
  c.best = ReadArrayFile(PathIn(dir, "best.bin"), "PSGNNBE1", params);
  return c;
}

}  // namespace parasol::apps::gnn
