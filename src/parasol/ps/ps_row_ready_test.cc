// Tables of one update per row per clock: a shard answers a read of a row as soon as every
// process's update of it is in, without waiting for their clocks; the reads are still
// within BSP's and SSP's bounds; a second update of a row in one clock is refused.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps {
namespace {

using namespace std::chrono_literals;

TableConfig OncePerClock(Consistency model, uint32_t staleness) {
  return {.id = 7,
          .dtype = DType::kFloat64,
          .width = 3,
          .num_rows = 40,
          .consistency = model,
          .staleness = staleness,
          .one_update_per_clock = true};
}

// Rank 1 pushes its update and then waits, without clocking, until rank 0 has read the row: the
// read after rank 0's clock is answered from the row's updates alone. A shard that waited for
// rank 1's clock would never answer (rank 0 would time out).
TEST(RowReady, AReadIsAnsweredOnceEveryProcessPushedTheRowBeforeItsClock) {
  comm::InProcessWorld world(2);
  std::atomic<bool> pushed{false}, read{false};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 20s});
    ps.CreateTable(OncePerClock(Consistency::kBsp, 0));
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<double>(7);
    const std::vector<uint64_t> rows = {5, 6};  // on either shard: one of them is remote
    for (uint64_t row : rows) t.Inc(row, 1, ctx.rank() + 1.0);
    w->Flush();
    t.PrefetchNextClock(rows);
    if (ctx.rank() == 1) {
      pushed = true;
      comm::testing::WaitUntil([&] { return read.load(); }, "rank 0 to read before rank 1's clock", 15s);
    } else {
      comm::testing::WaitUntil([&] { return pushed.load(); }, "rank 1 to push");
      w->Clock();
      for (uint64_t row : rows) EXPECT_EQ(t.Get(row)[1], 3.0) << "row " << row;
      read = true;
    }
    if (ctx.rank() == 1) w->Clock();
    w->GlobalBarrier();
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

// Every read sees the updates its bound requires, with reads asked for ahead (as a training step
// does) and without: rank r adds (r + 1) * (c + 1) to every row in clock c; a read in clock c sees
// every update of clocks < c - s (BSP: s = 0) and none of clocks > c + s, which no process can have
// reached yet. A row answered before every process's update of it was in fails the first check.
void ExpectExactReads(int ranks, Consistency model, uint32_t staleness, int clocks) {
  comm::InProcessWorld world(ranks);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 20s});
    ps.CreateTable(OncePerClock(model, staleness));
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<double>(7);
    std::vector<uint64_t> rows(40);
    for (uint64_t r = 0; r < rows.size(); ++r) rows[r] = r;
    const double per_clock = ranks * (ranks + 1) / 2.0;                   // sum over ranks of (r + 1)
    auto through = [&](int c) { return per_clock * c * (c + 1) / 2.0; };  // all updates of clocks < c
    for (int c = 0; c < clocks; ++c) {
      for (uint64_t row : rows) {
        const double v = t.Get(row)[0];
        const int oldest = std::max(0, c - static_cast<int>(staleness));
        ASSERT_GE(v, through(oldest)) << "rank " << ctx.rank() << " clock " << c << " row " << row;
        ASSERT_LE(v, through(c + static_cast<int>(staleness) + 1)) << "rank " << ctx.rank() << " clock " << c;
      }
      for (uint64_t row : rows) t.Inc(row, 0, (ctx.rank() + 1.0) * (c + 1));
      if (c % 2 == 0) {  // half the clocks ask ahead, as a training step does
        w->Flush();
        t.PrefetchNextClock(rows);
      }
      w->Clock();
    }
    w->GlobalBarrier();
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(RowReady, BspReadsHoldEveryEarlierClockOnTwoAndFourRanks) {
  for (int i = 0; i < 20; ++i) ExpectExactReads(2, Consistency::kBsp, 0, 8);
  for (int i = 0; i < 10; ++i) ExpectExactReads(4, Consistency::kBsp, 0, 8);
}

TEST(RowReady, SspReadsStayWithinTheirBound) {
  for (int i = 0; i < 10; ++i) ExpectExactReads(2, Consistency::kSsp, 1, 8);
  for (int i = 0; i < 5; ++i) ExpectExactReads(4, Consistency::kSsp, 2, 8);
}

// A process that sends a row twice in one clock breaks the promise the early answers rest on:
// its shard refuses the second batch and the process's next call fails, naming the row.
TEST(RowReady, ASecondUpdateOfARowInOneClockIsRefused) {
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 5s});
    ps.CreateTable(OncePerClock(Consistency::kBsp, 0));
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<double>(7);
    t.Inc(3, 0, 1.0);
    w->Flush();
    t.Inc(3, 0, 1.0);
    w->Flush();
    try {
      w->Clock();
      (void)t.Get(4);
      ADD_FAILURE() << "the second update was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("updated row 3 of table 7"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("twice in clock 0"));
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(RowReady, OnlyBoundedModelsWithOneWorkerPerProcess) {
  TableConfig essp = OncePerClock(Consistency::kEssp, 1);
  EXPECT_THROW(essp.Validate(), InvalidArgumentError);
  TableConfig vap = OncePerClock(Consistency::kVap, 1);
  vap.vap_threshold = 1;
  EXPECT_THROW(vap.Validate(), InvalidArgumentError);
  OncePerClock(Consistency::kSsp, 2).Validate();
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 2, .timeout_ms = 5s});
    EXPECT_THROW(ps.CreateTable(OncePerClock(Consistency::kBsp, 0)), InvalidArgumentError);
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

}  // namespace
}  // namespace parasol::ps
