// The parameter server's local path, with Google Benchmark: a worker's inner loop of cached Get
// plus Inc on one process (no network in the loop), and the size of the update messages that
// leave a loaded process.
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "parasol/comm/context.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps {
namespace {

constexpr uint64_t kRows = 4096;
constexpr uint64_t kWidth = 16;

// One rank (threads as workers), the table created: the fixture every benchmark shares.
struct Job {
  explicit Job(int workers, Consistency model, uint32_t staleness)
      : world(1),
        ctx(world.CreateTransport(0), comm::ContextOptions{}),
        ps(ctx, {.workers_per_process = workers, .timeout_ms = std::chrono::milliseconds(60000)}) {
    ps.CreateTable({.id = 1,
                    .dtype = DType::kFloat32,
                    .width = kWidth,
                    .num_rows = kRows,
                    .consistency = model,
                    .staleness = staleness});
  }
  ~Job() { ps.Shutdown(); }
  comm::InProcessWorld world;
  comm::Context ctx;
  ParameterServer ps;
};

// Get(row)[col] and Inc(row, col) over random rows of a warm cache; a Clock every range(0)
// operations (its cost is part of the figure: with 4096 rows and 64K operations per clock, every
// row is updated, sent and re-read each clock). One "item" is one Get plus one Inc.
std::unique_ptr<Job> g_job;  // made before the benchmark's threads start, dropped after they end

void BM_CachedGetInc(benchmark::State& state) {
  auto w = g_job->ps.CreateWorker(state.thread_index());  // worker i is thread i
  auto t = w->GetTable<float>(1);
  std::mt19937_64 rng(static_cast<uint64_t>(state.thread_index()) + 1);
  std::vector<uint32_t> rows(1 << 16);
  for (auto& r : rows) r = static_cast<uint32_t>(rng() % kRows);
  for (uint64_t r = 0; r < kRows; ++r) t.Get(r);  // warm the cache
  const size_t period = static_cast<size_t>(state.range(0));
  size_t i = 0, next_clock = period;
  float sum = 0;
  for (auto _ : state) {
    uint64_t row = rows[i & 0xffff];
    uint64_t col = i & (kWidth - 1);
    sum += t.Get(row)[col];
    t.Inc(row, col, 0.5f);
    if (++i == next_clock) {
      w->Clock();
      next_clock += period;
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  w->GlobalBarrier();
}
BENCHMARK(BM_CachedGetInc)
    ->Setup([](const benchmark::State& s) {
      g_job = std::make_unique<Job>(s.threads(), Consistency::kSsp, 3);
    })
    ->Teardown([](const benchmark::State&) { g_job.reset(); })
    ->ArgName("ops_per_clock")
    ->Arg(1 << 16)
    ->Arg(1 << 22)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// Under load: every worker updates 512 random rows per clock; the counters report the update
// messages that left the process and their mean size.
void BM_UpdateBatches(benchmark::State& state) {
  Job job(1, Consistency::kSsp, 1);
  auto w = job.ps.CreateWorker(0);
  auto t = w->GetTable<float>(1);
  std::mt19937_64 rng(7);
  std::vector<float> delta(kWidth, 0.25f);
  for (auto _ : state) {
    for (int k = 0; k < 512; ++k) t.IncRow(rng() % kRows, delta);
    w->Clock();
  }
  w->GlobalBarrier();
  PsStats s = job.ps.stats();
  state.counters["messages"] = static_cast<double>(s.update_batches);
  state.counters["mean_msg_bytes"] =
      s.update_batches ? static_cast<double>(s.update_bytes) / static_cast<double>(s.update_batches) : 0;
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 512);
}
BENCHMARK(BM_UpdateBatches);

}  // namespace
}  // namespace parasol::ps

BENCHMARK_MAIN();
