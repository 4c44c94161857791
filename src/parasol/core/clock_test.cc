#include "parasol/core/clock.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace parasol {
namespace {

using namespace std::chrono_literals;

TEST(SystemClock, SleepsAtLeastAsLongAsAsked) {
  SystemClock clock;
  const auto start = clock.Now();
  clock.SleepFor(2ms);
  EXPECT_GE(clock.Now() - start, 2ms);
  EXPECT_FALSE(clock.driven());
}

TEST(ManualClock, TimeStandsStillUntilAdvanced) {
  const Clock::TimePoint start{std::chrono::seconds(1000)};
  ManualClock clock(start);
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(250ms);
  EXPECT_EQ(clock.Now(), start + 250ms);
  clock.Advance(-5ms);  // time never goes back
  EXPECT_EQ(clock.Now(), start + 250ms);
  EXPECT_TRUE(clock.driven());
}

// A sleeper wakes when time reaches its wake-up time and not before: the test knows the thread
// sleeps (WaitForSleepers) before it moves time, so nothing here depends on the machine's speed.
TEST(ManualClock, ASleeperWakesWhenTimeReachesItsWakeUp) {
  ManualClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(100ms);
    woke = true;
  });
  ASSERT_TRUE(clock.WaitForSleepers(1, Deadline::After(10s)));
  clock.Advance(60ms);
  EXPECT_EQ(clock.sleepers(), 1);  // 60 of 100 ms: still asleep (it re-checks under the lock)
  EXPECT_FALSE(woke.load());
  clock.Advance(40ms);
  EXPECT_EQ(clock.sleepers(), 0);  // reached: no longer asleep, even before the thread has run
  sleeper.join();
  EXPECT_TRUE(woke.load());
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(ManualClock, SleepingUntilAPastTimeReturnsAtOnce) {
  ManualClock clock;
  clock.SleepUntil(clock.Now() - 1s);
  clock.SleepFor(0ms);
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(ManualClock, WaitingForSleepersThatNeverComeEndsAtTheDeadline) {
  ManualClock clock;
  EXPECT_FALSE(clock.WaitForSleepers(1, Deadline::After(20ms)));
}

TEST(ManualClock, ListenersHearEveryMoveUntilRemoved) {
  ManualClock clock;
  std::vector<Clock::TimePoint> heard;
  const uint64_t handle = clock.AddListener([&] { heard.push_back(clock.Now()); });
  const auto start = clock.Now();
  clock.Advance(1ms);
  clock.Advance(2ms);
  clock.RemoveListener(handle);
  clock.Advance(3ms);
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0], start + 1ms);
  EXPECT_EQ(heard[1], start + 3ms);
}

TEST(SystemClock, HasNoListenersToCall) {
  SystemClock clock;
  EXPECT_EQ(clock.AddListener([] { FAIL() << "the system clock called a listener"; }), 0u);
  clock.SleepFor(1ms);
}

}  // namespace
}  // namespace parasol
