// Ratings for matrix factorisation: the MovieLens format, a synthetic low-rank generator for
// when the real data is missing, and a balanced split of the ratings over workers by user.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parasol::apps::mf {

struct Rating {
  uint32_t user;  // 0-based
  uint32_t item;  // 0-based
  float value;
};

struct RatingSet {
  std::vector<Rating> ratings;
  uint32_t num_users = 0;  // ids are below these
  uint32_t num_items = 0;
  std::string source;  // where the ratings came from, for reports

  double Mean() const;
};

// MovieLens `u.data`: `user item rating timestamp` per line, tab- or space-separated, ids from 1;
// or the `ratings.csv` of current releases (header `userId,movieId,rating,timestamp`, commas).
// Throws ParseError "path:line: what is wrong" for a malformed line, IoError if unreadable.
RatingSet ReadMovieLens(const std::string& path);

struct SyntheticOptions {
  uint32_t users = 943;
  uint32_t items = 1682;
  uint64_t ratings = 100000;
  uint32_t rank = 8;  // of the hidden model
  uint64_t seed = 1;
};
// Ratings from a hidden low-rank model plus noise, clipped to [1, 5]; the same for the same seed.
RatingSet SyntheticRatings(const SyntheticOptions& options);

// Splits the ratings over `parts` workers by user (a user's ratings stay together), balancing
// the rating counts (largest users first, each to the least loaded part). Returns rating indices
// per part, each in increasing order.
std::vector<std::vector<uint32_t>> SplitByUser(const RatingSet& data, int parts);

}  // namespace parasol::apps::mf
