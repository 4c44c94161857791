#include "parasol/apps/mf/ratings.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "parasol/core/balance.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::mf {

double RatingSet::Mean() const {
  double sum = 0;
  for (const Rating& r : ratings) sum += r.value;
  return ratings.empty() ? 0 : sum / static_cast<double>(ratings.size());
}

namespace {

constexpr std::string_view kCsvHeader = "userId,movieId,rating";

// The fields of a line: blank-separated (u.data) or comma-separated (ratings.csv).
std::vector<std::string_view> Fields(std::string_view line, bool csv) {
  if (csv) return SplitFields(line, ',');
  std::vector<std::string_view> fields;
  size_t pos = 0;
  for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) fields.push_back(f);
  return fields;
}

Rating ParseLine(std::string_view line, bool csv, const std::string& path, long lineno) {
  const std::vector<std::string_view> f = Fields(line, csv);
  if (f.size() > 4) throw ParseError(path, lineno, "more than 4 fields");
  auto at = [&](size_t i) { return i < f.size() ? f[i] : std::string_view{}; };  // missing: empty
  auto user = ParseField<uint32_t>(at(0), path, lineno, "user id");
  auto item = ParseField<uint32_t>(at(1), path, lineno, "item id");
  auto value = ParseField<float>(at(2), path, lineno, "rating");
  if (f.size() == 4) ParseField<int64_t>(f[3], path, lineno, "timestamp");
  if (user == 0 || item == 0) throw ParseError(path, lineno, "user and item ids start at 1");
  if (user > (1u << 30) || item > (1u << 30)) throw ParseError(path, lineno, "id larger than 2^30");
  return Rating{user - 1, item - 1, value};
}

}  // namespace

RatingSet ReadMovieLens(const std::string& path) {
  LineReader in(path, {.skip_blank = true});
  RatingSet set;
  set.source = path;
  // Factor tables are sized by the largest ids: ids beyond the file's size in bytes cannot number
  // users and items densely, and would size tables by a number the file does not back.
  const uint64_t id_limit = std::max<uint64_t>(in.file_size_bytes(), 1024);
  std::string_view line;
  bool csv = false;
  while (in.Next(&line)) {
    // Current MovieLens releases: ratings.csv with this header, comma-separated.
    if (in.line_number() == 1 && line.starts_with(kCsvHeader)) {
      csv = true;
      continue;
    }
    Rating r = ParseLine(line, csv, path, in.line_number());
    if (r.user >= id_limit || r.item >= id_limit) {
      in.Fail(fmt::format("id {} is larger than the file's {} bytes: ids must number users and items densely",
                          std::max(r.user, r.item) + 1, in.file_size_bytes()));
    }
    set.num_users = std::max(set.num_users, r.user + 1);
    set.num_items = std::max(set.num_items, r.item + 1);
    set.ratings.push_back(r);
  }
  if (set.ratings.empty()) throw ParseError(path, 0, "no ratings");
  return set;
}

RatingSet SyntheticRatings(const SyntheticOptions& o) {
  if (o.users == 0 || o.items == 0 || o.rank == 0)
    throw InvalidArgumentError("synthetic ratings need users, items and rank");
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float scale = 1.0f / std::sqrt(static_cast<float>(o.rank));
  std::vector<float> u(static_cast<size_t>(o.users) * o.rank), v(static_cast<size_t>(o.items) * o.rank);
  for (auto& x : u) x = normal(rng) * scale;
  for (auto& x : v) x = normal(rng) * scale;
  RatingSet set;
  set.num_users = o.users;
  set.num_items = o.items;
  set.source =
      fmt::format("synthetic ({} users, {} items, rank {}, seed {})", o.users, o.items, o.rank, o.seed);
  // Popular items are rated more often, as in real data (Zipf-like).
  std::vector<double> weight(o.items);
  for (uint32_t i = 0; i < o.items; ++i) weight[i] = 1.0 / std::pow(static_cast<double>(i + 1), 0.8);
  std::discrete_distribution<uint32_t> pick_item(weight.begin(), weight.end());
  std::uniform_int_distribution<uint32_t> pick_user(0, o.users - 1);
  set.ratings.reserve(o.ratings);
  for (uint64_t n = 0; n < o.ratings; ++n) {
    uint32_t user = pick_user(rng), item = pick_item(rng);
    float dot = 0;
    for (uint32_t k = 0; k < o.rank; ++k) dot += u[size_t{user} * o.rank + k] * v[size_t{item} * o.rank + k];
    float value = std::clamp(3.5f + 1.2f * dot + 0.3f * normal(rng), 1.0f, 5.0f);
    set.ratings.push_back(Rating{user, item, value});
  }
  return set;
}

std::vector<std::vector<uint32_t>> SplitByUser(const RatingSet& data, int parts) {
  if (parts < 1) throw InvalidArgumentError("SplitByUser: parts must be at least 1");
  std::vector<uint64_t> count(data.num_users, 0);
  for (const Rating& r : data.ratings) ++count[r.user];
  // Ties go to the lower part, so the split is the same everywhere.
  const std::vector<uint32_t> owner = AssignToParts(count, static_cast<uint32_t>(parts));
  std::vector<std::vector<uint32_t>> split(static_cast<size_t>(parts));
  for (uint32_t i = 0; i < data.ratings.size(); ++i) split[owner[data.ratings[i].user]].push_back(i);
  return split;
}

}  // namespace parasol::apps::mf
