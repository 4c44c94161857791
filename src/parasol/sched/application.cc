#include "parasol/sched/application.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "parasol/core/csv_reader.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::sched {

namespace fs = std::filesystem;

namespace {

struct KnownApp {
  const char* name;
  int max_epochs;
  int max_local_bsz;  // 0: from the profile
};
constexpr KnownApp kKnown[] = {{"bert", 2, 0},      {"cifar10", 100, 0},    {"ncf", 10, 0},
                               {"imagenet", 90, 0}, {"deepspeech2", 80, 0}, {"yolov3", 50, 8}};

std::vector<int> Digits(uint64_t id);

struct Range {
  double lo, hi;
};

// Rows of a CSV file of numbers with the given header, column i within ranges[i]. Throws
// ParseError naming file and line.
std::vector<std::vector<double>> ReadNumbers(const std::string& path, const std::string& header,
                                             const std::vector<Range>& ranges) {
  const size_t columns = static_cast<size_t>(std::count(header.begin(), header.end(), ',')) + 1;
  std::vector<std::vector<double>> rows;
  ReadCsvRecords(path, header, columns, [&](long lineno, const std::vector<std::string>& cells) {
    std::vector<double> row;
    for (const std::string& cell : cells) {
      const Range& r = ranges[row.size()];
      row.push_back(
          ParseFieldIn<double>(cell, path, lineno, fmt::format("column {}", row.size() + 1), r.lo, r.hi));
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

// A placement id: GPUs per node as decimal digits (1-9 each), at most 15 nodes.
std::vector<int> PlacementDigits(double id, const std::string& path) {
  if (!(id >= 1 && id < 1e15) || id != std::floor(id)) {
    throw ParseError(path, 0, fmt::format("placement {} is not a whole number of 1 to 15 digits", id));
  }
  return Digits(static_cast<uint64_t>(id));
}

// GPUs per node as the smallest rotation, read as a number (the profiles' placement id).
uint64_t PlacementId(std::vector<int> p) {
  p.erase(std::remove(p.begin(), p.end(), 0), p.end());
  std::vector<int> best = p;
  for (size_t i = 1; i < p.size(); ++i) {
    std::vector<int> r(p.begin() + static_cast<ptrdiff_t>(i), p.end());
    r.insert(r.end(), p.begin(), p.begin() + static_cast<ptrdiff_t>(i));
    best = std::min(best, r);
  }
  uint64_t id = 0;
  for (int g : best) id = id * 10 + static_cast<uint64_t>(g);
  return id;
}

std::vector<int> Digits(uint64_t id) {
  std::vector<int> d;
  for (; id > 0; id /= 10) d.insert(d.begin(), static_cast<int>(id % 10));
  return d;
}

}  // namespace

StepTime Application::Interpolate(const std::vector<Point>& s, double b) {
  if (b <= s.front().local_bsz) return s.front().t;
  if (b >= s.back().local_bsz) return s.back().t;
  auto hi = std::lower_bound(s.begin(), s.end(), b, [](const Point& p, double x) { return p.local_bsz < x; });
  auto lo = hi - 1;
  const double f = (b - lo->local_bsz) / (hi->local_bsz - lo->local_bsz);
  return {lo->t.step + f * (hi->t.step - lo->t.step), lo->t.sync + f * (hi->t.sync - lo->t.sync)};
}

Application Application::Load(const std::string& dir) {
  Application a;
  a.name_ = fs::path(dir).filename().string();
  if (a.name_.empty()) a.name_ = fs::path(dir).parent_path().filename().string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (!f.starts_with("validation-") || !f.ends_with(".csv")) continue;
    int batch = 0;
    if (!ParseNumber(std::string_view(f).substr(11, f.size() - 15), &batch) || batch <= 0) {
      throw ParseError(e.path().string(), 0, "the name's batch size is not a positive whole number");
    }
    const auto rows = ReadNumbers(e.path().string(), "progress,iteration,metric,grad_sqr,grad_var",
                                  {{0, 1e15}, {0, 1e15}, {-1e300, 1e300}, {0, 1e300}, {0, 1e300}});
    if (rows.empty()) throw ParseError(e.path().string(), 0, "no rows after the header");
    for (const auto& r : rows) a.validation_[batch].push_back({r[0], r[1], r[2], r[3], r[4]});
  }
  if (ec) throw IoError(fmt::format("{}: cannot list: {}", dir, ec.message()));
  if (a.validation_.empty()) throw IoError(fmt::format("{}: no validation-B.csv files", dir));
  const std::string placements = (fs::path(dir) / "placements.csv").string();
  std::map<std::tuple<int, int, double>, std::pair<StepTime, int>> sums;
  double min_bsz = std::numeric_limits<double>::infinity(), max_bsz = 0;
  for (const auto& r : ReadNumbers(placements, "placement,local_bsz,step_time,sync_time",
                                   {{1, 1e15}, {1, 1e7}, {0, 1e9}, {0, 1e9}})) {
    std::vector<int> p = PlacementDigits(r[0], placements);
    a.by_placement_[PlacementId(p)].push_back({r[1], {r[2], r[3]}});
    int replicas = 0;
    for (int g : p) replicas += g;
    auto& [t, n] = sums[{static_cast<int>(p.size()), replicas, r[1]}];
    t.step += r[2], t.sync += r[3], ++n;
    min_bsz = std::min(min_bsz, r[1]), max_bsz = std::max(max_bsz, r[1]);
  }
  for (const auto& r : ReadNumbers((fs::path(dir) / "scalability.csv").string(),
                                   "num_nodes,num_replicas,local_bsz,step_time,sync_time",
                                   {{1, 1e6}, {1, 1e6}, {1, 1e7}, {0, 1e9}, {0, 1e9}})) {
    auto& [t, n] = sums[{static_cast<int>(r[0]), static_cast<int>(r[1]), r[2]}];
    t.step += r[3], t.sync += r[4], ++n;
  }
  for (const auto& [key, v] : sums) {
    const auto& [nodes, replicas, bsz] = key;
    a.by_shape_[{nodes, replicas}].push_back({bsz, {v.first.step / v.second, v.first.sync / v.second}});
  }
  auto by_bsz = [](const Point& x, const Point& y) { return x.local_bsz < y.local_bsz; };
  for (auto& [id, s] : a.by_placement_) std::sort(s.begin(), s.end(), by_bsz);
  for (auto& [shape, s] : a.by_shape_) std::sort(s.begin(), s.end(), by_bsz);
  if (a.by_placement_.empty()) throw ParseError(placements, 0, "no placements");
  a.init_batch_size_ = a.validation_.begin()->first;
  a.max_batch_size_ = a.validation_.rbegin()->first;
  a.min_local_bsz_ = static_cast<int>(min_bsz);
  a.max_local_bsz_ = static_cast<int>(max_bsz);
  a.max_epochs_ = std::numeric_limits<int>::max();
  for (const auto& [b, epochs] : a.validation_)
    a.max_epochs_ = std::min(a.max_epochs_, static_cast<int>(epochs.size()));
  for (const KnownApp& k : kKnown) {
    if (a.name_ != k.name) continue;
    a.max_epochs_ = std::min(a.max_epochs_, k.max_epochs);
    if (k.max_local_bsz > 0) a.max_local_bsz_ = k.max_local_bsz;
  }
  return a;
}

double Application::Progress(int epoch) const {
  if (epoch <= 0) return 0;
  double p = std::numeric_limits<double>::infinity();
  for (const auto& [b, epochs] : validation_)
    p = std::min(p, epochs[static_cast<size_t>(epoch - 1)].progress);
  return p;
}

Application::Bracket Application::Around(double batch) const {
  auto hi = validation_.lower_bound(static_cast<int>(std::ceil(batch - 1e-9)));
  if (hi == validation_.end()) hi = std::prev(validation_.end());
  auto lo = hi;
  if (hi->first > batch && hi != validation_.begin()) lo = std::prev(hi);
  const double f = lo == hi ? 0.0 : (batch - lo->first) / (hi->first - lo->first);
  return {&lo->second, &hi->second, f};
}

std::pair<double, double> Application::GradStats(double batch, int epoch) const {
  const Bracket b = Around(batch);
  const EpochStats& l = (*b.lo)[static_cast<size_t>(epoch)];
  const EpochStats& h = (*b.hi)[static_cast<size_t>(epoch)];
  return {l.grad_sqr + b.f * (h.grad_sqr - l.grad_sqr), l.grad_var + b.f * (h.grad_var - l.grad_var)};
}

double Application::Iterations(double batch, int epoch) const {
  const Bracket b = Around(batch);
  const double l = (*b.lo)[static_cast<size_t>(epoch)].iteration,
               h = (*b.hi)[static_cast<size_t>(epoch)].iteration;
  return l + b.f * (h - l);
}

StepTime Application::Throughput(std::vector<int> placement, double local_bsz) const {
  if (auto it = by_placement_.find(PlacementId(placement)); it != by_placement_.end()) {
    return Interpolate(it->second, local_bsz);
  }
  int nodes = 0, replicas = 0;
  for (int g : placement) nodes += g > 0, replicas += g;
  nodes = std::min(nodes, 16);
  if (auto it = by_shape_.find({nodes, replicas}); it != by_shape_.end())
    return Interpolate(it->second, local_bsz);
  // Between the nearest measured replica counts at this node count (else the nearest node count).
  const std::pair<int, int>* below = nullptr;
  const std::pair<int, int>* above = nullptr;
  int best_nodes = -1;
  for (const auto& [shape, s] : by_shape_) {
    if (best_nodes < 0 || std::abs(shape.first - nodes) < std::abs(best_nodes - nodes))
      best_nodes = shape.first;
  }
  for (const auto& [shape, s] : by_shape_) {
    if (shape.first != best_nodes) continue;
    if (shape.second <= replicas && (!below || shape.second > below->second)) below = &shape;
    if (shape.second >= replicas && (!above || shape.second < above->second)) above = &shape;
  }
  if (!below) below = above;
  if (!above) above = below;
  StepTime l = Interpolate(by_shape_.at(*below), local_bsz), h = Interpolate(by_shape_.at(*above), local_bsz);
  if (below == above) return l;
  const double f = static_cast<double>(replicas - below->second) / (above->second - below->second);
  return {l.step + f * (h.step - l.step), l.sync + f * (h.sync - l.sync)};
}

}  // namespace parasol::sched
