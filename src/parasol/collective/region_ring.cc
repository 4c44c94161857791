#include "parasol/collective/region_ring.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace parasol::collective {

namespace {

// The search's state: the path so far from start_, and the links it (and its routed pairs) use.
class RegionSearch {
 public:
  RegionSearch(const Topology& t, const NodeRect& g) : t_(t), cols_(t.cols()) {
    for (int r = g.r0; r < g.r1; ++r) {
      for (int c = g.c0; c < g.c1; ++c) {
        if (!t.failed(r * cols_ + c)) nodes_.push_back(r * cols_ + c);
      }
    }
    for (int v : nodes_) inside_.insert(v);
    link_used_.assign(static_cast<size_t>(2 * t.rows() * cols_), 0);
    for (int v : nodes_) steps_[v] = StepsFrom(v);
  }

  // The ring's edges (a routed pair as one edge), or nullopt.
  std::optional<std::vector<std::pair<int, int>>> Find(long budget) {
    if (nodes_.size() < 4) return std::nullopt;
    budget_ = budget;
    start_ = nodes_[0];
    path_ = {start_};
    on_path_ = {start_};
    if (!Extend()) return std::nullopt;
    std::vector<std::pair<int, int>> edges;
    for (size_t i = 0; i < path_.size(); ++i) edges.emplace_back(path_[i], path_[(i + 1) % path_.size()]);
    return edges;
  }

 private:
  struct Step {
    int to;
    int via;  // -1: the link between them; else the routed pair's middle node
  };

  size_t LinkId(int a, int b) const {
    int lo = std::min(a, b);
    return static_cast<size_t>(2 * lo + (std::abs(a - b) == 1 ? 0 : 1));
  }
  bool Live(int v) const { return inside_.count(v) > 0; }

  std::vector<Step> StepsFrom(int v) const {
    std::vector<Step> out;
    int r = v / cols_, c = v % cols_;
    for (auto [dr, dc] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{0, -1}, std::pair{-1, 0}}) {
      int w = (r + dr) * cols_ + c + dc;
      if (r + dr >= 0 && r + dr < t_.rows() && c + dc >= 0 && c + dc < cols_ && Live(w))
        out.push_back({w, -1});
    }
    for (auto [dr, dc] : {std::pair{1, 1}, std::pair{1, -1}, std::pair{-1, 1}, std::pair{-1, -1}}) {
      if (c + dc < 0 || c + dc >= cols_ || r + dr < 0 || r + dr >= t_.rows()) continue;
      int w = (r + dr) * cols_ + c + dc, m1 = r * cols_ + c + dc, m2 = (r + dr) * cols_ + c;
      if (!Live(w)) continue;
      // Beside a failed node, through the other corner.
      if (t_.failed(m1) && Live(m2)) out.push_back({w, m2});
      if (t_.failed(m2) && Live(m1)) out.push_back({w, m1});
    }
    return out;
  }

  bool Free(int from, const Step& s) const {
    if (s.via < 0) return !link_used_[LinkId(from, s.to)];
    return !link_used_[LinkId(from, s.via)] && !link_used_[LinkId(s.via, s.to)];
  }
  void Mark(int from, const Step& s, uint8_t used) {
    if (s.via < 0) {
      link_used_[LinkId(from, s.to)] = used;
    } else {
      link_used_[LinkId(from, s.via)] = used;
      link_used_[LinkId(s.via, s.to)] = used;
    }
  }
  // Free ways from v to nodes not yet on the path.
  int Ways(int v) const {
    int n = 0;
    for (const Step& s : steps_.at(v)) n += !on_path_.count(s.to) && Free(v, s);
    return n;
  }
  // Every node off the path still has two ways left (to other such nodes or the path's ends),
  // and all of them, and then the start, can still be reached from the head.
  bool Viable() const {
    int head = path_.back(), off = 0;
    for (int v : nodes_) {
      if (on_path_.count(v)) continue;
      ++off;
      int n = 0;
      for (const Step& s : steps_.at(v)) {
        n += (!on_path_.count(s.to) || s.to == head || s.to == start_) && Free(v, s);
      }
      if (n < 2) return false;
    }
    std::vector<int> queue{head};
    std::set<int> seen{head};
    bool closes = false;
    for (size_t i = 0; i < queue.size(); ++i) {
      int v = queue[i];
      for (const Step& s : steps_.at(v)) {
        if (!Free(v, s)) continue;
        if (s.to == start_ && (v != head || off == 0)) closes = true;
        if (on_path_.count(s.to) || !seen.insert(s.to).second) continue;
        queue.push_back(s.to);
      }
    }
    return closes && static_cast<int>(queue.size()) == off + 1;
  }

  bool Extend() {
    if (--budget_ < 0) return false;
    int head = path_.back();
    if (path_.size() == nodes_.size()) {
      for (const Step& s : steps_.at(head)) {
        if (s.to == start_ && Free(head, s)) {
          Mark(head, s, 1);
          return true;
        }
      }
      return false;
    }
    std::vector<std::pair<int, Step>> order;
    for (const Step& s : steps_.at(head)) {
      if (on_path_.count(s.to) || !Free(head, s)) continue;
      order.push_back({(s.via >= 0 ? 100 : 0) + Ways(s.to), s});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [rank, s] : order) {
      Mark(head, s, 1);
      path_.push_back(s.to);
      on_path_.insert(s.to);
      if (Viable() && Extend()) return true;
      on_path_.erase(s.to);
      path_.pop_back();
      Mark(head, s, 0);
      if (budget_ < 0) return false;
    }
    return false;
  }

  const Topology& t_;
  int cols_;
  std::vector<int> nodes_;
  std::set<int> inside_;
  std::map<int, std::vector<Step>> steps_;
  std::vector<uint8_t> link_used_;
  std::vector<int> path_;
  std::set<int> on_path_;
  int start_ = -1;
  long budget_ = 0;
};

}  // namespace

std::optional<std::vector<std::pair<int, int>>> FindRegionRing(const Topology& t, const NodeRect& rect,
                                                               long budget) {
  return RegionSearch(t, rect).Find(budget);
}

}  // namespace parasol::collective
