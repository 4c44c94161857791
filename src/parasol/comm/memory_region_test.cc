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

// Each rank puts its id into slot `rank` of its right neighbour and gets slot 0 of its left.
TEST(MemoryRegion, PutAndGetBetweenRanks) {
  InProcessWorld world(4);
  auto errors = testing::RunRanks(world, [](Context& ctx) {
    int n = ctx.size(), r = ctx.rank();
    std::vector<int64_t> mem(static_cast<size_t>(n + 1 + r), -1);  // sizes differ
    mem[0] = 1000 + r;
    auto region = ctx.transport().RegisterMemory(mem.data(), mem.size() * 8, Deadline::After(5s));
    EXPECT_EQ(region->remote_bytes((r + 1) % n), static_cast<size_t>(n + 1 + (r + 1) % n) * 8);
    int64_t v = r;
    Request put = region->Put((r + 1) % n, 8 * static_cast<size_t>(r + 1), &v, 8);
    testing::WaitUntil([&] { return region->Test(put); }, "the put to complete");
    int64_t got = 0;
    Request get = region->Get((r + n - 1) % n, 0, &got, 8);
    testing::WaitUntil([&] { return region->Test(get); }, "the get to complete");
    EXPECT_EQ(got, 1000 + (r + n - 1) % n);
    int64_t flushed = 0;  // a get with no request: in place once the flush returns
    region->GetFlushed((r + 2) % n, 0, &flushed, 8);
    region->Flush(Deadline::After(5s));
    EXPECT_EQ(flushed, 1000 + (r + 2) % n);
    region->Close(Deadline::After(5s));  // a barrier: every put has landed
    EXPECT_EQ(mem[static_cast<size_t>((r + n - 1) % n + 1)], (r + n - 1) % n);
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
