#include "parasol/comm/memory_region.h"

#include <chrono>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::comm {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The ring of puts and gets (comm/testing.h), over regions of different sizes.
TEST(MemoryRegion, PutAndGetBetweenRanks) {
  InProcessWorld world(4);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    int n = ctx.size(), r = ctx.rank();
    std::vector<int64_t> mem(static_cast<size_t>(n + 1 + r), -1);  // sizes differ
    mem[0] = 1000 + r;
    auto region = ctx.transport().RegisterMemory(mem.data(), mem.size() * 8, Deadline::After(5s));
    EXPECT_EQ(region->remote_bytes((r + 1) % n), static_cast<size_t>(n + 1 + (r + 1) % n) * 8);
    testing::CheckRegionRing(*region, mem.data(), r, n, 5s);
  });
  testing::ExpectNoErrors(errors);
}

TEST(MemoryRegion, OutOfRangePutIsAnError) {
  InProcessWorld world(2);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    std::vector<char> mem(64);
    auto region = ctx.transport().RegisterMemory(mem.data(), mem.size(), Deadline::After(5s));
    char c = 0;
    if (ctx.rank() == 0) region->Put(1, 60, &c, 8);
    region->Close(Deadline::After(100ms));
  });
  EXPECT_THAT(testing::Message(errors[0]),
              HasSubstr("rank 0: put: bytes [60, 68) lie outside peer 1's region of 64 bytes"));
  // Rank 0 never reached Close: rank 1 gets a timeout, not a hang.
  EXPECT_THAT(testing::Message(errors[1]), HasSubstr("rank 1: close memory region: deadline passed"));
}

TEST(MemoryRegion, RegistrationTimesOutWhenARankNeverComes) {
  InProcessWorld world(3);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    if (ctx.rank() == 2) return;
    char mem[8];
    ctx.transport().RegisterMemory(mem, 8, Deadline::After(100ms));
  });
  EXPECT_THAT(testing::Message(errors[0]), HasSubstr("register memory: deadline passed with 2 of 3 ranks"));
}

}  // namespace
}  // namespace parasol::comm
