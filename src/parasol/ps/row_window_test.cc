// Rows read one-sided from their shard's memory: a read returns what the owner published, with
// the batch of the reader's that is in it and the shard's clock; a row the owner is writing is
// not returned until the write ends (a deadline passing names the shard); reads while the owner
// keeps writing are never torn. Ranks are threads over the in-process transport, whose gets copy
// the owner's memory while it writes, as a remote NIC would.
#include "parasol/ps/row_window.h"

#include <atomic>
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TableConfig Config(DType dtype, uint64_t width, uint64_t rows) {
  return {.id = 4,
          .dtype = dtype,
          .width = width,
          .num_rows = rows,
          .consistency = Consistency::kBsp,
          .partitioning = Partitioning::kRange,
          .one_sided_reads = true};
}

Row DoubleRow(std::vector<double> values) {
  Row r(RowKind::kDense, DType::kFloat64, values.size());
  for (size_t i = 0; i < values.size(); ++i) r.Add<double>(i, values[i]);
  return r;
}

void RunTwoRanks(const std::function<void(comm::Context&)>& fn) {
  comm::InProcessWorld world(2);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, fn));
}

TEST(RowWindow, ReadsWhatTheOwnerPublishedWithTheReadersBatchInIt) {
  std::atomic<bool> published{false}, read{false};
  RunTwoRanks([&](comm::Context& ctx) {
    // 9 rows: shard 0 holds 5, the reader 4 (a layout read with the reader's own block is wrong).
    RowWindow w(ctx.transport(), Config(DType::kFloat64, 3, 9), Deadline::After(10s));
    EXPECT_EQ(w.FirstRow(1), 5u);
    if (ctx.rank() == 0) {
      w.Publish(2, DoubleRow({1, 2, 3}), /*src=*/1, /*seq=*/7);
      w.Publish(4, DoubleRow({4, 5, 6}), /*src=*/0, /*seq=*/9);
      w.Publish(4, DoubleRow({4, 5, 6.5}), /*src=*/0, /*seq=*/10);
      w.PublishClock(3);
      published = true;
      comm::testing::WaitUntil([&] { return read.load(); }, "the reader");
    } else {
      comm::testing::WaitUntil([&] { return published.load(); }, "the owner");
      const std::vector<uint64_t> rows{2, 3, 4};
      RowWindow::Result r = w.Read(0, rows, Deadline::After(10s));
      EXPECT_EQ(r.clock, 3u);
      ASSERT_EQ(r.values.size(), 3u);
      EXPECT_EQ(r.values[0].Get<double>(1), 2.0);
      EXPECT_EQ(r.values[1].Get<double>(0), 0.0);  // never written: zero
      EXPECT_EQ(r.values[2].Get<double>(2), 6.5);
      EXPECT_EQ(r.applied, (std::vector<uint64_t>{7, 0, 0}));  // rank 0's batches are not rank 1's
      EXPECT_EQ(r.retries, 0u);
      EXPECT_THROW(w.Read(0, std::vector<uint64_t>{5}, Deadline::After(10s)), InvalidArgumentError);
      read = true;
    }
    w.Close(Deadline::After(10s));
  });
}

TEST(RowWindow, ARowUnderWriteIsReadOnlyOnceTheWriteEnds) {
  std::atomic<int> step{0};
  RunTwoRanks([&](comm::Context& ctx) {
    RowWindow w(ctx.transport(), Config(DType::kFloat64, 2, 4), Deadline::After(10s));
    if (ctx.rank() == 0) {
      w.Publish(1, DoubleRow({1, 1}), 1, 1);
      w.BeginWrite(1);
      step = 1;
      comm::testing::WaitUntil([&] { return step.load() == 2; }, "the first read");
      w.EndWrite(1);
      step = 3;
    } else {
      comm::testing::WaitUntil([&] { return step.load() == 1; }, "the write");
      const std::vector<uint64_t> rows{0, 1};
      try {
        w.Read(0, rows, Deadline::After(50ms));
        ADD_FAILURE() << "a row under write was read";
      } catch (const TimeoutError& e) {
        EXPECT_THAT(e.what(), HasSubstr("one-sided read of row 1"));
        EXPECT_THAT(e.what(), HasSubstr("shard 0 (rank 0) was still writing it"));
      }
      step = 2;
      comm::testing::WaitUntil([&] { return step.load() == 3; }, "the end of the write");
      RowWindow::Result r = w.Read(0, rows, Deadline::After(10s));
      EXPECT_EQ(r.values[1].Get<double>(0), 1.0);
      EXPECT_EQ(r.applied[1], 1u);
    }
    w.Close(Deadline::After(10s));
  });
}

// The owner writes row 0 as k in every column, k = 1, 2, ..., in bursts of 50 while the reader
// reads it (after each burst it waits for one more read to end, so that reads fall inside the
// bursts however slow the build): every read holds one k in all its columns, and k never goes back.
TEST(RowWindow, ReadsWhileTheOwnerWritesAreNeverTorn) {
  constexpr int64_t kWrites = 20000;
  constexpr uint64_t kWidth = 256;
  std::atomic<uint64_t> reads{0};
  std::atomic<bool> done{false};
  RunTwoRanks([&](comm::Context& ctx) {
    RowWindow w(ctx.transport(), Config(DType::kInt64, kWidth, 2), Deadline::After(10s));
    if (ctx.rank() == 0) {
      Row row(RowKind::kDense, DType::kInt64, kWidth);
      for (int64_t k = 1; k <= kWrites; ++k) {
        for (uint64_t c = 0; c < kWidth; ++c) row.Add<int64_t>(c, 1);
        w.Publish(0, row, 1, static_cast<uint64_t>(k));
        if (k % 50 == 0) {
          const uint64_t before = reads.load();
          comm::testing::WaitUntil([&] { return reads.load() > before || done.load(); }, "a read");
        }
      }
      comm::testing::WaitUntil([&] { return done.load(); }, "the reader");
    } else {
      int64_t last = 0;
      const std::vector<uint64_t> rows{0};
      while (last < kWrites) {
        RowWindow::Result r = w.Read(0, rows, Deadline::After(10s));
        const int64_t k = r.values[0].Get<int64_t>(0);
        for (uint64_t c = 1; c < kWidth; ++c)
          ASSERT_EQ(r.values[0].Get<int64_t>(c), k) << "torn at column " << c;
        ASSERT_EQ(r.applied[0], static_cast<uint64_t>(k)) << "the batch number and the values disagree";
        ASSERT_GE(k, last);
        last = k;
        ++reads;
      }
      EXPECT_GE(reads.load(), static_cast<uint64_t>(kWrites / 50));
      done = true;
    }
    w.Close(Deadline::After(10s));
  });
}

}  // namespace
}  // namespace parasol::ps
