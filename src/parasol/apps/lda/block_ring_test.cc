// Word blocks passed around in-process ranks: each rank has every block once per rotation, at
// the step the schedule says, and gets its own blocks back with what the others wrote; a rank
// that dies is an error naming it.
#include "parasol/apps/lda/block_ring.h"

#include <mutex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"

namespace parasol::apps::lda {
namespace {

using namespace std::chrono_literals;

// fn(Z{}) with the topic type a ring of `topics` topics has in the trainer: 16 bits up to 65,536.
template <typename Fn>
void WithTopicType(uint32_t topics, Fn&& fn) {
  if (topics <= 65536) {
    fn(uint16_t{});
  } else {
    fn(uint32_t{});
  }
}

TEST(BlockRing, EveryBlockVisitsEveryRankOncePerRotation) {
  for (int ranks : {1, 2, 3}) {
    for (uint32_t per : {1u, 2u}) {
      const uint32_t k = per == 1 ? 65536 : 70000;  // 16-bit topics, and 32-bit
      const uint32_t blocks = per * static_cast<uint32_t>(ranks);
      comm::InProcessWorld world(ranks);
      auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
        WithTopicType(k, [&](auto zero) {
          using Z = decltype(zero);
          std::vector<uint32_t> sizes(blocks);
          for (uint32_t b = 0; b < blocks; ++b) sizes[b] = static_cast<uint32_t>(ranks) + b;  // unequal
          BlockRing<Z> ring(ctx, sizes, k, 5000ms);
          const auto me = static_cast<uint32_t>(ctx.rank());
          for (uint32_t step = 0; step < blocks; ++step) {
            ASSERT_EQ(ring.active_id(), (me * per + step) % blocks) << "rank " << me << " step " << step;
            ring.active()[me] =
                static_cast<Z>(ring.active()[me] + step + 1);  // slot `rank`: the step this rank had it
            ring.Poll();
            ring.Rotate();
          }
          ring.Settle();
          // Every block left each rank once (one rank: none travels), 2 or 4 bytes a topic.
          uint64_t all = 0;
          for (uint32_t size : sizes) all += size * (k == 65536 ? 2 : 4);
          EXPECT_EQ(ring.bytes_sent(), ranks == 1 ? 0 : all);
          ring.ForEachHeld([&](uint32_t b, const Z* topics) {
            EXPECT_GE(b, me * per);
            EXPECT_LT(b, (me + 1) * per);
            for (uint32_t r = 0; r < static_cast<uint32_t>(ranks); ++r) {
              const uint32_t step = (b + blocks - r * per) % blocks;  // when rank r held block b
              EXPECT_EQ(topics[r], step + 1) << "block " << b << " rank " << r;
            }
          });
          uint32_t gathered = 0;
          ring.ForEachAtRoot([&](uint32_t b, const Z* topics) {
            ++gathered;
            EXPECT_EQ(topics[0], (b + blocks) % blocks + 1);
          });
          if (ctx.rank() == 0) {
            EXPECT_EQ(gathered, blocks);
          }
        });
      });
      comm::testing::ExpectNoErrors(errors);
    }
  }
}

// A process's arrays take the blocks in turn without being reallocated, though the blocks differ
// in size (a reallocation copied a block and zeroed fresh pages on the trainer's thread): over
// three rotations a rank samples in at most its three arrays (two held, one arriving).
TEST(BlockRing, ArraysAreNotReallocatedAsBlocksOfOtherSizesArrive) {
  comm::InProcessWorld world(2);
  std::vector<std::set<const uint16_t*>> arrays(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    BlockRing<uint16_t> ring(ctx, {10, 2000, 30, 4000}, 100, 5000ms);
    for (int step = 0; step < 12; ++step) {
      arrays[static_cast<size_t>(ctx.rank())].insert(ring.active());
      ring.Rotate();
    }
    ring.Settle();
  });
  comm::testing::ExpectNoErrors(errors);
  EXPECT_LE(arrays[0].size(), 3u);
  EXPECT_LE(arrays[1].size(), 3u);
}

