#include "parasol/comm/inprocess_transport.h"

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::comm {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

void Send(Transport& t, int peer, Tag tag, const std::vector<int>& v) {
  Request r = t.Isend(peer, tag, v.data(), v.size() * sizeof(int));
  Wait(t, r, Deadline::After(5s), "test send");
}

std::vector<int> Recv(Transport& t, int peer, Tag tag, size_t n, Deadline d = Deadline::After(5s)) {
  std::vector<int> v(n);
  Request r = t.Irecv(peer, tag, v.data(), n * sizeof(int));
  Wait(t, r, d, "test receive");
  return v;
}

TEST(InProcessTransport, SameTagArrivesInOrderAndTagsMatchIndependently) {
  InProcessWorld world(2, {.eager = true});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  Send(*t0, 1, 7, {1});
  Send(*t0, 1, 7, {2});
  Send(*t0, 1, 9, {3});
  EXPECT_EQ(Recv(*t1, 0, 9, 1), std::vector<int>{3});  // tag 9 overtakes tag 7
  EXPECT_EQ(Recv(*t1, 0, 7, 1), std::vector<int>{1});
  EXPECT_EQ(Recv(*t1, 0, 7, 1), std::vector<int>{2});
}

TEST(InProcessTransport, RendezvousSendCompletesOnlyWhenReceived) {
  InProcessWorld world(2);
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  std::vector<int> data = {4, 5, 6};
  Request s = t0->Isend(1, 1, data.data(), sizeof(int) * 3);
  EXPECT_FALSE(t0->Test(s));
  data[0] = 40;  // still the sender's buffer: the receiver sees what it holds when it takes it
  EXPECT_EQ(Recv(*t1, 0, 1, 3), (std::vector<int>{40, 5, 6}));
  EXPECT_TRUE(t0->Test(s));
}

TEST(InProcessTransport, SizeMismatchNamesPeerAndSizes) {
  InProcessWorld world(2);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    if (ctx.rank() == 0) {
      std::vector<int> v(5);
      Request r = ctx.transport().Isend(1, 3, v.data(), 20);
      Wait(ctx.transport(), r, Deadline::After(200ms), "send");
    } else {
      Recv(ctx.transport(), 0, 3, 4);
    }
  });
  ASSERT_TRUE(errors[1]);
  EXPECT_THAT(
      testing::Message(errors[1]),
      HasSubstr("rank 1: test receive: message from peer 0 (tag 3) has 20 bytes where 16 were expected"));
}

TEST(InProcessTransport, DelayedMessageArrivesAfterItsDelay) {
  InProcessWorld world(2);
  world.AddFault({.action = MessageFault::Action::kDelay, .src = 0, .dst = 1, .delay_ms = 150ms});
  auto start = std::chrono::steady_clock::now();
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    if (ctx.rank() == 0)
      Send(ctx.transport(), 1, 1, {42});
    else
      EXPECT_EQ(Recv(ctx.transport(), 0, 1, 1), std::vector<int>{42});
  });
  testing::ExpectNoErrors(errors);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
}

TEST(InProcessTransport, DelayedMessageHoldsBackLaterOnesWithSameTag) {
  InProcessWorld world(2, {.eager = true});
  world.AddFault({.action = MessageFault::Action::kDelay, .src = 0, .count = 1, .delay_ms = 100ms});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  Send(*t0, 1, 5, {1});  // delayed
  Send(*t0, 1, 5, {2});
  EXPECT_EQ(Recv(*t1, 0, 5, 1), std::vector<int>{1});
  EXPECT_EQ(Recv(*t1, 0, 5, 1), std::vector<int>{2});
}

// A receiver that looked for a delayed message just before it became visible, then waits, must
// be woken: the collectives and the parameter server poll, then wait on the epoch they read first.
// The delay runs on a driven clock, so the message becomes visible exactly when the test says.
TEST(InProcessTransport, ADelayedMessageBecomingVisibleWakesAWaiterThatLookedBefore) {
  ManualClock clock;
  InProcessWorld world(2, {.eager = true, .env = Env(nullptr, &clock)});
  world.AddFault({.action = MessageFault::Action::kDelay, .src = 0, .dst = 1, .delay_ms = 20ms});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  int got = 0;
  Request recv = t1->Irecv(0, 4, &got, sizeof got);
  Send(*t0, 1, 4, {7});
  const uint64_t epoch = t1->Epoch();
  ASSERT_FALSE(t1->Test(recv));  // not visible yet
  clock.Advance(19ms);
  ASSERT_FALSE(t1->Test(recv));  // still not: 19 of 20 ms
  EXPECT_EQ(t1->Epoch(), epoch);
  std::thread waiter([&] { t1->WaitForEvent(epoch, Deadline::After(60s)); });
  // The waiter is asleep on the epoch it read before the message became visible.
  comm::testing::WaitUntil([&] { return world.waiting() == 1; }, "rank 1 waiting for an event");
  clock.Advance(1ms);
  waiter.join();  // woken by the message becoming visible, not by its 60 s deadline
  EXPECT_NE(t1->Epoch(), epoch);
  EXPECT_TRUE(t1->Test(recv));
  EXPECT_EQ(got, 7);
}

