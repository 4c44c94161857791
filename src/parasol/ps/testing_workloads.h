// Test workloads for the parameter server, written once against a Context so they run with
// ranks as threads (in-process, with injected delays) and as processes under mpirun.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/comm/context.h"
#include "parasol/comm/testing.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::ps::testing {

struct CountingOptions {
  Consistency model = Consistency::kSsp;
  uint32_t staleness = 0;
  double vap_threshold = 0;
  int workers = 2;  // per process
  int clocks = 10;
  int rows = 6;
  uint64_t seed = 1;
  int max_sleep_us = 1500;  // random pause per worker per clock (a moving straggler)
  int slow_worker = -1;     // global worker id that sleeps 4x as long
  RowKind kind = RowKind::kDense;
  bool spin_while_waiting = false;  // PsOptions'
  bool one_sided = false;           // one-sided reads (the table range-partitioned)
};

struct CountingResult {
  uint64_t reads = 0;
  uint64_t min_seen_minus_need = ~uint64_t{0};  // smallest (seen - required) over others' columns
  double mean_freshness = 0;                    // mean over reads of (seen - (c - s)) for others
  PsStats stats;
};

// Every worker w (global id rank * workers + index) adds 1 to column w of every row once per
// clock, then reads every row and checks the model's bound: its own column is exactly c + 1 (its
// own updates, including this clock's), every other column w' is at least c - s (all of w''s
// clocks <= c - s - 1) and at most what w' has issued (`issued`: shared when ranks are threads;
// null under mpirun). At the end the table must hold exactly `clocks` in every column on every
// shard: nothing lost or counted twice.
inline CountingResult RunCounting(comm::Context& ctx, const CountingOptions& o,
                                  std::atomic<int64_t>* issued) {
  ParameterServer ps(ctx, {.workers_per_process = o.workers,
                           .timeout_ms = std::chrono::milliseconds(30000),
                           .spin_while_waiting = o.spin_while_waiting});
  const uint64_t total_workers = static_cast<uint64_t>(ctx.size() * o.workers);
  TableConfig config{.id = 5,
                     .kind = o.kind,
                     .dtype = DType::kInt64,
                     .width = total_workers,
                     .num_rows = static_cast<uint64_t>(o.rows),
                     .consistency = o.model,
                     .staleness = o.staleness,
                     .vap_threshold = o.vap_threshold,
                     .partitioning = o.one_sided ? Partitioning::kRange : Partitioning::kHash,
                     .one_sided_reads = o.one_sided};
  ps.CreateTable(config);
  const uint64_t s = config.ReadStaleness();
  std::atomic<uint64_t> reads{0}, freshness_sum{0}, others{0};
  std::atomic<uint64_t> min_margin{~uint64_t{0}};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.workers; ++i) {
    threads.emplace_back([&, i] {
      auto w = ps.CreateWorker(i);
      auto t = w->GetTable<int64_t>(5);
      const uint64_t me = static_cast<uint64_t>(ctx.rank() * o.workers + i);
      std::mt19937_64 rng(o.seed * 7919 + me);
      for (uint64_t c = 0; c < static_cast<uint64_t>(o.clocks); ++c) {
        int pause = o.max_sleep_us > 0 ? static_cast<int>(rng() % static_cast<uint64_t>(o.max_sleep_us)) : 0;
        if (static_cast<int>(me) == o.slow_worker) pause *= 4;
        std::this_thread::sleep_for(std::chrono::microseconds(pause));
        for (uint64_t row = 0; row < static_cast<uint64_t>(o.rows); ++row) {
          if (issued) issued[me].fetch_add(1);
          t.Inc(row, me, 1);
        }
        for (uint64_t row = 0; row < static_cast<uint64_t>(o.rows); ++row) {
          auto v = t.Get(row);
          EXPECT_EQ(v[me], static_cast<int64_t>(c + 1))
              << "own updates, worker " << me << " clock " << c << " row " << row;
          for (uint64_t other = 0; other < total_workers; ++other) {
            if (other == me) continue;
            int64_t seen = v[other];
            uint64_t need = s > c ? 0 : c - s;
            EXPECT_GE(seen, static_cast<int64_t>(need))
                << ConsistencyName(o.model) << " worker " << me << " clock " << c << " row " << row
                << " column " << other;
            if (issued) {
              EXPECT_LE(seen, issued[other].load() / o.rows + 1) << "a read saw updates not yet issued";
            }
            uint64_t margin = seen >= static_cast<int64_t>(need) ? static_cast<uint64_t>(seen) - need : 0;
            uint64_t prev = min_margin.load();
            while (margin < prev && !min_margin.compare_exchange_weak(prev, margin)) {
            }
            freshness_sum += margin;
            ++others;
          }
          ++reads;
        }
        w->Clock();
      }
      // After a barrier every update is visible, whatever the model.
      w->GlobalBarrier();
      for (uint64_t row = 0; row < static_cast<uint64_t>(o.rows); ++row) {
        auto v = t.Get(row);
        for (uint64_t col = 0; col < total_workers; ++col) {
          EXPECT_EQ(v[col], o.clocks) << "final value after the barrier, row " << row << " column " << col;
        }
      }
      w->GlobalBarrier();
    });
  }
  for (auto& th : threads) th.join();
  // Every shard holds exactly the sum of the increments for its rows.
  for (uint64_t row = 0; row < static_cast<uint64_t>(o.rows); ++row) {
    if (ShardOf(config, row, ctx.size()) != ctx.rank()) continue;
    auto value = ps.ShardRow(5, row);
    EXPECT_TRUE(value.has_value()) << "row " << row << " missing on its shard";
    if (!value) continue;
    for (uint64_t col = 0; col < total_workers; ++col) {
      EXPECT_EQ(value->Get<int64_t>(col), o.clocks)
          << "shard " << ctx.rank() << " row " << row << " column " << col;
    }
  }
  CountingResult result;
  result.reads = reads;
  result.min_seen_minus_need = min_margin;
  result.mean_freshness = others ? static_cast<double>(freshness_sum) / static_cast<double>(others) : 0;
  result.stats = ps.stats();
  ps.Shutdown();
  return result;
}

// RunCounting on every rank of `world` (threads); sums the results over ranks (freshness: mean).
inline CountingResult RunCountingRanks(comm::InProcessWorld& world, const CountingOptions& o) {
  std::vector<std::atomic<int64_t>> issued(static_cast<size_t>(world.size() * o.workers));
  std::vector<CountingResult> results(static_cast<size_t>(world.size()));
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    results[static_cast<size_t>(ctx.rank())] = RunCounting(ctx, o, issued.data());
  });
  comm::testing::ExpectNoErrors(errors);
  CountingResult total = results[0];
  for (size_t r = 1; r < results.size(); ++r) {
    total.reads += results[r].reads;
    total.min_seen_minus_need = std::min(total.min_seen_minus_need, results[r].min_seen_minus_need);
    total.mean_freshness += results[r].mean_freshness;
    total.stats.gets_sent += results[r].stats.gets_sent;
    total.stats.rows_pushed += results[r].stats.rows_pushed;
    total.stats.rows_received += results[r].stats.rows_received;
    total.stats.update_batches += results[r].stats.update_batches;
    total.stats.update_bytes += results[r].stats.update_bytes;
    total.stats.waits += results[r].stats.waits;
    total.stats.one_sided_rows += results[r].stats.one_sided_rows;
    total.stats.one_sided_reads += results[r].stats.one_sided_reads;
  }
  total.mean_freshness /= static_cast<double>(results.size());
  return total;
}

}  // namespace parasol::ps::testing
