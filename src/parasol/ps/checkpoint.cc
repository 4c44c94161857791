#include "parasol/ps/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/section_file.h"
#include "parasol/core/text_fields.h"

namespace parasol::ps {

namespace {

constexpr char kKind[] = "ps-shard";
// Version 1's shard files were hand-written (magic "PSCK"); version 2's are section files.
constexpr int kVersion = 2;
// Bounds on what a manifest may ask for, far past any real run.
constexpr int kMaxShards = 1 << 16;
constexpr size_t kMaxTables = 1 << 16;

// This shard's files other than the newest two: the newest may be one the manifest does not name
// yet (a crash between the shards' writes and the manifest's), the one before is then the one it
// names.
void RemoveOlderShardFiles(const std::string& dir, int shard) {
  const std::string prefix = fmt::format("shard-{:05}.", shard);
  std::vector<std::pair<uint64_t, std::filesystem::path>> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".ckpt")) continue;
    uint64_t clock = 0;
    std::string_view digits(name.data() + prefix.size(), name.size() - prefix.size() - 5);
    if (ParseNumber(digits, &clock)) files.emplace_back(clock, entry.path());
  }
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + 2 < files.size(); ++i) std::filesystem::remove(files[i].second, ec);  // best effort
}

void WriteAtomically(FileSystem& fs, const std::string& path, const void* data, size_t size) {
  WriteFileAtomically(fs, path, [&](std::ostream& out) {
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  });
}

struct Manifest {
  uint64_t clock = 0;
  int shards = 0;
  std::map<uint32_t, uint64_t> fingerprints;
};

Manifest ReadManifest(const std::string& dir) {
  std::string path = dir + "/MANIFEST";
  if (!std::filesystem::exists(path)) throw ParseError(path, 0, "cannot open checkpoint manifest");
  LineReader in(path, {.skip_blank = true});
  Manifest m;
  bool have_format = false;
  std::set<std::string, std::less<>> seen;  // a key given twice would leave readers to pick one
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view key = NextField(line, pos), a = NextField(line, pos), b = NextField(line, pos);
    // A table's line ends with its description, for people; the others have nothing more.
    if (key != "table" && !NextField(line, pos).empty()) in.Fail("too many fields");
    const std::string once = key == "table" ? fmt::format("table {}", a) : std::string(key);
    if (!seen.insert(once).second) in.Fail(fmt::format("'{}' given twice", once));
    if (key == "format") {
      if (a != "parasol-ps-checkpoint") in.Fail("not a parasol parameter-server checkpoint");
      if (b != std::to_string(kVersion)) {
        in.Fail(
            fmt::format("format {} of an older parasol (this one reads format {}): resume it with the "
                        "parasol that wrote it",
                        b, kVersion));
      }
      have_format = true;
    } else if (key == "clock" && b.empty()) {
      m.clock = in.Number<uint64_t>(a, "clock");
    } else if (key == "shards" && b.empty()) {
      m.shards = in.NumberIn<int>(a, "shards", 1, kMaxShards);
    } else if (key == "table") {
      const uint32_t id = in.Number<uint32_t>(a, "table id");
      uint64_t fp = 0;
      if (!ParseNumber(b, &fp, 16)) {
        in.Fail("'table' needs an id and a hexadecimal fingerprint");
      }
      if (m.fingerprints.size() >= kMaxTables) in.Fail(fmt::format("more than {} tables", kMaxTables));
      m.fingerprints[id] = fp;
    } else {
      in.Fail(fmt::format("unknown key '{}' (or wrong number of values)", key));
    }
  }
  if (!have_format || m.shards == 0)
    throw ParseError(path, 0, "incomplete manifest (format and shards are required)");
  return m;
}

std::string RowsSection(uint32_t table) { return fmt::format("t{}", table); }

}  // namespace

std::string ShardFile(const std::string& dir, int shard, uint64_t clock) {
  return fmt::format("{}/shard-{:05}.{}.ckpt", dir, shard, clock);
}

CheckpointWriter::CheckpointWriter(FileSystem& fs, std::string dir, int shard, uint64_t clock)
    : fs_(fs), dir_(std::move(dir)), shard_(shard), clock_(clock) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create checkpoint directory: {}", dir_, ec.message()));
}

void CheckpointWriter::BeginTable(const TableConfig& config, uint64_t rows) {
  tables_.push_back({config.id, config.Fingerprint(), rows});
  rows_.emplace_back();
}

void CheckpointWriter::AddRow(uint64_t row, const Row& value) {
  rows_.back().Put(row);
  value.Encode(rows_.back());
}

void CheckpointWriter::Commit() {
  SectionWriter w(kKind);
  w.AddValue("clock", clock_);
  w.Add("tables", tables_);
  for (size_t i = 0; i < tables_.size(); ++i) {
    w.Add(RowsSection(static_cast<uint32_t>(tables_[i].id)), rows_[i].bytes().data(), 1, rows_[i].size());
  }
  w.Write(fs_, ShardFile(dir_, shard_, clock_));
  RemoveOlderShardFiles(dir_, shard_);
}

void WriteManifest(FileSystem& fs, const std::string& dir, uint64_t clock, int shards,
                   const std::map<uint32_t, TableConfig>& tables) {
  std::string text =
      fmt::format("format parasol-ps-checkpoint {}\nclock {}\nshards {}\n", kVersion, clock, shards);
  for (const auto& [id, c] : tables)
    text += fmt::format("table {} {:016x} {}\n", id, c.Fingerprint(), c.Describe());
  WriteAtomically(fs, dir + "/MANIFEST", text.data(), text.size());
}

uint64_t ReadCheckpoint(const std::string& dir, const std::map<uint32_t, TableConfig>& tables,
                        const std::function<void(uint32_t, uint64_t, Row&&)>& fn) {
  Manifest m = ReadManifest(dir);
  for (const auto& [id, fp] : m.fingerprints) {
    auto it = tables.find(id);
    if (it == tables.end() || it->second.Fingerprint() != fp) {
      throw ParseError(dir + "/MANIFEST", 0,
                       fmt::format("table {} differs from the table of that id in this job", id));
    }
  }
  for (int shard = 0; shard < m.shards; ++shard) {
    const SectionReader in(ShardFile(dir, shard, m.clock), kKind);
    if (in.GetValue<uint64_t>("clock") != m.clock) in.Fail("clock differs from the manifest's");
    for (const ShardTable& t : in.Get<ShardTable>("tables")) {
      auto it = tables.find(static_cast<uint32_t>(t.id));
      if (t.id > UINT32_MAX || it == tables.end() || it->second.Fingerprint() != t.fingerprint)
        in.Fail(fmt::format("table {} differs from the table of that id in this job", t.id));
      const TableConfig& c = it->second;
      const std::vector<std::byte> bytes = in.Get<std::byte>(RowsSection(c.id));
      try {
        WireReader r(bytes.data(), bytes.size(), -1);
        for (uint64_t i = 0; i < t.rows; ++i) {
          auto row = r.Get<uint64_t>();
          if (row >= c.num_rows) in.Fail(fmt::format("row {} out of range for table {}", row, c.id));
          fn(c.id, row, Row::Decode(r, c.kind, c.dtype, c.width));
        }
        if (!r.done()) in.Fail(fmt::format("trailing bytes after the rows of table {}", c.id));
      } catch (const MalformedMessage& e) {
        in.Fail(fmt::format("table {}: malformed: {}", c.id, e.what()));
      }
    }
  }
  return m.clock;
}

}  // namespace parasol::ps
