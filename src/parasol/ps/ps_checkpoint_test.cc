// Checkpoints: a job stopped at a clock boundary and resumed from its checkpoint ends with the
// same tables as a job that ran through; damaged or foreign checkpoints are refused by name.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/faulty_file_system.h"
#include "parasol/core/test_dir.h"
#include "parasol/ps/checkpoint.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr uint64_t kRows = 12;
constexpr int kWorkers = 2;

// Each worker's update depends on what it reads of its own column, which it alone changes:
// reads of it are exact under any model, so a restored value that is off changes the outcome.
TableConfig CountsTable() {
  return {.id = 1,
          .dtype = DType::kInt64,
          .width = 8,
          .num_rows = kRows,
          .consistency = Consistency::kSsp,
          .staleness = 1};
}
TableConfig SparseTable() {
  return {.id = 2,
          .kind = RowKind::kSparse,
          .dtype = DType::kFloat64,
          .width = 1000,
          .num_rows = kRows,
          .consistency = Consistency::kSsp,
          .staleness = 2};
}

struct JobOptions {
  int ranks = 2;
  int first_clock = 0;  // resume from `resume` when > 0
  int last_clock = 10;
  std::string checkpoint;  // write one at last_clock
  std::string resume;
  // Rank 1's checkpoints are written through it (each rank is a process with a disk of its own: a
  // simulated crash of rank 1 must not fail rank 0's writes, as a fault shared by both would).
  FileSystem* fs = nullptr;
  // A checkpoint that fails is expected: its errors (a line each) land here instead of failing the test.
  std::string* checkpoint_error = nullptr;
};

// Final contents of both tables: row -> column -> value.
using Tables = std::map<std::pair<uint32_t, uint64_t>, std::map<uint64_t, double>>;

Tables RunJob(const JobOptions& o) {
  comm::InProcessWorld world(o.ranks);
  Tables result;
  std::mutex error_mu;  // every rank's workers write the one checkpoint_error
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = kWorkers,
                             .timeout_ms = 20s,
                             .file_system = ctx.rank() == 1 ? o.fs : nullptr});
    ps.CreateTable(CountsTable());
    ps.CreateTable(SparseTable());
    std::vector<std::thread> threads;
    for (int i = 0; i < kWorkers; ++i) {
      threads.emplace_back([&, i] {
        auto w = ps.CreateWorker(i);
        auto counts = w->GetTable<int64_t>(1);
        auto sparse = w->GetTable<double>(2);
        int64_t start = o.resume.empty() ? 0 : static_cast<int64_t>(w->Restore(o.resume));
        EXPECT_EQ(start, o.first_clock);
        const auto me = static_cast<uint64_t>(ctx.rank() * kWorkers + i);
        for (int64_t c = start; c < o.last_clock; ++c) {
          for (uint64_t row = me % 3; row < kRows; row += 3) {
            int64_t own = counts.Get(row)[me];
            counts.Inc(row, me, own % 11 + static_cast<int64_t>(row) + c);
            sparse.Inc(row, (me * 131 + static_cast<uint64_t>(c) * 17) % 1000,
                       0.25 * static_cast<double>(c + 1));
          }
          w->Clock();
        }
        try {
          if (!o.checkpoint.empty()) w->Checkpoint(o.checkpoint);
        } catch (const IoError& e) {
          if (o.checkpoint_error == nullptr) throw;
          std::lock_guard<std::mutex> lock(error_mu);
          *o.checkpoint_error += std::string(e.what()) + "\n";  // a crash fails later writes too
        }
        w->GlobalBarrier();
        if (ctx.rank() == 0 && i == 0) {
          for (uint64_t row = 0; row < kRows; ++row) {
            auto v = counts.Get(row);
            for (uint64_t col = 0; col < 8; ++col) result[{1, row}][col] = static_cast<double>(v[col]);
            sparse.Get(row).ForEachStored([&](uint64_t col, double x) { result[{2, row}][col] = x; });
          }
        }
        w->GlobalBarrier();
      });
    }
    for (auto& t : threads) t.join();
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
  return result;
}

class PsCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::remove_all(dir_); }
  std::string Dir() const { return dir_.string(); }

  // How each of `ranks` processes' restore of `dir` into `tables` ends: the Error's message and
  // code ("accepted" and kInternal when it restored).
  struct Refusal {
    std::string message = "accepted";
    ErrorCode code = ErrorCode::kInternal;
  };
  static std::vector<Refusal> Restore(int ranks, const std::vector<TableConfig>& tables,
                                      const std::string& dir) {
    std::vector<Refusal> out(static_cast<size_t>(ranks));
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 20s});
      for (const TableConfig& t : tables) ps.CreateTable(t);
      auto w = ps.CreateWorker(0);
      try {
        w->Restore(dir);
      } catch (const Error& e) {
        out[static_cast<size_t>(ctx.rank())] = {e.what(), e.code()};
      }
      ps.Shutdown();
    }));
    return out;
  }

  TestDir dir_{"ps_ckpt"};
};

TEST_F(PsCheckpoint, ResumedJobEndsWithTheSameTables) {
  Tables straight = RunJob({.last_clock = 10});
  ASSERT_EQ(straight.size(), 2 * kRows);
  RunJob({.last_clock = 6, .checkpoint = Dir()});
  EXPECT_TRUE(std::filesystem::exists(dir_ / "MANIFEST"));
  EXPECT_TRUE(std::filesystem::exists(ShardFile(Dir(), 1, 6)));
  Tables resumed = RunJob({.first_clock = 6, .last_clock = 10, .resume = Dir()});
  EXPECT_EQ(resumed, straight);
  // A checkpoint written by 2 processes resumes on 3: rows move to their new shards. Workers
  // 0-3 do what they did before, so their columns and entries end the same; workers 4 and 5 add
  // their own.
  Tables resharded = RunJob({.ranks = 3, .first_clock = 6, .last_clock = 10, .resume = Dir()});
  for (uint64_t row = 0; row < kRows; ++row) {
    for (uint64_t col = 0; col < 4; ++col) {
      EXPECT_EQ((resharded[{1, row}][col]), (straight[{1, row}][col])) << "row " << row << " col " << col;
    }
    for (const auto& [col, x] : straight[{2, row}]) {
      EXPECT_EQ((resharded[{2, row}][col]), x) << "sparse row " << row << " col " << col;
    }
  }
  EXPECT_GT((resharded[{1, 1}][4]), 0);
}

// Rank 0 wrote its shard of the next checkpoint and the job died before the other shards and the
// manifest: the checkpoint the manifest names still loads.
TEST_F(PsCheckpoint, ACrashBeforeTheManifestLeavesThePreviousCheckpoint) {
  Tables straight = RunJob({.last_clock = 10});
  RunJob({.last_clock = 3, .checkpoint = Dir()});
  const std::string later = Dir() + "-later";
  RunJob({.last_clock = 6, .checkpoint = later});
  std::filesystem::copy_file(ShardFile(later, 0, 6), ShardFile(Dir(), 0, 6));
  std::filesystem::remove_all(later);
  Tables resumed = RunJob({.first_clock = 3, .last_clock = 10, .resume = Dir()});
  EXPECT_EQ(resumed, straight);
}

// The next checkpoint fails while rank 1 writes its shard: a write error, a full disk, a crash
// half-way (the torn temporary stays). The error names the file, and the checkpoint before it
// still loads and resumes to the uninterrupted result.
TEST_F(PsCheckpoint, AFailedWriteLeavesThePreviousCheckpoint) {
  Tables straight = RunJob({.last_clock = 10});
  const std::string torn = ShardFile(Dir(), 1, 6) + ".tmp";
  for (FileFault fault : {FileFault::kWriteError, FileFault::kDiskFull, FileFault::kCrash}) {
    std::filesystem::remove_all(dir_);
    RunJob({.last_clock = 3, .checkpoint = Dir()});
    FaultyFileSystem fs;
    fs.Arm(fault, "shard-00001.6", 100);
    std::string error;
    RunJob({.first_clock = 3,
            .last_clock = 6,
            .checkpoint = Dir(),
            .resume = Dir(),
            .fs = &fs,
            .checkpoint_error = &error});
    EXPECT_EQ(fs.fired(), 1);
    EXPECT_THAT(error,
                HasSubstr(torn + (fault == FileFault::kCrash ? ": simulated crash" : ": write failed")));
    EXPECT_EQ(std::filesystem::exists(torn), fault == FileFault::kCrash);
    Tables resumed = RunJob({.first_clock = 3, .last_clock = 10, .resume = Dir()});
    EXPECT_EQ(resumed, straight);
  }
}

