// Topic totals exchanged between in-process ranks: every rank ends a round with every change made
// before it, its own and the others'; a rank that dies or sends changes of another length is an
// error naming it.
#include "parasol/apps/lda/totals_exchange.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"

namespace parasol::apps::lda {
namespace {

using namespace std::chrono_literals;

// Rank r's change to topic k in round s: (r + 1)(s + 1)(k + 1).
int64_t Change(int r, int s, size_t k) { return int64_t{r + 1} * (s + 1) * static_cast<int64_t>(k + 1); }

// As the trainer: after round s, collect the others' changes of round s - 1, then send its own of
// round s (already in its totals). Before round s's changes, a rank of `ranks` holds the changes of
// rounds 0 .. s - 1 of every rank: sum_r (r + 1) x s (s + 1) / 2 x (k + 1).
TEST(TotalsExchange, EveryRankEndsWithEveryChange) {
  constexpr size_t kK = 4;
  constexpr int kRounds = 5;
  for (int ranks : {1, 2, 3}) {
    comm::InProcessWorld world(ranks);
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      TotalsExchange exchange(ctx, kK, 5000ms);
      std::vector<int64_t> totals(kK, 0), mine(kK);
      const int64_t rank_sum = int64_t{ranks} * (ranks + 1) / 2;
      for (int s = 0; s < kRounds; ++s) {
        for (size_t k = 0; k < kK; ++k) mine[k] = Change(ctx.rank(), s, k), totals[k] += mine[k];
        exchange.Collect(totals);
        if (s > 0) {
          for (size_t k = 0; k < kK; ++k) {
            // Rounds 0 .. s - 1 of every rank, and this rank's round s.
            const int64_t want = rank_sum * s * (s + 1) / 2 * static_cast<int64_t>(k + 1) + mine[k];
            ASSERT_EQ(totals[k], want) << "rank " << ctx.rank() << " round " << s << " topic " << k;
          }
        }
        exchange.Poll();
        exchange.Post(mine);
      }
      exchange.Collect(totals);
      for (size_t k = 0; k < kK; ++k)
        EXPECT_EQ(totals[k], rank_sum * kRounds * (kRounds + 1) / 2 * static_cast<int64_t>(k + 1));
      exchange.Collect(totals);  // nothing in flight: no change
      EXPECT_EQ(totals[0], rank_sum * kRounds * (kRounds + 1) / 2);
    });
    comm::testing::ExpectNoErrors(errors);
  }
}

TEST(TotalsExchange, ADeadRankIsAnErrorNamingIt) {
  comm::InProcessWorld world(3);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    TotalsExchange exchange(ctx, 3, 2000ms);
    if (ctx.rank() == 1) world.KillRank(1);  // dies before it sends any change
    std::vector<int64_t> totals(3, 0);
    exchange.Post(totals);
    exchange.Collect(totals);
  });
  ASSERT_NE(errors[0], nullptr);
  const std::string what = comm::testing::Message(errors[0]);
  EXPECT_THAT(what, ::testing::HasSubstr("rank 0: lda: receive topic totals from rank 1"));
}

TEST(TotalsExchange, ChangesOfAnotherLengthAreAnError) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    const size_t topics = ctx.rank() == 1 ? 5 : 4;  // rank 1 was started with another K
    TotalsExchange exchange(ctx, topics, 2000ms);
    std::vector<int64_t> totals(topics, 0);
    exchange.Post(totals);
    exchange.Collect(totals);
  });
  ASSERT_NE(errors[0], nullptr);
  EXPECT_THAT(comm::testing::Message(errors[0]),
              ::testing::HasSubstr("rank 0: lda: receive topic totals from rank 1"));
}

// The waits are timed on the context's clock: on one that stands still they take no time.
TEST(TotalsExchange, WaitsAreTimedOnTheContextsClock) {
  auto waited = comm::testing::SecondsOnAStoppedClock(2, [](comm::Context& ctx) {
    TotalsExchange exchange(ctx, 3, 5000ms);
    std::vector<int64_t> totals(3, 0);
    for (int s = 0; s < 4; ++s) exchange.Post(std::vector<int64_t>(3, 1)), exchange.Collect(totals);
    EXPECT_EQ(totals, std::vector<int64_t>(3, 4));  // the other rank's four changes
    return exchange.wait_seconds();
  });
  EXPECT_EQ(waited, std::vector<double>(2, 0.0));
}

}  // namespace
}  // namespace parasol::apps::lda
