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