// Topics up to K - 1 come back as they left, 16-bit (K = 65,536) or 32-bit (K = 100,000), in blocks
// of unequal sizes: handed over, gathered at rank 0 (each under its own id, whether the blocks are
// back home or half-way round), and in the senders' blocks after that gather.
TEST(BlockRing, TopicsArriveAsTheyLeft) {
  struct Case {
    uint32_t topics, steps;  // K, and the rotations before the gather
  };
  for (const Case c : {Case{65536, 4}, Case{100000, 4}, Case{65536, 1}, Case{100000, 3}}) {
    comm::InProcessWorld world(2);
    const std::vector<uint32_t> sizes{10000, 9001, 4097, 3};
    auto topic = [&](uint32_t b, uint32_t i) { return (i * 7919u + b * 104729u) % c.topics; };
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      WithTopicType(c.topics, [&](auto zero) {
        using Z = decltype(zero);
        BlockRing<Z> ring(ctx, sizes, c.topics, 5000ms);
        ring.FillHeld([&](uint32_t b, Z* z) {
          for (uint32_t i = 0; i < sizes[b]; ++i) z[i] = static_cast<Z>(topic(b, i));
        });
        for (uint32_t step = 0; step < c.steps; ++step) {
          const uint32_t b = ring.active_id();
          for (uint32_t i = 0; i < sizes[b]; ++i) ASSERT_EQ(ring.active()[i], topic(b, i)) << b << " " << i;
          ring.Rotate();
        }
        std::set<uint32_t> gathered;
        ring.ForEachAtRoot([&](uint32_t b, const Z* z) {
          gathered.insert(b);
          for (uint32_t i = 0; i < sizes[b]; ++i) ASSERT_EQ(z[i], topic(b, i)) << b << " " << i;
        });
        if (ctx.rank() == 0) {
          EXPECT_EQ(gathered, (std::set<uint32_t>{0, 1, 2, 3}));
        }
        ring.ForEachHeld([&](uint32_t b, const Z* z) {
          for (uint32_t i = 0; i < sizes[b]; ++i) ASSERT_EQ(z[i], topic(b, i)) << b << " " << i;
        });
      });
    });
    comm::testing::ExpectNoErrors(errors);
  }
}

// Between hand-overs, while blocks are in flight, every block can be read at exactly one rank (its
// holder, or the sender of the one in flight, 16-bit or 32-bit), with what was last written to it.
TEST(BlockRing, EveryBlockIsReadableAtOneRankWhileBlocksTravel) {
  constexpr int kRanks = 3;
  constexpr uint32_t kPer = 2, kBlocks = kPer * kRanks;
  for (uint32_t topics : {65536u, 100000u}) {
    comm::InProcessWorld world(kRanks);
    std::vector<std::vector<int>> seen(kBlocks, std::vector<int>(kBlocks, 0));  // [step][block]
    std::mutex mu;
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      WithTopicType(topics, [&](auto zero) {
        using Z = decltype(zero);
        BlockRing<Z> ring(ctx, std::vector<uint32_t>(kBlocks, 4), topics, 5000ms);
        for (uint32_t step = 0; step < kBlocks; ++step) {
          ring.active()[0] = static_cast<Z>(step + 1);  // the step it was last written at
          ring.Rotate();
          auto read = [&](uint32_t b, const auto& z) {
            std::lock_guard<std::mutex> lock(mu);
            ++seen[step][b];
            // The block it sampled and handed on this step; the other, written by the next rank a step ago.
            const bool leaving = b == (static_cast<uint32_t>(ctx.rank()) * kPer + step) % kBlocks;
            EXPECT_EQ(z[0], leaving ? step + 1 : step) << "block " << b << " step " << step;
          };
          ring.ForEachReadable(read);
        }
        ring.Settle();
      });
    });
    comm::testing::ExpectNoErrors(errors);
    for (uint32_t step = 0; step < kBlocks; ++step)
      EXPECT_EQ(seen[step], std::vector<int>(kBlocks, 1)) << step;
  }
}

