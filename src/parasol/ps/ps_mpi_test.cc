// The parameter server over MPI, under `mpirun -np N` (2 and 4) and as a singleton: the same
// consistency workload as the in-process tests, checkpoint and resume, disagreeing ranks.
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/context.h"
#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"
#include "parasol/ps/testing_workloads.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

comm::MpiRuntime* g_runtime = nullptr;

class MpiPs : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<comm::Context>(g_runtime->CreateWorldTransport(),
                                           comm::ContextOptions{.timeout_ms = 60s});
  }
  std::unique_ptr<comm::Context> ctx_;
};

struct ModelCase {
  Consistency model;
  uint32_t staleness;
  double vap;
};

TEST_F(MpiPs, EveryModelRespectsItsBoundAndLosesNothing) {
  for (auto [model, staleness, vap] :
       {ModelCase{Consistency::kBsp, 0, 0}, ModelCase{Consistency::kSsp, 2, 0},
        ModelCase{Consistency::kEssp, 2, 0}, ModelCase{Consistency::kVap, 1, 2.0},
        ModelCase{Consistency::kAsp, 0, 0}}) {
    testing::CountingOptions o{
        .model = model, .staleness = staleness, .vap_threshold = vap, .slow_worker = 1};
    auto r = testing::RunCounting(*ctx_, o, nullptr);
    EXPECT_EQ(r.reads, static_cast<uint64_t>(o.workers * o.clocks * o.rows)) << ConsistencyName(model);
    if (model == Consistency::kEssp && ctx_->size() > 1) {
      EXPECT_GT(r.stats.rows_pushed, 0u) << "ESSP pushed nothing";
    }
  }
}

// A communication thread that yields instead of sleeping while workers wait changes when
// messages move, never what the workers see: the same bounds, nothing lost.
TEST_F(MpiPs, SpinningWhileWaitingKeepsTheBounds) {
  for (auto [model, staleness] : {std::pair{Consistency::kBsp, 0u}, std::pair{Consistency::kSsp, 2u}}) {
    testing::CountingOptions o{
        .model = model, .staleness = staleness, .slow_worker = 1, .spin_while_waiting = true};
    auto r = testing::RunCounting(*ctx_, o, nullptr);
    EXPECT_EQ(r.reads, static_cast<uint64_t>(o.workers * o.clocks * o.rows)) << ConsistencyName(model);
  }
}

// Rows read one-sided through MPI windows (the shards' memory) keep the bounds and lose nothing.
TEST_F(MpiPs, OneSidedReadsKeepTheBounds) {
  for (auto [model, staleness] : {std::pair{Consistency::kBsp, 0u}, std::pair{Consistency::kSsp, 2u}}) {
    testing::CountingOptions o{.model = model, .staleness = staleness, .slow_worker = 1, .one_sided = true};
    auto r = testing::RunCounting(*ctx_, o, nullptr);
    EXPECT_EQ(r.reads, static_cast<uint64_t>(o.workers * o.clocks * o.rows)) << ConsistencyName(model);
    EXPECT_EQ(r.stats.gets_sent, 0u);
    EXPECT_GT(r.stats.one_sided_rows, 0u);
  }
}

// Every rank writes its shard at clock 4; a new parameter server over the same processes resumes
// and continues to clock 6.
TEST_F(MpiPs, CheckpointAndResume) {
  int64_t id = ctx_->rank() == 0 ? static_cast<int64_t>(::getpid()) : 0;
  collective::Broadcast(*ctx_, &id, 1, DType::kInt64);
  std::string dir =
      (std::filesystem::temp_directory_path() / ("parasol-ps-mpi-" + std::to_string(id))).string();
  const int workers = 2;
  const uint64_t width = static_cast<uint64_t>(ctx_->size() * workers);
  TableConfig config{.id = 8,
                     .dtype = DType::kFloat64,
                     .width = width,
                     .num_rows = 20,
                     .consistency = Consistency::kSsp,
                     .staleness = 1};
  auto run = [&](bool resume, int until) {
    ParameterServer ps(*ctx_, {.workers_per_process = workers, .timeout_ms = 60s});
    ps.CreateTable(config);
    std::vector<std::thread> threads;
    for (int i = 0; i < workers; ++i) {
      threads.emplace_back([&, i] {
        auto w = ps.CreateWorker(i);
        auto t = w->GetTable<double>(8);
        const auto me = static_cast<uint64_t>(ctx_->rank() * workers + i);
        uint64_t start = resume ? w->Restore(dir) : 0;
        EXPECT_EQ(start, resume ? 4u : 0u);
        for (uint64_t c = start; c < static_cast<uint64_t>(until); ++c) {
          for (uint64_t row = 0; row < 20; ++row) t.Inc(row, me, 0.5 * static_cast<double>(row + 1));
          w->Clock();
        }
        if (!resume) w->Checkpoint(dir);
        w->GlobalBarrier();
        for (uint64_t row = 0; row < 20; ++row) {
          auto v = t.Get(row);
          for (uint64_t col = 0; col < width; ++col) {
            EXPECT_EQ(v[col], 0.5 * static_cast<double>((row + 1) * static_cast<uint64_t>(until)))
                << "row " << row << " col " << col << (resume ? " after resuming" : "");
          }
        }
        w->GlobalBarrier();
      });
    }
    for (auto& th : threads) th.join();
    ps.Shutdown();
  };
  run(false, 4);
  run(true, 6);
  collective::Barrier(*ctx_, 60s);
  if (ctx_->rank() == 0) std::filesystem::remove_all(dir);
}

TEST_F(MpiPs, RanksThatDisagreeOnATableAreTold) {
  ParameterServer ps(*ctx_, {.workers_per_process = 1, .timeout_ms = 60s});
  TableConfig c{.id = 2, .dtype = DType::kFloat32, .width = 4, .num_rows = 10};
  if (ctx_->rank() == ctx_->size() - 1 && ctx_->size() > 1) c.width = 5;
  if (ctx_->size() == 1) {
    EXPECT_NO_THROW(ps.CreateTable(c));
  } else {
    try {
      ps.CreateTable(c);
      ADD_FAILURE() << "ranks disagreed and nobody was told";
    } catch (const MismatchError& e) {
      EXPECT_THAT(e.what(), HasSubstr("with another configuration"));
    }
  }
  ps.Shutdown();
}

}  // namespace
}  // namespace parasol::ps

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  parasol::comm::MpiRuntime runtime(&argc, &argv);
  parasol::ps::g_runtime = &runtime;
  if (runtime.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
