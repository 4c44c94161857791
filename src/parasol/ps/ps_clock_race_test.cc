// Workers of one process at different clocks under a zero staleness bound (BSP, SSP(0)). A fast
// worker may ask for a row at clock c + 1 while a slower one of the same process still needs it
// at clock c; the shard answers the first only after the slower worker has clocked, so the slower
// worker's read must not wait for that answer.
#include <atomic>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps {
namespace {

using namespace std::chrono_literals;

TableConfig Table(Consistency model, uint64_t rows, uint64_t width) {
  return {.id = 1,
          .kind = RowKind::kDense,
          .dtype = DType::kInt64,
          .width = width,
          .num_rows = rows,
          .consistency = model,
          .staleness = 0};
}

// The smallest case: worker 0 reads row 0 first at clock 2; worker 1 reads it at clock 1, after
// worker 0 has asked for it. Both read row 1 every clock (it lets worker 0 reach clock 2).
void RunFirstReadAtDifferentClocks(Consistency model) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 2, .timeout_ms = 3000ms});
    ps.CreateTable(Table(model, 2, 1));
    std::atomic<bool> asked{false};
    auto body = [&](int i) {
      auto w = ps.CreateWorker(i);
      auto t = w->GetTable<int64_t>(1);
      for (int c = 0; c < 3; ++c) {
        t.Inc(1, 0, 1);
        if (i == 1 && c == 1) {
          // Worker 0 asks for row 0 at clock 2 first and waits for it (the shard cannot answer
          // before this worker clocks): this read must not wait for that answer.
          comm::testing::WaitUntil([&] { return asked && ps.client().HasWaiters(); },
                                   "worker 0 waiting for row 0 at clock 2");
          EXPECT_EQ(t.Get(0)[0], 0);
        }
        if (i == 0 && c == 2) {
          asked = true;
          EXPECT_EQ(t.Get(0)[0], 0);
        }
        // Every clock < c of both ranks' 2 workers is in, plus this worker's own clock c.
        EXPECT_GE(t.Get(1)[0], 4 * c + 1);
        w->Clock();
      }
      w->GlobalBarrier();
    };
    comm::testing::RunWorkers(2, body);
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(ClockRace, BspFirstReadOfARowAtDifferentClocks) { RunFirstReadAtDifferentClocks(Consistency::kBsp); }
TEST(ClockRace, Ssp0FirstReadOfARowAtDifferentClocks) { RunFirstReadAtDifferentClocks(Consistency::kSsp); }

// The general case, repeated: every worker reads a random few of many rows per clock (as MF's
// workers read the items their users rated), so rows are first asked for at any clock by any
// worker. Checks the bound on every read and the totals at the end.
struct RandomReads {
  Consistency model;
  int ranks;
};

void RunRandomReads(const RandomReads& p, uint64_t seed) {
  constexpr int kRaceWorkers = 3;
  constexpr int kClocks = 6;
  constexpr uint64_t kRaceRows = 64;
  const uint64_t total_workers = static_cast<uint64_t>(p.ranks * kRaceWorkers);
  comm::InProcessWorld world(p.ranks);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = kRaceWorkers, .timeout_ms = 3000ms});
    ps.CreateTable(Table(p.model, kRaceRows, total_workers));
    auto body = [&](int i) {
      auto w = ps.CreateWorker(i);
      auto t = w->GetTable<int64_t>(1);
      const uint64_t me = static_cast<uint64_t>(ctx.rank() * kRaceWorkers + i);
      std::mt19937_64 rng(seed * 1000003 + me);
      for (int c = 0; c < kClocks; ++c) {
        for (uint64_t row = 0; row < kRaceRows; ++row) t.Inc(row, me, 1);
        if (rng() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 400));
        for (int n = 0; n < 4; ++n) {
          uint64_t row = rng() % kRaceRows;
          auto v = t.Get(row);
          for (uint64_t other = 0; other < total_workers; ++other) {
            // Zero staleness: every clock < c of every worker, and this worker's clock c.
            int64_t want = other == me ? c + 1 : c;
            if (other == me)
              ASSERT_EQ(v[other], want) << "row " << row << " clock " << c;
            else
              ASSERT_GE(v[other], want) << "row " << row << " clock " << c << " column " << other;
          }
        }
        w->Clock();
      }
      w->GlobalBarrier();
      auto v = t.Get(kRaceRows - 1);
      for (uint64_t other = 0; other < total_workers; ++other) EXPECT_EQ(v[other], kClocks);
    };
    comm::testing::RunWorkers(kRaceWorkers, body);
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

class ClockRaceRepeated : public ::testing::TestWithParam<RandomReads> {};

TEST_P(ClockRaceRepeated, EveryRunEndsWithEveryUpdate) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_NO_THROW(RunRandomReads(GetParam(), seed));
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ClockRaceRepeated,
                         ::testing::Values(RandomReads{Consistency::kBsp, 2},
                                           RandomReads{Consistency::kSsp, 2},
                                           RandomReads{Consistency::kBsp, 4},
                                           RandomReads{Consistency::kSsp, 4}),
                         [](const auto& test) {
                           return std::string(ConsistencyName(test.param.model)) + "0_" +
                                  std::to_string(test.param.ranks) + "ranks";
                         });

}  // namespace
}  // namespace parasol::ps
