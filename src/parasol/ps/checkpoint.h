// Parameter-server checkpoint files (format: docs/ps-checkpoint.md). Each shard writes
// DIR/shard-NNNNN.CLOCK.ckpt; rank 0 writes DIR/MANIFEST, which names the clock, once every shard
// has. Files are written to a temporary name and renamed, and a shard keeps its previous file until
// it has written the next one but one, so a crash at any point leaves a complete checkpoint (the
// manifest's) or none, never half of one.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"
#include "parasol/core/wire.h"
#include "parasol/ps/row.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

// A table's entry in a shard file's "tables" section.
struct ShardTable {
  uint64_t id, fingerprint, rows;
};

class CheckpointWriter {
 public:
  // Throws IoError if `dir` cannot be created.
  CheckpointWriter(FileSystem& fs, std::string dir, int shard, uint64_t clock);
  void BeginTable(const TableConfig& config, uint64_t rows);
  void AddRow(uint64_t row, const Row& value);
  // Writes the file and moves it into place. Throws IoError.
  void Commit();

 private:
  FileSystem& fs_;
  std::string dir_;
  int shard_;
  uint64_t clock_;
  std::vector<ShardTable> tables_;
  std::deque<WireWriter> rows_;  // a table's rows, encoded (a deque: no copy as tables are added)
};

// DIR/shard-NNNNN.CLOCK.ckpt
std::string ShardFile(const std::string& dir, int shard, uint64_t clock);

void WriteManifest(FileSystem& fs, const std::string& dir, uint64_t clock, int shards,
                   const std::map<uint32_t, TableConfig>& tables);

// Reads the manifest and every shard file in `dir`, calling fn(table, row, value) for each row.
// Tables must match `tables` (same configuration). Returns the checkpoint's clock. Throws
// ParseError ("file: what is wrong") for a missing, truncated, corrupt or mismatched file.
uint64_t ReadCheckpoint(const std::string& dir, const std::map<uint32_t, TableConfig>& tables,
                        const std::function<void(uint32_t, uint64_t, Row&&)>& fn);

}  // namespace parasol::ps
