// Sufficient factors survive the trip through bytes exactly, block after block, and a damaged
// block is an error naming the rank, not a crash or an allocation sized by garbage.
#include "parasol/apps/mlr/sufficient_factors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "parasol/core/error.h"

namespace parasol::apps::mlr {
namespace {

struct Sample {
  std::vector<double> u;
  std::vector<uint32_t> ids;
  std::vector<double> values;
};

std::vector<Sample> RandomSamples(std::mt19937& rng, size_t count, size_t classes) {
  std::uniform_real_distribution<double> real(-3, 3);
  std::vector<Sample> out(count);
  for (Sample& s : out) {
    for (size_t c = 0; c < classes; ++c) s.u.push_back(real(rng));
    uint32_t id = rng() % 5;
    for (size_t n = rng() % 40; n > 0; --n) {
      s.ids.push_back(id);
      s.values.push_back(real(rng));
      id += 1 + (rng() % 4 == 0 ? rng() % 100000 : rng() % 50);  // gaps of one to three bytes
    }
  }
  if (count > 1) out[1].ids.push_back(std::numeric_limits<uint32_t>::max()), out[1].values.push_back(0.25);
  return out;
}

TEST(SufficientFactors, BlocksRoundTripExactly) {
  std::mt19937 rng(7);
  const size_t classes = 5;
  std::vector<Sample> all;
  std::vector<int64_t> words;
  FactorWriter writer(classes);
  for (size_t count : {size_t{3}, size_t{0}, size_t{17}, size_t{1}}) {  // one block per "rank"
    const std::vector<Sample> block = RandomSamples(rng, count, classes);
    for (const Sample& s : block) writer.Add(s.u, s.ids, s.values);
    const std::vector<int64_t> w = writer.Finish();
    words.insert(words.end(), w.begin(), w.end());
    all.insert(all.end(), block.begin(), block.end());
  }
  FactorReader reader(words, classes, 0);
  size_t i = 0;
  for (SampleFactors f; reader.Next(&f); ++i) {
    ASSERT_LT(i, all.size());
    EXPECT_EQ(std::vector<double>(f.u.begin(), f.u.end()), all[i].u) << i;
    EXPECT_EQ(std::vector<uint32_t>(f.ids.begin(), f.ids.end()), all[i].ids) << i;
    EXPECT_EQ(std::vector<double>(f.values.begin(), f.values.end()), all[i].values) << i;
  }
  EXPECT_EQ(i, all.size());
}

TEST(SufficientFactors, SmallGapsTakeOneByte) {
  FactorWriter writer(2);
  const double u[] = {0.5, -0.5}, values[] = {1, 2, 3};
  const uint32_t ids[] = {3, 100, 227};
  writer.Add(u, ids, values);
  // Count (1) + u (16) + nnz (1) + gaps 3, 97, 127 (1 each) + values (24) = 45 bytes: 6 words.
  EXPECT_EQ(writer.Finish().size(), 6u);
}

TEST(SufficientFactors, IdsOutOfOrderAreRefused) {
  FactorWriter writer(1);
  const double u[] = {1}, values[] = {1, 1};
  const uint32_t ids[] = {5, 5};
  EXPECT_THROW(writer.Add(u, ids, values), InvalidArgumentError);
}

TEST(SufficientFactors, DamagedBlocksAreErrorsNamingTheRank) {
  FactorWriter writer(3);
  const double u[] = {1, 2, 3}, values[] = {4, 5};
  const uint32_t ids[] = {1, 9};
  writer.Add(u, ids, values);
  const std::vector<int64_t> good = writer.Finish();
  auto read_all = [](const std::vector<int64_t>& words) {
    FactorReader reader(words, 3, 4);
    for (SampleFactors f; reader.Next(&f);) {
    }
  };
  read_all(good);
  std::vector<int64_t> truncated(good.begin(), good.end() - 1);
  EXPECT_THROW(read_all(truncated), MalformedMessage);
  // A sample count of 2^60 with one sample's bytes: fails at the end of the bytes.
  std::vector<int64_t> huge_count = good;
  auto* bytes = reinterpret_cast<unsigned char*>(huge_count.data());
  std::vector<unsigned char> rest(bytes + 1, bytes + good.size() * 8 - 9);
  const unsigned char count[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10};
  std::memcpy(bytes, count, sizeof count);
  std::memcpy(bytes + sizeof count, rest.data(), rest.size());
  try {
    read_all(huge_count);
    ADD_FAILURE() << "a huge count was accepted";
  } catch (const MalformedMessage& e) {
    EXPECT_NE(std::string(e.what()).find("rank 4"), std::string::npos) << e.what();
  }
  // A feature count larger than the bytes left.
  std::vector<int64_t> many = good;
  bytes = reinterpret_cast<unsigned char*>(many.data());
  bytes[1 + 3 * 8] = 0x7f;
  EXPECT_THROW(read_all(many), MalformedMessage);
}

}  // namespace
}  // namespace parasol::apps::mlr
