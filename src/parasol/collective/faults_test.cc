// Faults: a delayed, dropped or lost peer, a rank that never calls, and ranks that disagree on
// count, type or op must end in an error on every rank that names the rank, the operation and the
// peer, well before the deadline where the failure can be seen, and never in a hang or a wrong result.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::collective {
namespace {

using comm::InProcessWorld;
using comm::MessageFault;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

ErrorCode CodeOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return err.code();
  } catch (...) {
    return ErrorCode::kInternal;
  }
}

std::vector<float> Iota(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

TEST(Faults, DelayedMessageStillGivesTheRightAnswer) {
  InProcessWorld world(4);
  world.AddFault({.action = MessageFault::Action::kDelay, .src = 2, .count = 3, .delay_ms = 100ms});
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    auto v = Iota(1000, static_cast<float>(ctx.rank()));
    AllreduceOptions o;
    o.algorithm = AllreduceAlgorithm::kRing;
    o.timeout_ms = 5000ms;
    Allreduce<float>(ctx, v, o);
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], 6.0f + 4.0f * static_cast<float>(i));
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(Faults, DroppedMessageFailsEveryRankNamingThePeer) {
  InProcessWorld world(4);
  world.AddFault({.action = MessageFault::Action::kDrop, .src = 1, .dst = 2, .count = 1});
  auto start = std::chrono::steady_clock::now();
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    auto v = Iota(1000, 0);
    AllreduceOptions o;
    o.algorithm = AllreduceAlgorithm::kRing;
    o.timeout_ms = 300ms;
    Allreduce<float>(ctx, v, o);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  // The ring stalls behind the lost message; whichever rank's deadline fires first names the
  // peer it waited for and tells the rest, which abort naming it.
  int timeouts = 0;
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]) << "rank " << r << " did not fail";
    std::string m = comm::testing::Message(errors[static_cast<size_t>(r)]);
    EXPECT_THAT(m, HasSubstr(fmt::format("rank {}: allreduce(ring, 1000 x float32, sum): ", r)));
    if (CodeOf(errors[static_cast<size_t>(r)]) == ErrorCode::kTimeout) {
      ++timeouts;
      EXPECT_THAT(m, HasSubstr("deadline passed after 300 ms waiting for peer"));
    } else {
      EXPECT_EQ(CodeOf(errors[static_cast<size_t>(r)]), ErrorCode::kAborted);
      EXPECT_THAT(m, HasSubstr("deadline passed after 300 ms waiting for peer"));
    }
  }
  EXPECT_GE(timeouts, 1);
}

TEST(Faults, StoppedPeerIsReportedByItsNeighboursAndAbortsTheRest) {
  InProcessWorld world(5);
  auto errors = comm::testing::RunRanks(world,
                                        [&](comm::Context& ctx) {
                                          if (ctx.rank() == 3) {
                                            world.KillRank(3);
                                            return;
                                          }
                                          auto v = Iota(5000, 0);
                                          AllreduceOptions o;
                                          o.algorithm = AllreduceAlgorithm::kHalvingDoubling;
                                          o.timeout_ms = 10s;  // the failure must be seen long before this
                                          Allreduce<float>(ctx, v, o);
                                        },
                                        {.timeout_ms = 10s});
  int gone = 0;
  for (int r : {0, 1, 2, 4}) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]) << "rank " << r;
    auto code = CodeOf(errors[static_cast<size_t>(r)]);
    EXPECT_TRUE(code == ErrorCode::kPeerGone || code == ErrorCode::kAborted)
        << comm::testing::Message(errors[static_cast<size_t>(r)]);
    if (code == ErrorCode::kPeerGone) {
      ++gone;
      EXPECT_THAT(comm::testing::Message(errors[static_cast<size_t>(r)]), HasSubstr("peer 3 is gone"));
    }
  }
  EXPECT_GE(gone, 1);
}