TEST_F(PsCheckpoint, DamagedCheckpointIsRefusedNamingTheFile) {
  RunJob({.last_clock = 3, .checkpoint = Dir()});
  std::string shard = ShardFile(Dir(), 0, 3);
  {
    // A byte in the last table's rows, whose sizes stay sound: only the checksum can tell.
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(shard)) - 20);
    f.put('\x7f');
  }
  for (const Refusal& r : Restore(2, {CountsTable(), SparseTable()}, Dir())) {
    EXPECT_EQ(r.code, ErrorCode::kParse);
    EXPECT_THAT(r.message, HasSubstr(shard + ": checksum mismatch"));
  }
}

TEST_F(PsCheckpoint, CheckpointOfOtherTablesIsRefused) {
  RunJob({.last_clock = 2, .checkpoint = Dir()});
  TableConfig other = CountsTable();
  other.width = 5;
  EXPECT_THAT(Restore(1, {other}, Dir())[0].message, HasSubstr("MANIFEST: table 1 differs"));
  EXPECT_THAT(Restore(1, {other}, Dir() + "/nowhere")[0].message, HasSubstr("nowhere/MANIFEST: cannot open"));
}

// A checkpoint of the hand-written shard format of older parasols is named as such.
TEST_F(PsCheckpoint, OlderFormatIsRefusedSayingSo) {
  RunJob({.last_clock = 2, .checkpoint = Dir()});
  std::string manifest;
  {
    std::ifstream in(Dir() + "/MANIFEST");
    manifest.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(manifest.rfind("format parasol-ps-checkpoint 2\n", 0), 0u);
  manifest[29] = '1';
  std::ofstream(Dir() + "/MANIFEST", std::ios::trunc) << manifest;
  EXPECT_THAT(Restore(1, {CountsTable(), SparseTable()}, Dir())[0].message,
              HasSubstr("MANIFEST:1: format 1 of an older parasol (this one reads format 2)"));
}

// A manifest that gives a key twice (two clocks: which shard files?) is refused at the second,
// before any shard file is opened (the fuzzer's finding: the reader took the last clock).
TEST_F(PsCheckpoint, AKeyGivenTwiceIsRefused) {
  RunJob({.last_clock = 2, .checkpoint = Dir()});
  std::string manifest;
  {
    std::ifstream in(Dir() + "/MANIFEST");
    manifest.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(manifest.find("\nclock 2\n"), manifest.find('\n'));
  const std::string good = manifest;
  std::ofstream(Dir() + "/MANIFEST", std::ios::trunc) << manifest + "clock 1\n";
  const std::string line = std::to_string(std::count(manifest.begin(), manifest.end(), '\n') + 1);
  EXPECT_THAT(Restore(1, {CountsTable(), SparseTable()}, Dir())[0].message,
              HasSubstr("MANIFEST:" + line + ": 'clock' given twice"));
  const size_t table = good.find("table ");
  ASSERT_NE(table, std::string::npos);
  std::ofstream(Dir() + "/MANIFEST", std::ios::trunc)
      << good + good.substr(table, good.find('\n', table) + 1 - table);
  EXPECT_THAT(Restore(1, {CountsTable(), SparseTable()}, Dir())[0].message,
              HasSubstr("'table 1' given twice"));
  std::ofstream(Dir() + "/MANIFEST", std::ios::trunc) << good;
  EXPECT_EQ(Restore(1, {CountsTable(), SparseTable()}, Dir())[0].message, "accepted");
}

TEST_F(PsCheckpoint, WorkersAtDifferentClocksCannotCheckpoint) {
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 2, .timeout_ms = 5s});
    ps.CreateTable(CountsTable());
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        auto w = ps.CreateWorker(i);
        if (i == 1) w->Clock();
        try {
          w->Checkpoint(Dir());
          ADD_FAILURE() << "checkpoint between clocks";
        } catch (const InvalidArgumentError& e) {
          EXPECT_THAT(e.what(), HasSubstr("different clocks"));
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_FALSE(std::filesystem::exists(dir_ / "MANIFEST"));
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

}  // namespace
}  // namespace parasol::ps
