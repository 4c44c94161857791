#include "parasol/apps/gnn/ghost_exchange.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "parasol/apps/gnn/graph.h"
#include "parasol/apps/gnn/testing_graphs.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

// The value an owner writes in epoch e, channel c, for its vertex v, column j: each row says
// where and when it was computed.
float Stamp(uint64_t epoch, size_t channel, uint32_t v, size_t j) {
  return static_cast<float>(epoch * 100000 + channel * 50000 + v) + static_cast<float>(j) * 0.25f;
}

// Every ghost row holds its owner's row of epoch max(1, e - S) (never older, never a mix), on 3
// ranks, with two refreshes (channels) of different widths per epoch, while the messages of rank
// 1 arrive late: the rows are S epochs old whatever the timing. With S = 0 also read one-sided
// (the second, wider refresh grows the registered region; every refresh packs new rows, so a
// read before the owner's ready or a pack before its readers' done would show an older stamp).
TEST(GhostExchangeTest, GhostRowsAreExactlyStalenessEpochsOld) {
  const Graph g = ReadGraphDir(CoraDir());
  const int ranks = 3;
  const std::vector<int32_t> owner = PartitionVertices(g, ranks, PartitionKind::kHash);
  const std::pair<uint32_t, GhostTransfer> cases[] = {{0, GhostTransfer::kTwoSided},
                                                      {1, GhostTransfer::kTwoSided},
                                                      {2, GhostTransfer::kTwoSided},
                                                      {0, GhostTransfer::kOneSided}};
  for (auto [staleness, transfer] : cases) {
    comm::InProcessWorld world(ranks);
    world.AddFault({.src = 1, .delay_ms = std::chrono::milliseconds(5)});
    comm::testing::ExpectNoErrors(
        comm::testing::RunRanks(world, [&, staleness = staleness, transfer = transfer](comm::Context& ctx) {
          const GraphShard s = MakeShard(g, owner, ctx.rank(), ranks);
          ASSERT_FALSE(s.ghosts.empty());
          GhostExchange ghosts(ctx, staleness, transfer);
          const size_t widths[2] = {2, 3};
          std::vector<float> m;
          for (uint64_t e = 1; e <= 6; ++e) {
            ghosts.BeginEpoch(e);
            for (size_t c = 0; c < 2; ++c) {
              const size_t w = widths[c];
              m.assign(s.local_rows() * w, -1.0f);
              for (size_t i = 0; i < s.owned.size(); ++i)
                for (size_t j = 0; j < w; ++j) m[i * w + j] = Stamp(e, c, s.owned[i], j);
              ghosts.Refresh(s, w, m);
              const uint64_t want = std::max<uint64_t>(1, e > staleness ? e - staleness : 1);
              ASSERT_EQ(ghosts.last_rows_epoch(), want) << "epoch " << e << ", S = " << staleness;
              for (size_t k = 0; k < s.ghosts.size(); ++k) {
                for (size_t j = 0; j < w; ++j) {
                  ASSERT_EQ(m[(s.owned.size() + k) * w + j], Stamp(want, c, s.ghosts[k], j))
                      << "rank " << ctx.rank() << ", ghost " << s.ghosts[k] << ", epoch " << e
                      << ", S = " << staleness;
                }
              }
            }
          }
          ghosts.Drain();
          EXPECT_GT(ghosts.bytes_sent(), 0u);
        }));
  }
}