TEST(Faults, RankThatNeverCallsIsNamedByTimeout) {
  InProcessWorld world(3);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    if (ctx.rank() == 0) return;
    std::vector<double> v(10, 1.0);
    BroadcastOptions o;
    o.root = 0;
    o.timeout_ms = 200ms;
    Broadcast<double>(ctx, v, o);
  });
  EXPECT_FALSE(errors[0]);
  // Both wait for rank 0; whichever times out first tells the other.
  int timeouts = 0;
  for (int r : {1, 2}) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]);
    std::string m = comm::testing::Message(errors[static_cast<size_t>(r)]);
    if (CodeOf(errors[static_cast<size_t>(r)]) == ErrorCode::kTimeout) {
      ++timeouts;
      EXPECT_THAT(
          m, HasSubstr(fmt::format(
                 "rank {}: broadcast(10 x float64, root 0): deadline passed after 200 ms waiting for peer 0",
                 r)));
    } else {
      EXPECT_THAT(m, HasSubstr("waiting for peer 0"));
    }
  }
  EXPECT_GE(timeouts, 1);
}

// Rank 1 passes `bad` where the others pass `good`: every rank must fail, one with a mismatch.
void ExpectMismatch(const std::function<void(comm::Context&, bool)>& call, const char* expect) {
  InProcessWorld world(4);
  auto start = std::chrono::steady_clock::now();
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { call(ctx, ctx.rank() == 1); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s) << "mismatch seen only at the deadline";
  int mismatches = 0;
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]) << "rank " << r << " did not fail";
    std::string m = comm::testing::Message(errors[static_cast<size_t>(r)]);
    if (CodeOf(errors[static_cast<size_t>(r)]) == ErrorCode::kMismatch) {
      ++mismatches;
      EXPECT_THAT(m, HasSubstr(expect));
    } else {
      EXPECT_EQ(CodeOf(errors[static_cast<size_t>(r)]), ErrorCode::kAborted) << m;
    }
  }
  EXPECT_GE(mismatches, 1);
}

TEST(Faults, MismatchedOpIsDetected) {
  ExpectMismatch(
      [](comm::Context& ctx, bool bad) {
        std::vector<float> v(64, 1.0f);
        AllreduceOptions o;
        o.op = bad ? ReduceOp::kMax : ReduceOp::kSum;
        o.algorithm = AllreduceAlgorithm::kRing;
        o.timeout_ms = 20s;
        Allreduce<float>(ctx, v, o);
      },
      "called this collective with other arguments");
}

TEST(Faults, MismatchedDtypeOfSameWidthIsDetected) {
  ExpectMismatch(
      [](comm::Context& ctx, bool bad) {
        std::vector<int32_t> v(64, 1);
        AllreduceOptions o;
        o.algorithm = AllreduceAlgorithm::kHalvingDoubling;
        o.timeout_ms = 20s;
        Allreduce(ctx, v.data(), v.data(), v.size(), bad ? DType::kFloat32 : DType::kInt32, o);
      },
      "called this collective with other arguments");
}

TEST(Faults, MismatchedCountIsDetected) {
  ExpectMismatch(
      [](comm::Context& ctx, bool bad) {
        std::vector<double> v(bad ? 101 : 100, 1.0);
        AllreduceOptions o;
        o.algorithm = AllreduceAlgorithm::kRing;
        o.timeout_ms = 20s;
        Allreduce<double>(ctx, v, o);
      },
      "peer");
}

TEST(Faults, DifferentCollectivesAreDetected) {
  ExpectMismatch(
      [](comm::Context& ctx, bool bad) {
        std::vector<double> v(100, 1.0), all(400);
        if (bad) {
          AllgatherOptions o;
          o.timeout_ms = 20s;
          Allgather<double>(ctx, v, all, o);
        } else {
          AllreduceOptions o;
          o.timeout_ms = 20s;
          Allreduce<double>(ctx, v, o);
        }
      },
      "another collective");
}

