#include "parasol/apps/mf/ratings.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::mf {
namespace {

using ::testing::HasSubstr;

class RatingsFile : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    path_ = TestPath("ratings.data");
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string ErrorFor(const std::string& text) {
    try {
      ReadMovieLens(Write(text));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::string path_;
};

TEST_F(RatingsFile, ReadsMovieLensLines) {
  RatingSet s = ReadMovieLens(Write("196\t242\t3\t881250949\n186 302 4.5 891717742\n\n22\t377\t1\n"));
  ASSERT_EQ(s.ratings.size(), 3u);
  EXPECT_EQ(s.ratings[0].user, 195u);
  EXPECT_EQ(s.ratings[0].item, 241u);
  EXPECT_EQ(s.ratings[0].value, 3.0f);
  EXPECT_EQ(s.ratings[1].value, 4.5f);
  EXPECT_EQ(s.ratings[2].user, 21u);
  EXPECT_EQ(s.num_users, 196u);
  EXPECT_EQ(s.num_items, 377u);
  EXPECT_NEAR(s.Mean(), 8.5 / 3, 1e-9);
}

// Current MovieLens releases ship ratings.csv with a header; its first line is not a rating.
TEST_F(RatingsFile, ReadsTheCsvOfCurrentMovieLensReleases) {
  RatingSet s =
      ReadMovieLens(Write("userId,movieId,rating,timestamp\r\n1,31,2.5,1260759144\r\n7,29,3.0,1260759179\n"));
  ASSERT_EQ(s.ratings.size(), 2u);
  EXPECT_EQ(s.ratings[0].item, 30u);
  EXPECT_EQ(s.ratings[1].user, 6u);
  EXPECT_EQ(s.ratings[1].value, 3.0f);
  EXPECT_THAT(ErrorFor("userId,movieId,rating,timestamp\n1,2,x,4\n"),
              HasSubstr(":2: rating 'x' is not a finite number"));
  // Without the header the file is u.data: a comma is no separator there.
  EXPECT_THAT(ErrorFor("1,31,2.5,1260759144\n"), HasSubstr(":1: user id '1,31,2.5,1260759144'"));
}

TEST_F(RatingsFile, BadLinesAreReportedWithFileAndLine) {
  EXPECT_THAT(ErrorFor("1\t2\t3\t4\n5\tx\t3\t4\n"),
              HasSubstr(path_ + ":2: item id 'x' is not a whole number"));
  EXPECT_THAT(ErrorFor("1\t2\n"), HasSubstr(":1: missing rating"));
  EXPECT_THAT(ErrorFor("0\t2\t3\n"), HasSubstr(":1: user and item ids start at 1"));
  EXPECT_THAT(ErrorFor("1\t2\t3\t4\t5\n"), HasSubstr(":1: more than 4 fields"));
  EXPECT_THAT(ErrorFor("1\t2\tnan\n"), HasSubstr(":1: rating 'nan' is not a finite number"));
  // An id the file cannot back would size the factor tables (2^30 users x rank floats).
  EXPECT_THAT(ErrorFor("1\t2\t3\n1073741824\t2\t3\n"),
              HasSubstr(":2: id 1073741824 is larger than the file's 21 bytes"));
  EXPECT_THAT(ErrorFor("1\t2\t3\t12x\n"), HasSubstr(":1: timestamp '12x' is not a whole number"));
  EXPECT_THAT(ErrorFor(""), HasSubstr(": no ratings"));
  try {
    ReadMovieLens("/nonexistent/u.data");
    ADD_FAILURE() << "a missing file was read";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/u.data: cannot open"));
  }
}

TEST(SyntheticRatings, SameSeedSameRatingsInRange) {
  SyntheticOptions o{.users = 50, .items = 40, .ratings = 2000, .rank = 4, .seed = 3};
  RatingSet a = SyntheticRatings(o), b = SyntheticRatings(o);
  o.seed = 4;
  RatingSet c = SyntheticRatings(o);
  ASSERT_EQ(a.ratings.size(), 2000u);
  bool same = true, differs = false;
  for (size_t i = 0; i < a.ratings.size(); ++i) {
    same &= a.ratings[i].user == b.ratings[i].user && a.ratings[i].value == b.ratings[i].value;
    differs |= a.ratings[i].value != c.ratings[i].value;
    EXPECT_GE(a.ratings[i].value, 1.0f);
    EXPECT_LE(a.ratings[i].value, 5.0f);
    EXPECT_LT(a.ratings[i].user, 50u);
    EXPECT_LT(a.ratings[i].item, 40u);
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
}

TEST(SplitByUser, KeepsUsersWholeAndBalancesRatings) {
  RatingSet s = SyntheticRatings({.users = 300, .items = 100, .ratings = 30000, .seed = 5});
  // Make one user much heavier than the rest, as real data has.
  for (int i = 0; i < 500; ++i) s.ratings.push_back(Rating{7, static_cast<uint32_t>(i % 100), 3.0f});
  auto split = SplitByUser(s, 4);
  ASSERT_EQ(split.size(), 4u);
  std::map<uint32_t, size_t> owner;
  size_t total = 0, most = 0, least = ~size_t{0};
  for (size_t p = 0; p < split.size(); ++p) {
    total += split[p].size();
    most = std::max(most, split[p].size());
    least = std::min(least, split[p].size());
    EXPECT_TRUE(std::is_sorted(split[p].begin(), split[p].end()));
    for (uint32_t k : split[p]) {
      auto [it, fresh] = owner.emplace(s.ratings[k].user, p);
      EXPECT_EQ(it->second, p) << "user " << s.ratings[k].user << " split over parts";
    }
  }
  EXPECT_EQ(total, s.ratings.size());
  EXPECT_LE(most - least, 600u) << "parts differ by more than the heaviest user";
}

}  // namespace
}  // namespace parasol::apps::mf
