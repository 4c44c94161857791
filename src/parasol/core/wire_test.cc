// Varints as LEB128 writes them, and a reader that refuses what does not decode.
#include "parasol/core/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace parasol {
namespace {

std::vector<unsigned> Bytes(WireWriter& w) {
  std::vector<unsigned> out;
  for (std::byte b : w.bytes()) out.push_back(static_cast<unsigned>(b));
  return out;
}

TEST(Wire, VarintsAreLowGroupFirst) {
  WireWriter w;
  w.PutVarint(0);
  w.PutVarint(127);
  w.PutVarint(128);
  w.PutVarint(300);
  EXPECT_EQ(Bytes(w), (std::vector<unsigned>{0x00, 0x7f, 0x80, 0x01, 0xac, 0x02}));
}

TEST(Wire, VarintsRoundTripAtEveryWidth) {
  std::vector<uint64_t> values = {0, 1, std::numeric_limits<uint64_t>::max()};
  for (int bits = 6; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
  }
  WireWriter w;
  for (uint64_t v : values) w.PutVarint(v);
  WireReader r(w.bytes().data(), w.size(), 1);
  for (uint64_t v : values) EXPECT_EQ(r.GetVarint(), v);
  EXPECT_TRUE(r.done());
}

TEST(Wire, TruncatedOrOverlongVarintsAreMalformed) {
  const std::byte cut[] = {std::byte{0x80}, std::byte{0x80}};
  WireReader r1(cut, sizeof cut, 3);
  EXPECT_THROW(r1.GetVarint(), MalformedMessage);
  std::vector<std::byte> overlong(11, std::byte{0x80});
  overlong.push_back(std::byte{0x01});
  WireReader r2(overlong.data(), overlong.size(), 3);
  EXPECT_THROW(r2.GetVarint(), MalformedMessage);
}

}  // namespace
}  // namespace parasol