TEST(InProcessTransport, DroppedMessageTimesOutNamingRankAndPeer) {
  InProcessWorld world(2, {.eager = true});
  world.AddFault(
      {.action = MessageFault::Action::kDrop, .src = 0, .dst = 1, .tag_mask = ~0u, .tag_value = 8});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  Send(*t0, 1, 8, {1});
  Send(*t0, 1, 9, {2});  // other tags pass
  EXPECT_EQ(Recv(*t1, 0, 9, 1), std::vector<int>{2});
  try {
    Recv(*t1, 0, 8, 1, Deadline::After(50ms));
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1: test receive: deadline passed waiting for peer 0"));
  }
}

TEST(InProcessTransport, KilledPeerFailsReceivesButEarlierMessagesArrive) {
  InProcessWorld world(3, {.eager = true});
  auto t0 = world.CreateTransport(0);
  auto t2 = world.CreateTransport(2);
  Send(*t2, 0, 1, {11});
  std::vector<int> v(1);
  Request pending = t0->Irecv(2, 2, v.data(), sizeof(int));
  world.KillRank(2);
  EXPECT_EQ(Recv(*t0, 2, 1, 1), std::vector<int>{11});  // sent before it died
  EXPECT_THROW(Wait(*t0, pending, Deadline::After(1s), "receive"), PeerGoneError);
  EXPECT_THROW(t2->Isend(0, 1, v.data(), 4), PeerGoneError);
  // A send to a dead rank vanishes instead of blocking the sender.
  Send(*t0, 2, 1, {5});
}

TEST(InProcessTransport, ASenderKilledByAFaultDiesAtItsChosenMessage) {
  InProcessWorld world(2, {.eager = true});
  world.AddFault({.action = MessageFault::Action::kKillSender, .src = 1, .skip = 2, .count = 1});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  Send(*t1, 0, 1, {1});
  Send(*t1, 0, 1, {2});
  std::vector<int> v{3};
  EXPECT_THROW(t1->Isend(0, 1, v.data(), sizeof(int)), PeerGoneError) << "its third message kills it";
  EXPECT_EQ(Recv(*t0, 1, 1, 1), std::vector<int>{1}) << "what it sent before it died arrives";
  EXPECT_EQ(Recv(*t0, 1, 1, 1), std::vector<int>{2});
  EXPECT_THROW(Recv(*t0, 1, 1, 1, Deadline::After(1s)), PeerGoneError) << "the third never does";
  EXPECT_THROW(t1->Isend(0, 2, v.data(), sizeof(int)), PeerGoneError);
}

TEST(InProcessTransport, FailureNoticeAbortsWaitingPeers) {
  InProcessWorld world(3);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    if (ctx.rank() == 0) {
      ctx.transport().NotifyFailure("rank 0: allreduce: something broke");
      return;
    }
    Recv(ctx.transport(), 0, 1, 1, Deadline::After(10s));
  });
  EXPECT_FALSE(errors[0]);
  for (int r : {1, 2}) {
    ASSERT_TRUE(errors[static_cast<size_t>(r)]);
    EXPECT_THAT(testing::Message(errors[static_cast<size_t>(r)]),
                HasSubstr("aborted because rank 0: allreduce: something broke"));
  }
}

TEST(InProcessTransport, DuplicateHasItsOwnMessageSpace) {
  InProcessWorld world(2, {.eager = true});
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    auto dup = ctx.Duplicate(Deadline::After(1s));
    if (ctx.rank() == 0) {
      Send(dup->transport(), 1, 1, {100});
      Send(ctx.transport(), 1, 1, {200});
    } else {
      EXPECT_EQ(Recv(ctx.transport(), 0, 1, 1), std::vector<int>{200});
      EXPECT_EQ(Recv(dup->transport(), 0, 1, 1), std::vector<int>{100});
    }
  });
  testing::ExpectNoErrors(errors);
}