// Rank 1 believes rank 2 sends one element more than the others believe.
TEST(Faults, MismatchedAllgathervCountsAreDetected) {
  ExpectMismatch(
      [](comm::Context& ctx, bool bad) {
        std::vector<uint64_t> counts = {3, 4, bad ? 6u : 5u, 2};
        std::vector<float> mine(counts[static_cast<size_t>(ctx.rank())], 1.0f), all(20);
        AllgatherOptions o;
        o.timeout_ms = 20s;
        Allgatherv(ctx, mine.data(), all.data(), counts, DType::kFloat32, o);
      },
      "called this collective with other arguments");
}

// Rank 0 expects 3 elements from rank 1, which sends 2: no signature can tell, so the receive
// fails (a message of another size) or the deadline passes naming the peer: never a hang, never
// a wrong result taken as right.
TEST(Faults, MismatchedAlltoallvCountsEndInAnErrorNamingThePeer) {
  InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    const std::vector<uint64_t> send = {2, 2};
    const std::vector<uint64_t> recv = {2, ctx.rank() == 0 ? 3u : 2u};
    std::vector<float> in(4, 1.0f), out(5);
    AlltoallOptions o;
    o.timeout_ms = 500ms;
    Alltoallv(ctx, in.data(), send, out.data(), recv, DType::kFloat32, o);
  });
  ASSERT_TRUE(errors[0]) << "rank 0 took a short block as whole";
  EXPECT_THAT(comm::testing::Message(errors[0]), HasSubstr("peer 1"));
}

// Broadcast on rank 1, reduce to rank 0 on the others: no message ever reaches a rank that could
// tell, so the deadline catches it. Ranks 0 and 1 wait for each other and fail naming the peer;
// leaves of the reduce tree (2, 3) may finish their correct part first, or fail when told.
TEST(Faults, MismatchNoMessageRevealsEndsAtTheDeadlineOnEveryRank) {
  InProcessWorld world(4);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    std::vector<double> v(100, 1.0);
    if (ctx.rank() == 1) {
      BroadcastOptions o;
      o.timeout_ms = 300ms;
      Broadcast<double>(ctx, v, o);
    } else {
      ReduceOptions o;
      o.timeout_ms = 300ms;
      Reduce(ctx, v.data(), v.data(), v.size(), DType::kFloat64, o);
    }
  });
  for (int r : {0, 1}) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]) << "rank " << r << " returned normally";
    EXPECT_THAT(comm::testing::Message(errors[static_cast<size_t>(r)]), HasSubstr("waiting for peer"));
  }
  for (int r : {2, 3}) {
    if (errors[static_cast<size_t>(r)]) {
      EXPECT_THAT(comm::testing::Message(errors[static_cast<size_t>(r)]), HasSubstr("waiting for peer"));
    }
  }
}

TEST(Faults, BadArgumentsAreRejectedBeforeCommunicating) {
  InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    std::vector<float> v(4);
    BroadcastOptions o;
    o.root = 7;
    EXPECT_THROW(Broadcast<float>(ctx, v, o), InvalidArgumentError);
    EXPECT_THROW(Allreduce(ctx, nullptr, v.data(), 4, DType::kFloat32), InvalidArgumentError);
    std::vector<float> small(3);
    EXPECT_THROW(Allgather<float>(ctx, std::span<const float>(v), std::span<float>(small)),
                 InvalidArgumentError);
    const std::vector<uint64_t> one_count = {4};  // two ranks
    EXPECT_THROW(Allgatherv(ctx, v.data(), v.data(), one_count, DType::kFloat32), InvalidArgumentError);
    const std::vector<uint64_t> two = {1, 1}, other = {2, 2};  // to itself: sends 1, receives 2
    EXPECT_THROW(Alltoallv(ctx, v.data(), two, small.data(), other, DType::kFloat32), InvalidArgumentError);
  });
  comm::testing::ExpectNoErrors(errors);
}

}  // namespace
}  // namespace parasol::collective
