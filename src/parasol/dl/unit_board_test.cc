// The handshake between the training thread and the communication thread, with real threads.
#include "parasol/dl/unit_board.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace parasol::dl {
namespace {

using namespace std::chrono_literals;

std::chrono::steady_clock::time_point In(std::chrono::milliseconds ms) {
  return std::chrono::steady_clock::now() + ms;
}

// Units of stages 0, 0, 1, 1, 2 (backward makes the last ready first).
UnitBoard FiveUnits() { return UnitBoard({0, 0, 1, 1, 2}, 3); }

TEST(UnitBoard, TheCommunicationThreadRunsEveryLaunchedUnitInItsOwnOrder) {
  UnitBoard board = FiveUnits();
  std::vector<int> order;
  std::thread comm([&] {
    for (int step = 0; step < 3; ++step) {
      ASSERT_TRUE(board.TakeStep());
      for (int u = 0; u < 5; ++u) {  // in forward order, whatever order they were launched in
        ASSERT_TRUE(board.TakeLaunch(u));
        order.push_back(u);
        board.MarkDone(u);
      }
    }
  });
  for (int step = 0; step < 3; ++step) {
    board.BeginStep();
    for (int u = 4; u >= 0; --u) board.Launch(u);
    ASSERT_TRUE(board.WaitDone(0, 5, In(60s)));
  }
  comm.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  EXPECT_EQ(board.units_done(), 15u);
}

TEST(UnitBoard, AWaitForAUnitNotDoneEndsAtItsDeadline) {
  UnitBoard board = FiveUnits();
  EXPECT_TRUE(board.WaitDone(0, 5, In(0ms)));  // nothing pending before the first step
  board.BeginStep();
  board.Launch(4);
  board.MarkDone(4);
  EXPECT_TRUE(board.WaitDone(4, 5, In(0ms)));
  EXPECT_FALSE(board.WaitDone(0, 5, In(20ms)));
}

TEST(UnitBoard, TheCommunicationThreadsErrorReachesTheWaitingTrainingThread) {
  UnitBoard board = FiveUnits();
  board.BeginStep();
  std::thread comm([&] {
    ASSERT_TRUE(board.TakeStep());
    board.Fail(std::make_exception_ptr(std::runtime_error("rank 1 died")));
  });
  EXPECT_THROW(
      {
        try {
          board.WaitDone(0, 5, In(60s));
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "rank 1 died");
          throw;
        }
      },
      std::runtime_error);
  comm.join();
  EXPECT_TRUE(board.failed());
}

TEST(UnitBoard, StopEndsEveryWaitOfTheCommunicationThread) {
  UnitBoard board = FiveUnits();
  std::thread step([&] { EXPECT_FALSE(board.TakeStep()); });  // no step begun
  std::thread launch([&] { EXPECT_FALSE(board.TakeLaunch(2)); });
  std::thread frontier([&] { EXPECT_FALSE(board.WaitFrontierBelow(0)); });
  board.Stop();
  step.join();
  launch.join();
  frontier.join();
}

// The frontier is the lowest stage from which every stage is launched: it falls only when a
// whole stage is in.
TEST(UnitBoard, TheFrontierFallsAsWholeStagesAreLaunched) {
  UnitBoard board = FiveUnits();
  board.BeginStep();
  EXPECT_EQ(board.local_frontier(), 3);
  board.Launch(4);
  EXPECT_EQ(board.local_frontier(), 2);
  EXPECT_TRUE(board.WaitFrontierBelow(3));
  board.Launch(2);
  EXPECT_EQ(board.local_frontier(), 2);
  std::thread comm([&] { EXPECT_TRUE(board.WaitFrontierBelow(2)); });
  board.Launch(3);
  comm.join();
  EXPECT_EQ(board.local_frontier(), 1);
  board.Launch(0);
  board.Launch(1);
  EXPECT_EQ(board.local_frontier(), 0);
}

}  // namespace
}  // namespace parasol::dl
