#include "parasol/core/process_memory.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>

namespace parasol {
namespace {

TEST(ProcessMemory, PeakCoversABlockTouchedAfterTheResetAndFreedSince) {
  if (!ResetPeakResidentMemory()) GTEST_SKIP() << "/proc/self/clear_refs cannot be written here";
  const ResidentMemorySizes before = ResidentMemory();
  ASSERT_GT(before.current, 0);
  constexpr size_t kBytes = size_t{64} << 20;
  // Mapped and unmapped here, not through the allocator (a sanitizer's keeps freed blocks).
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, kBytes);
  EXPECT_GE(ResidentMemory().current - before.current, static_cast<int64_t>(kBytes) * 9 / 10);
  ASSERT_EQ(munmap(block, kBytes), 0);
  const ResidentMemorySizes after = ResidentMemory();
  EXPECT_GE(after.peak - before.current, static_cast<int64_t>(kBytes) * 9 / 10);
  EXPECT_LT(after.current - before.current, static_cast<int64_t>(kBytes) / 2);
  // A reset brings the peak down to what is resident now.
  ASSERT_TRUE(ResetPeakResidentMemory());
  EXPECT_LT(ResidentMemory().peak - after.current, static_cast<int64_t>(kBytes) / 2);
}

}  // namespace
}  // namespace parasol