// Each rank owns runs of kRun tokens in turn in every block and keeps them while the block is away
// (OwnTokens): over two rotations every block a rank holds, hands on, or gathers at rank 0, holds
// what each rank last wrote to its own runs, whole. Runs of 100 and 40 tokens are left out of the hand-overs
// to their owners (copied in bulk, and a topic at a time); runs of 3 are too short to be worth it, and
// travel.
TEST(BlockRing, BlocksTravelWithoutTheReceiversLongRuns) {
  for (const uint32_t kRun : {100u, 40u, 3u}) {
    for (int ranks : {2, 3}) {
      for (uint32_t topics : {65536u, 70000u}) {
        const uint32_t per = 2, blocks = per * static_cast<uint32_t>(ranks);
        std::vector<uint32_t> sizes(blocks);
        for (uint32_t b = 0; b < blocks; ++b) sizes[b] = 5000 + 7 * b;  // unequal
        auto owner = [&](uint32_t i) { return static_cast<int>(i / kRun % static_cast<uint32_t>(ranks)); };
        // What rank `owner(i)` writes to token i of block b at step s, or put there first (s = -1).
        auto topic = [&](uint32_t b, uint32_t i, int s) {
          return static_cast<uint32_t>((b * 1000003u + i * 7919u + static_cast<uint32_t>(s + 1) * 104729u) %
                                       topics);
        };
        comm::InProcessWorld world(ranks);
        auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
          WithTopicType(topics, [&](auto zero) {
            using Z = decltype(zero);
            const int me = ctx.rank();
            std::vector<std::vector<Z>> stores(blocks);
            std::vector<OwnTokens<Z>> own(blocks);
            for (uint32_t b = 0; b < blocks; ++b) {
              for (uint32_t i = 0; i < sizes[b]; i += kRun) {
                if (owner(i) != me) continue;
                const uint32_t len = std::min(kRun, sizes[b] - i);
                own[b].runs.push_back({i, len});
                for (uint32_t j = i; j < i + len; ++j) stores[b].push_back(static_cast<Z>(topic(b, j, -1)));
              }
              own[b].store = stores[b].data();
            }
            BlockRing<Z> ring(ctx, sizes, topics, 5000ms, own);
            ring.FillHeld([&](uint32_t b, Z* z) {
              for (uint32_t i = 0; i < sizes[b]; ++i) z[i] = static_cast<Z>(topic(b, i, -1));
            });
            // The step at which rank q last wrote block b before step s (it holds b at the steps
            // s' = b - q per mod blocks), or -1.
            auto last = [&](uint32_t b, int q, int s) {
              int at = -1;
              for (int t = 0; t < s; ++t)
                if ((static_cast<uint32_t>(q) * per + static_cast<uint32_t>(t)) % blocks == b) at = t;
              return at;
            };
            auto expect_block = [&](uint32_t b, const Z* z, int s, const char* what) {
              for (uint32_t i = 0; i < sizes[b]; ++i) {
                ASSERT_EQ(z[i], topic(b, i, last(b, owner(i), s)))
                    << what << " block " << b << " token " << i << " at rank " << me << " step " << s;
              }
            };
            for (int s = 0; s < 2 * static_cast<int>(blocks); ++s) {
              const uint32_t b = ring.active_id();
              expect_block(b, ring.active(), s, "held");
              for (const BlockRun& r : own[b].runs)
                for (uint32_t i = r.at; i < r.at + r.len; ++i)
                  ring.active()[i] = static_cast<Z>(topic(b, i, s));
              ring.Rotate();
              ring.ForEachReadable([&](uint32_t id, const Z* z) {
                if (id == b) expect_block(b, z, s + 1, "leaving");
              });
            }
            ring.Settle();
            // Gathered at rank 0 (without its runs when they are long), every block is whole.
            uint32_t gathered = 0;
            ring.ForEachAtRoot([&](uint32_t id, const Z* z) {
              ++gathered;
              expect_block(id, z, 2 * static_cast<int>(blocks), "gathered");
            });
            if (me == 0) {
              EXPECT_EQ(gathered, blocks);
            }
            // Two rotations, each block handed on once a rotation, without the left neighbour's runs
            // when they are long.
            const int left = (me + ranks - 1) % ranks;
            uint64_t sent = 0;
            for (uint32_t b = 0; b < blocks; ++b)
              for (uint32_t i = 0; i < sizes[b]; ++i) sent += owner(i) == left && kRun >= 40 ? 0 : 2;
            EXPECT_EQ(ring.bytes_sent(), sent * (topics == 65536 ? 2 : 4)) << "runs of " << kRun;
          });
        });
        comm::testing::ExpectNoErrors(errors);
      }
    }
  }
}

// A neighbour whose tokens do not fit the blocks (a run past a block's end) is a mismatch, named
// by the rank that learns of it: rank 0, to which rank 1 hands its blocks.
TEST(BlockRing, ANeighboursTokensThatDoNotFitAreAMismatch) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    std::vector<OwnTokens<uint16_t>> own(2);
    std::vector<uint16_t> store(100);
    for (OwnTokens<uint16_t>& o : own) o.store = store.data();
    if (ctx.rank() == 1) own[1].runs = {{0, 40}, {90, 40}};  // block 1 holds 100 tokens
    BlockRing<uint16_t> ring(ctx, {100, 100}, 100, 5000ms, own);
  });
  EXPECT_EQ(errors[1], nullptr);
  ASSERT_NE(errors[0], nullptr);
  const std::string what = comm::testing::Message(errors[0]);
  EXPECT_THAT(what, ::testing::HasSubstr("rank 0: lda: learn rank 1's tokens of the word blocks"));
  EXPECT_THAT(what, ::testing::HasSubstr("do not fit"));
}

// The waits are timed on the context's clock: on a clock that stands still they take no time,
// however long the ranks really waited for each other (one block each: every rotation waits).
TEST(BlockRing, WaitsAreTimedOnTheContextsClock) {
  auto waited = comm::testing::SecondsOnAStoppedClock(2, [](comm::Context& ctx) {
    BlockRing<uint16_t> ring(ctx, std::vector<uint32_t>(2, 1000), 100, 5000ms);
    for (int step = 0; step < 6; ++step) ring.Rotate();
    ring.Settle();
    return ring.wait_seconds();
  });
  EXPECT_EQ(waited, std::vector<double>(2, 0.0));
}

TEST(BlockRing, ADeadNeighbourIsAnErrorNamingIt) {
  comm::InProcessWorld world(3);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    BlockRing<uint32_t> ring(ctx, std::vector<uint32_t>(3, 1000), 100, 2000ms);
    if (ctx.rank() == 1) world.KillRank(1);  // dies before it hands any block on
    for (int step = 0; step < 3; ++step) ring.Rotate();
  });
  ASSERT_NE(errors[0], nullptr);  // rank 0 receives from rank 1
  const std::string what = comm::testing::Message(errors[0]);
  EXPECT_THAT(what, ::testing::HasSubstr("rank 0: lda: receive word block"));
  EXPECT_THAT(what, ::testing::HasSubstr("peer 1"));
}

}  // namespace
}  // namespace parasol::apps::lda
