#include "parasol/comm/testing.h"

#include <atomic>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::comm::testing {
namespace {

using namespace std::chrono_literals;

// A rank that never returns ends the test process with its rank named, long before ctest's
// timeout would (here 300 ms instead of the usual two minutes).
TEST(RunRanksDeathTest, AHungRankIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        InProcessWorld world(3);
        RunRanks(
            world,
            [](Context& ctx) {
              if (ctx.rank() == 1) std::this_thread::sleep_for(1h);
            },
            {}, 300ms);
      },
      "RunRanks: rank 1 did not finish within 300 ms");
}

TEST(RunRanks, ReturnsWhatEachRankThrew) {
  InProcessWorld world(3);
  auto errors = RunRanks(world, [](Context& ctx) {
    if (ctx.rank() == 2) throw InvalidArgumentError("bad");
  });
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_FALSE(errors[0]);
  EXPECT_FALSE(errors[1]);
  EXPECT_EQ(Message(errors[2]), "bad");
}

TEST(WaitUntil, EndsWhenTheConditionHoldsOrNamesWhatItWaitedFor) {
  std::atomic<bool> set{false};
  std::thread setter([&] { set = true; });
  WaitUntil([&] { return set.load(); }, "the setter");
  setter.join();
  try {
    WaitUntil([] { return false; }, "a condition that never holds", 20ms);
    FAIL() << "returned";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("timed out after 20 ms waiting for a condition that never holds"));
  }
}

}  // namespace
}  // namespace parasol::comm::testing
