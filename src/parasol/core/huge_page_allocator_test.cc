#include "parasol/core/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace parasol {
namespace {

// The kernel's transparent huge page mode ("always", "madvise" or "never"), or "" if unreadable.
std::string HugePageMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? ""
                                                                 : line.substr(open + 1, close - open - 1);
}

// The kB of huge pages backing the mapping that holds `p` (/proc/self/smaps).
int64_t HugePageKbAt(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::stoll(line.substr(14));
    }
  }
  return -1;
}

TEST(HugePageAllocator, LargeBlocksAreAlignedToHugePagesAndSmallOnesWork) {
  HugePageVector<uint32_t> large(size_t{3} << 20);  // 12 MB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, 0u);
  HugePageVector<uint32_t> small(100, 7);
  EXPECT_EQ(small[99], 7u);
  small.resize(size_t{1} << 20, 3);  // grows past the threshold: moved into an advised block
  EXPECT_EQ(small[99], 7u);
  EXPECT_EQ(small.back(), 3u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kHugePageBytes, 0u);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST(HugePageAllocator, TouchedLargeBlockIsBackedByHugePagesWhereTheKernelGivesThem) {
  const std::string mode = HugePageMode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "transparent huge pages: '" << mode << "'";
  constexpr size_t kBytes = size_t{32} << 20;
  HugePageVector<char> block(kBytes);
  std::memset(block.data(), 1, kBytes);
  // Compaction may fail to find some 2 MB runs on a fragmented machine: most, not all.
  EXPECT_GE(HugePageKbAt(block.data()), static_cast<int64_t>(kBytes / 1024 / 2));
}
#endif

}  // namespace
}  // namespace parasol
