#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps {
namespace {

TEST(Ps, TwoRanksTwoWorkersSumIncrements) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 2, .timeout_ms = std::chrono::milliseconds(10000)});
    ps.CreateTable({.id = 1,
                    .kind = RowKind::kDense,
                    .dtype = DType::kFloat64,
                    .width = 4,
                    .num_rows = 100,
                    .consistency = Consistency::kSsp,
                    .staleness = 1});
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        auto w = ps.CreateWorker(i);
        auto t = w->GetTable<double>(1);
        for (int c = 0; c < 5; ++c) {
          for (uint64_t row = 0; row < 10; ++row) t.Inc(row, static_cast<uint64_t>(i), 1.0);
          w->Clock();
        }
        w->GlobalBarrier();
        w->Clock();
        w->Clock();  // two more clocks: reads at clock 7 with s=1 see everything up to clock 5
        auto v = t.Get(3);
        EXPECT_EQ(v[static_cast<uint64_t>(i)], 10.0);  // 5 clocks x 2 ranks
        w->GlobalBarrier();
      });
    }
    for (auto& th : threads) th.join();
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

}  // namespace
}  // namespace parasol::ps

namespace parasol::ps {
namespace {

TEST(ConsistencySpec, ParsesEveryModelAndRefusesTheRest) {
  auto s = ParseConsistencySpec("ssp:3");
  EXPECT_EQ(s.model, Consistency::kSsp);
  EXPECT_EQ(s.staleness, 3u);
  auto v = ParseConsistencySpec("vap:2:0.5");
  EXPECT_EQ(v.model, Consistency::kVap);
  EXPECT_EQ(v.staleness, 2u);
  EXPECT_EQ(v.vap_threshold, 0.5);
  EXPECT_EQ(ParseConsistencySpec("bsp").model, Consistency::kBsp);
  EXPECT_EQ(ParseConsistencySpec("essp:10").ToString(), "essp:10");
  EXPECT_EQ(v.ToString(), "vap:2:0.5");
  for (const char* bad : {"ssp", "bsp:1", "ssp:x", "vap:2", "vap:2:0", "lazy:1", "", "ssp:3:1", "essp:-1",
                          "vap:3:inf", "vap:3:nan", "vap:3:0x1p3"}) {
    EXPECT_THROW(ParseConsistencySpec(bad), InvalidArgumentError) << bad;
  }
}

}  // namespace
}  // namespace parasol::ps