// Reduce under a bound S: each owner adds what the other ranks' ghost rows held exactly S epochs
// before (nothing in the first S epochs), whatever the timing, after a refresh in the same epoch
// (two channels of different kinds).
TEST(GhostExchangeTest, ReductionsArriveExactlyStalenessEpochsLate) {
  const Graph g = ReadGraphDir(CoraDir());
  const int ranks = 3;
  const std::vector<int32_t> owner = PartitionVertices(g, ranks, PartitionKind::kHash);
  // How many ranks hold each vertex as a ghost.
  std::vector<int> holders(g.vertices, 0);
  std::vector<GraphShard> shards;
  for (int r = 0; r < ranks; ++r) {
    shards.push_back(MakeShard(g, owner, r, ranks));
    for (uint32_t v : shards.back().ghosts) ++holders[v];
  }
  for (uint32_t staleness : {0u, 1u, 2u}) {
    comm::InProcessWorld world(ranks);
    world.AddFault({.src = 2, .delay_ms = std::chrono::milliseconds(5)});
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      const GraphShard& s = shards[static_cast<size_t>(ctx.rank())];
      GhostExchange ghosts(ctx, staleness);
      const size_t w = 2;
      std::vector<float> m;
      for (uint64_t e = 1; e <= 6; ++e) {
        ghosts.BeginEpoch(e);
        m.assign(s.local_rows() * w, 0.0f);
        ghosts.Refresh(s, w, m);
        // Owned rows start at 0; every ghost row carries the epoch (and the column).
        for (size_t k = 0; k < s.ghosts.size(); ++k)
          for (size_t j = 0; j < w; ++j) m[(s.owned.size() + k) * w + j] = static_cast<float>(e * 10 + j);
        ghosts.Reduce(s, w, m);
        for (size_t i = 0; i < s.owned.size(); ++i) {
          const uint32_t v = s.owned[i];
          for (size_t j = 0; j < w; ++j) {
            const float want =
                e > staleness ? static_cast<float>(holders[v] * ((e - staleness) * 10 + j)) : 0.0f;
            ASSERT_EQ(m[i * w + j], want)
                << "rank " << ctx.rank() << ", vertex " << v << ", epoch " << e << ", S = " << staleness;
          }
        }
      }
      ghosts.Drain();
    }));
  }
}

TEST(GhostExchangeTest, OneSidedNeedsStalenessZero) {
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { GhostExchange ghosts(ctx, 1, GhostTransfer::kOneSided); });
  EXPECT_THAT(comm::testing::Message(errors[0]), testing::HasSubstr("one-sided ghost rows need staleness 0"));
}

// A peer that stops exchanging: the wait for its rows (sent under a bound, or its ready before a
// one-sided read) ends at the deadline with an error that names it and the exchange, not a hang.
TEST(GhostExchangeTest, APeerThatStopsIsATimeoutNamingIt) {
  const Graph g = ReadGraphDir(CoraDir());
  const std::vector<int32_t> owner = PartitionVertices(g, 2, PartitionKind::kHash);
  for (auto [staleness, transfer, what] : {std::tuple{1u, GhostTransfer::kTwoSided, "bounded staleness"},
                                           std::tuple{0u, GhostTransfer::kOneSided, "one-sided"}}) {
    comm::InProcessWorld world(2);
    auto errors = comm::testing::RunRanks(
        world,
        [&, staleness = staleness, transfer = transfer](comm::Context& ctx) {
          const GraphShard s = MakeShard(g, owner, ctx.rank(), 2);
          GhostExchange ghosts(ctx, staleness, transfer);
          std::vector<float> m(s.local_rows(), 1.0f);
          const uint64_t last = ctx.rank() == 1 ? 1 : 4;  // rank 1 stops after epoch 1
          for (uint64_t e = 1; e <= last; ++e) {
            ghosts.BeginEpoch(e);
            ghosts.Refresh(s, 1, m);
          }
          if (ctx.rank() == 0) ghosts.Drain();
        },
        {.timeout_ms = std::chrono::milliseconds(300)});
    ASSERT_TRUE(errors[0]) << what;
    EXPECT_THAT(comm::testing::Message(errors[0]), testing::HasSubstr("peer 1"));
    EXPECT_THAT(comm::testing::Message(errors[0]),
                testing::HasSubstr(std::string("gnn ghost rows (") + what));
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