// Ranks 0..5 split by rank % 3: groups {0, 3}, {1, 4}, {2, 5}, each ranked in world order. A ring
// inside each group passes the world rank; the same tag in another group never crosses over.
TEST(InProcessTransport, SplitGroupsRanksByColorWithTheirOwnMessageSpace) {
  InProcessWorld world(6, {.eager = true});
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    auto part = ctx.Split(ctx.rank() % 3, Deadline::After(5s));
    ASSERT_EQ(part->size(), 2);
    EXPECT_EQ(part->rank(), ctx.rank() / 3);
    const int peer = 1 - part->rank();
    Send(part->transport(), peer, 3, {ctx.rank()});
    EXPECT_EQ(Recv(part->transport(), peer, 3, 1), std::vector<int>{ctx.rank() % 3 + 3 * peer});
    // A split of a split, and a duplicate of one, keep to their members.
    auto dup = part->Duplicate(Deadline::After(5s));
    Send(dup->transport(), peer, 3, {10 * ctx.rank()});
    EXPECT_EQ(Recv(dup->transport(), peer, 3, 1), std::vector<int>{10 * (ctx.rank() % 3 + 3 * peer)});
    auto alone = part->Split(part->rank(), Deadline::After(5s));
    EXPECT_EQ(alone->size(), 1);
    EXPECT_EQ(alone->rank(), 0);
  });
  testing::ExpectNoErrors(errors);
}

TEST(InProcessTransport, SplitMembersSeeAStoppedWorldRankAndNameTheirOwnPeer) {
  InProcessWorld world(4, {.eager = true});
  auto errors = testing::RunRanks(world, [&](Context& ctx) {
    auto part = ctx.Split(ctx.rank() < 2 ? 0 : 1, Deadline::After(5s));
    if (ctx.rank() == 3) {
      world.KillRank(3);
      return;
    }
    if (ctx.rank() == 2) {  // its group's other member (world rank 3, local 1) is gone
      try {
        Recv(part->transport(), 1, 5, 1, Deadline::After(5s));
        ADD_FAILURE() << "a receive from a stopped rank returned";
      } catch (const PeerGoneError& e) {
        EXPECT_THAT(e.what(), HasSubstr("peer 1 is gone"));
      }
    }
  });
  testing::ExpectNoErrors(errors);
}

TEST(InProcessTransport, SplitRefusesANegativeColor) {
  InProcessWorld world(2, {.eager = true});
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    try {
      ctx.Split(ctx.rank() == 0 ? -1 : 0, Deadline::After(2s));
      ADD_FAILURE() << "a negative color was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), HasSubstr("rank 0 passed color -1"));
    }
  });
  testing::ExpectNoErrors(errors);
}

TEST(InProcessTransport, ProbeSeesUnreceivedMessage) {
  InProcessWorld world(2, {.eager = true});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  EXPECT_FALSE(t1->ProbeUnexpected(0));
  Send(*t0, 1, 77, {1});
  EXPECT_EQ(t1->ProbeUnexpected(0), std::optional<Tag>(77));
}

TEST(InProcessTransport, TryReceiveTakesAnySizeFromAnySenderInOrder) {
  ManualClock clock;
  InProcessWorld world(3, {.env = Env(nullptr, &clock)});
  world.AddFault({.action = MessageFault::Action::kDelay, .src = 1, .count = 1, .delay_ms = 100ms});
  auto t0 = world.CreateTransport(0);
  auto t1 = world.CreateTransport(1);
  auto t2 = world.CreateTransport(2);
  std::vector<int> a = {1, 2, 3}, b = {4}, c = {5, 6};
  Request s1 = t1->Isend(0, 40, a.data(), 12);  // delayed
  Request s2 = t1->Isend(0, 40, b.data(), 4);   // held back behind it
  Request s3 = t2->Isend(0, 40, c.data(), 8);
  auto first = t0->TryReceive(40);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->src, 2);
  EXPECT_EQ(first->data.size(), 8u);
  EXPECT_FALSE(t0->TryReceive(40));  // rank 1's are not visible yet
  EXPECT_FALSE(t0->TryReceive(41));
  clock.Advance(99ms);
  EXPECT_FALSE(t0->TryReceive(40));  // nor after 99 of the 100 ms
  clock.Advance(1ms);
  auto second = t0->TryReceive(40);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->src, 1);
  EXPECT_EQ(second->data.size(), 12u);
  auto third = t0->TryReceive(40);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->data.size(), 4u);
  // Taking a message completes its (rendezvous) send.
  EXPECT_TRUE(t1->Test(s1));
  EXPECT_TRUE(t1->Test(s2));
  EXPECT_TRUE(t2->Test(s3));
}

TEST(InProcessTransport, ExchangeWithAllGathersEveryRank) {
  InProcessWorld world(5);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    int64_t mine = 10 * ctx.rank() + 1;
    std::vector<int64_t> all(5);
    ExchangeWithAll(ctx.transport(), 3, &mine, sizeof(mine), all.data(), Deadline::After(5s), "exchange");
    EXPECT_EQ(all, (std::vector<int64_t>{1, 11, 21, 31, 41}));
  });
  testing::ExpectNoErrors(errors);
}

}  // namespace
}  // namespace parasol::comm
