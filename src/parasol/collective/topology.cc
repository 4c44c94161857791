#include "parasol/collective/topology.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/units.h"

namespace parasol::collective {

namespace {

constexpr double kGB = 1e9;
constexpr double kDefaultGbps = 25;
constexpr double kNvlinkGbps = 20;
constexpr double kPcieGbps = 10;

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::pair<int, int> ParseDims(std::string_view spec, std::string_view arg) {
  auto x = arg.find('x');
  if (x == std::string_view::npos) {
    throw InvalidArgumentError(fmt::format("topology '{}': expected dimensions like 4x8", spec));
  }
  auto a = ParseInt(arg.substr(0, x), "topology rows");
  auto b = ParseInt(arg.substr(x + 1), "topology columns");
  if (a < 1 || b < 1 || a * b > (1 << 22)) {
    throw InvalidArgumentError(fmt::format("topology '{}': dimensions out of range", spec));
  }
  return {static_cast<int>(a), static_cast<int>(b)};
}

int ParseCount(std::string_view spec, std::string_view arg) {
  auto n = ParseInt(arg, "topology size");
  if (n < 1 || n > (1 << 22))
    throw InvalidArgumentError(fmt::format("topology '{}': size out of range", spec));
  return static_cast<int>(n);
}

}  // namespace

void Topology::AddLink(int a, int b, double gbps, double latency_us, bool both_ways) {
  auto add = [&](int s, int d) {
    out_[static_cast<size_t>(s)].push_back(static_cast<uint32_t>(links_.size()));
    links_.push_back(Link{s, d, gbps * kGB, latency_us * 1e-6});
  };
  add(a, b);
  if (both_ways) add(b, a);
}

void Topology::AddRing(int n, double gbps, double latency_us) {
  num_nodes_ = num_endpoints_ = n;
  out_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n && n > 1; ++i) {
    if (n == 2 && i == 1) break;  // one link between two nodes, not two
    AddLink(i, (i + 1) % n, gbps, latency_us);
  }
}

void Topology::AddGrid(int rows, int cols, bool torus, double gbps, double latency_us) {
  rows_ = rows;
  cols_ = cols;
  num_nodes_ = num_endpoints_ = rows * cols;
  out_.resize(static_cast<size_t>(num_nodes_));
  // x links first, then y: routes prefer moving along rows. A dimension of two has one link per
  // pair, not a wrap-around link beside it.
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      int id = r * cols + c;
      if (c + 1 < cols)
        AddLink(id, id + 1, gbps, latency_us);
      else if (torus && cols > 2)
        AddLink(id, r * cols, gbps, latency_us);
    }
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      int id = r * cols + c;
      if (r + 1 < rows)
        AddLink(id, id + cols, gbps, latency_us);
      else if (torus && rows > 2)
        AddLink(id, c, gbps, latency_us);
    }
  }
}

void Topology::AddHier(int hosts, int devices, double gbps, double intra_gbps, double latency_us) {
  int n = hosts * devices;
  num_endpoints_ = n;
  num_nodes_ = n + hosts + 1;  // devices, one NIC per host, one core switch
  out_.resize(static_cast<size_t>(num_nodes_));
  for (int h = 0; h < hosts; ++h) {
    for (int a = 0; a < devices; ++a) {
      for (int b = a + 1; b < devices; ++b) AddLink(h * devices + a, h * devices + b, intra_gbps, latency_us);
    }
  }
  for (int h = 0; h < hosts; ++h) {
    for (int a = 0; a < devices; ++a) AddLink(h * devices + a, n + h, intra_gbps, latency_us);
    AddLink(n + h, n + hosts, gbps, latency_us);
    uplink_groups_.push_back({devices, gbps * kGB});
  }
}

void Topology::AddDgx1(double nvlink_gbps, double latency_us) {
  num_endpoints_ = 8;
  num_nodes_ = 8 + 4 + 2;  // GPUs, a PCIe switch per GPU pair, two CPU sockets
  out_.resize(static_cast<size_t>(num_nodes_));
  for (int base : {0, 4}) {  // two fully connected quads
    for (int a = 0; a < 4; ++a) {
      for (int b = a + 1; b < 4; ++b) AddLink(base + a, base + b, nvlink_gbps, latency_us);
    }
  }
  for (int i = 0; i < 4; ++i) AddLink(i, i + 4, nvlink_gbps, latency_us);  // across the quads
  for (int g = 0; g < 8; ++g) AddLink(g, 8 + g / 2, kPcieGbps, latency_us);
  for (int sw = 0; sw < 4; ++sw) AddLink(8 + sw, 12 + sw / 2, kPcieGbps, latency_us);
  AddLink(12, 13, kPcieGbps, latency_us);
}

Topology Topology::Parse(std::string_view spec, const Options& o) {
  if (spec.substr(0, 5) == "file:") return Load(std::string(spec.substr(5)), o);
  auto colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  std::string_view arg = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  Topology t;
  t.name_ = std::string(spec);
  t.latency_s_ = o.latency_us * 1e-6;
  double gbps = o.link_gbps > 0 ? o.link_gbps : kDefaultGbps;
  if (!o.failed.empty() && kind != "torus" && kind != "mesh") {
    throw InvalidArgumentError(fmt::format("topology '{}': failed nodes apply to torus and mesh only", spec));
  }
  if (kind == "full") {
    t.kind_ = Kind::kFull;
    t.num_nodes_ = t.num_endpoints_ = ParseCount(spec, arg);
    t.full_bytes_per_s_ = gbps * kGB;
    t.out_.resize(static_cast<size_t>(t.num_nodes_));
  } else if (kind == "ring") {
    t.kind_ = Kind::kRing;
    t.AddRing(ParseCount(spec, arg), gbps, o.latency_us);
  } else if (kind == "torus" || kind == "mesh") {
    t.kind_ = kind == "torus" ? Kind::kTorus : Kind::kMesh;
    auto [rows, cols] = ParseDims(spec, arg);
    t.AddGrid(rows, cols, kind == "torus", gbps, o.latency_us);
  } else if (kind == "hier") {
    t.kind_ = Kind::kHier;
    auto [hosts, devices] = ParseDims(spec, arg);
    t.AddHier(hosts, devices, gbps, o.intra_gbps > 0 ? o.intra_gbps : 4 * gbps, o.latency_us);
  } else if (kind == "dgx1") {
    if (!arg.empty()) throw InvalidArgumentError(fmt::format("topology '{}': dgx1 takes no size", spec));
    t.kind_ = Kind::kDgx1;
    t.AddDgx1(o.link_gbps > 0 ? o.link_gbps : kNvlinkGbps, o.latency_us);
  } else {
    throw InvalidArgumentError(fmt::format(
        "unknown topology '{}' (expected full:N, ring:N, torus:RxC, mesh:RxC, hier:HxD, dgx1 or file:PATH)",
        spec));
  }
  t.Finalize(o.failed);
  return t;
}

Topology Topology::Load(const std::string& path, const Options& o) {
  LineReader in(path, {.comment = '#', .skip_blank = true, .trailing_comment = true});
  Topology t;
  t.kind_ = Kind::kCustom;
  t.name_ = "file:" + path;
  t.latency_s_ = o.latency_us * 1e-6;
  bool have_nodes = false;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view word = NextField(line, pos);
    if (word == "nodes" || word == "switches") {
      const long n = in.NumberIn<long>(NextField(line, pos), fmt::format("'{}' count", word),
                                       word == "nodes" ? 1 : 0, 1 << 22);
      if (word == "nodes") {
        if (have_nodes) in.Fail("'nodes' given twice");
        have_nodes = true;
        t.num_endpoints_ = static_cast<int>(n);
      }
      if (t.num_nodes_ + n > (1 << 22)) in.Fail("more than 2^22 nodes and switches");
      t.num_nodes_ += static_cast<int>(n);
      t.out_.resize(static_cast<size_t>(t.num_nodes_));
    } else if (word == "link" || word == "dlink") {
      const int last = t.num_nodes_ - 1;
      if (last < 0) in.Fail(fmt::format("'{}' before any 'nodes' line", word));
      const int a = in.NumberIn<int>(NextField(line, pos), "source node", 0, last);
      const int b = in.NumberIn<int>(NextField(line, pos), "destination node", 0, last);
      const double gbps = in.NumberIn<double>(NextField(line, pos), "bandwidth (Gbit/s)", 1e-9, 1e9);
      const std::string_view lat_field = NextField(line, pos);
      const double lat =
          lat_field.empty() ? o.latency_us : in.NumberIn<double>(lat_field, "latency (us)", 0, 1e12);
      if (a == b) in.Fail("a link needs two different nodes");
      t.AddLink(a, b, gbps, lat, word == "link");
    } else {
      in.Fail(fmt::format("unknown keyword '{}' (expected nodes, switches, link or dlink)", word));
    }
    if (const std::string_view extra = NextField(line, pos); !extra.empty()) {
      in.Fail(fmt::format("unexpected '{}'", extra));
    }
  }
  if (!have_nodes) throw ParseError(path, 0, "no 'nodes' line");
  if (!o.failed.empty()) throw InvalidArgumentError("failed nodes apply to torus and mesh topologies only");
  t.Finalize({});
  return t;
}

void Topology::Finalize(const std::vector<int>& failed) {
  failed_.assign(static_cast<size_t>(num_nodes_), false);
  for (int f : failed) {
    if (f < 0 || f >= num_endpoints_) {
      throw InvalidArgumentError(
          fmt::format("failed node {} is not a node of {} (0..{})", f, name_, num_endpoints_ - 1));
    }
    failed_[static_cast<size_t>(f)] = true;
  }
  node_rank_.assign(static_cast<size_t>(num_nodes_), -1);
  rank_node_.clear();
  for (int v = 0; v < num_endpoints_; ++v) {
    if (failed_[static_cast<size_t>(v)]) continue;
    node_rank_[static_cast<size_t>(v)] = static_cast<int>(rank_node_.size());
    rank_node_.push_back(v);
  }
  if (rank_node_.empty())
    throw InvalidArgumentError(fmt::format("topology {}: every node has failed", name_));
  uint64_t h = Mix(static_cast<uint64_t>(kind_), static_cast<uint64_t>(num_nodes_));
  h = Mix(h, static_cast<uint64_t>(full_bytes_per_s_));
  for (const auto& l : links_) {
    h = Mix(h, static_cast<uint64_t>(l.src) << 32 | static_cast<uint32_t>(l.dst));
    h = Mix(h, static_cast<uint64_t>(l.bytes_per_s));
  }
  for (int f : failed) h = Mix(h, 0xfa11ull << 32 | static_cast<uint32_t>(f));
  fingerprint_ = h;
  parent_link_.assign(static_cast<size_t>(num_nodes_), {});
  // Every rank must reach every other.
  if (kind_ != Kind::kFull) {
    ComputeRoutesFrom(rank_node_[0]);
    for (int v : rank_node_) {
      if (v != rank_node_[0] &&
          parent_link_[static_cast<size_t>(rank_node_[0])][static_cast<size_t>(v)] < 0) {
        const std::string what = fmt::format("node {} cannot reach node {}", rank_node_[0], v);
        if (kind_ == Kind::kCustom && failed.empty()) {  // the file's links do not join them
          throw ParseError(name_.substr(std::string_view("file:").size()), 0, what + ": no path of links");
        }
        throw InvalidArgumentError(
            fmt::format("topology {}: {} (the failed nodes split the network)", name_, what));
      }
    }
  }
}

size_t Topology::num_link_ids() const {
  if (kind_ == Kind::kFull) return static_cast<size_t>(num_nodes_) * static_cast<size_t>(num_nodes_);
  return links_.size();
}

Topology::Link Topology::link(uint32_t id) const {
  if (kind_ == Kind::kFull) {
    int n = num_nodes_;
    return Link{static_cast<int>(id / static_cast<uint32_t>(n)),
                static_cast<int>(id % static_cast<uint32_t>(n)), full_bytes_per_s_, latency_s_};
  }
  return links_[id];
}

void Topology::ComputeRoutesFrom(int src) const {
  auto& parent = parent_link_[static_cast<size_t>(src)];
  if (!parent.empty()) return;
  parent.assign(static_cast<size_t>(num_nodes_), -1);
  std::vector<bool> seen(static_cast<size_t>(num_nodes_), false);
  std::deque<int> queue{src};
  seen[static_cast<size_t>(src)] = true;
  while (!queue.empty()) {
    int v = queue.front();
    queue.pop_front();
    for (uint32_t id : out_[static_cast<size_t>(v)]) {
      int w = links_[id].dst;
      if (seen[static_cast<size_t>(w)] || failed_[static_cast<size_t>(w)]) continue;
      seen[static_cast<size_t>(w)] = true;
      parent[static_cast<size_t>(w)] = static_cast<int32_t>(id);
      queue.push_back(w);
    }
  }
}

int32_t Topology::LinkBetween(int a, int b) const {
  for (uint32_t id : out_[static_cast<size_t>(a)]) {
    if (links_[id].dst == b) return static_cast<int32_t>(id);
  }
  return -1;
}

std::vector<uint32_t> Topology::GridDetour(int a, int b) const {
  if (kind_ != Kind::kMesh && kind_ != Kind::kTorus) return {};
  int ra = a / cols_, ca = a % cols_, rb = b / cols_, cb = b % cols_;
  bool same_row = ra == rb, same_col = ca == cb;
  if (!same_row && !same_col) return {};
  // Walk straight from a towards b; only a blocked straight path needs a detour.
  auto node = [&](int r, int c) { return r * cols_ + c; };
  int step = same_row ? (cb > ca ? 1 : -1) : (rb > ra ? 1 : -1);
  int len = same_row ? std::abs(cb - ca) : std::abs(rb - ra);
  bool blocked = false;
  for (int i = 1; i < len; ++i) {
    int v = same_row ? node(ra, ca + i * step) : node(ra + i * step, ca);
    blocked = blocked || failed_[static_cast<size_t>(v)];
  }
  if (!blocked) return {};
  // Sides: rightwards above, leftwards below; downwards left, upwards right; the other if needed.
  int preferred = same_row ? (step > 0 ? -1 : 1) : (step > 0 ? -1 : 1);
  for (int side : {preferred, -preferred}) {
    std::vector<int> path{a};
    int limit = same_row ? rows_ : cols_;
    int lane = (same_row ? ra : ca) + side;
    if (lane < 0 || lane >= limit) continue;
    for (int i = 0; i <= len; ++i)
      path.push_back(same_row ? node(lane, ca + i * step) : node(ra + i * step, lane));
    path.push_back(b);
    std::vector<uint32_t> links;
    bool ok = true;
    for (size_t i = 0; i + 1 < path.size() && ok; ++i) {
      int32_t id = failed_[static_cast<size_t>(path[i + 1])] ? -1 : LinkBetween(path[i], path[i + 1]);
      ok = id >= 0;
      links.push_back(static_cast<uint32_t>(id));
    }
    if (ok) return links;
  }
  return {};
}

const std::vector<uint32_t>& Topology::Route(int from_rank, int to_rank) const {
  uint64_t key = static_cast<uint64_t>(from_rank) << 32 | static_cast<uint32_t>(to_rank);
  auto it = route_cache_.find(key);
  if (it != route_cache_.end()) return it->second;
  int a = node_of_rank(from_rank), b = node_of_rank(to_rank);
  std::vector<uint32_t> path;
  if (kind_ == Kind::kFull) {
    path.push_back(static_cast<uint32_t>(a) * static_cast<uint32_t>(num_nodes_) + static_cast<uint32_t>(b));
  } else if (auto detour = GridDetour(a, b); !detour.empty()) {
    path = std::move(detour);
  } else if (a != b) {
    ComputeRoutesFrom(a);
    const auto& parent = parent_link_[static_cast<size_t>(a)];
    for (int v = b; v != a;) {
      int32_t id = parent[static_cast<size_t>(v)];
      if (id < 0)
        throw InvalidArgumentError(
            fmt::format("topology {}: no route from rank {} to rank {}", name_, from_rank, to_rank));
      path.push_back(static_cast<uint32_t>(id));
      v = links_[static_cast<size_t>(id)].src;
    }
    std::reverse(path.begin(), path.end());
  }
  return route_cache_.emplace(key, std::move(path)).first->second;
}

double Topology::OutBandwidth(int rank) const {
  int v = node_of_rank(rank);
  if (kind_ == Kind::kFull) return full_bytes_per_s_ * (num_nodes_ - 1);
  double total = 0;
  for (uint32_t id : out_[static_cast<size_t>(v)]) {
    if (!failed_[static_cast<size_t>(links_[id].dst)]) total += links_[id].bytes_per_s;
  }
  return total;
}

int Topology::Diameter() const {
  int worst = 0;
  for (int r = 1; r < num_ranks(); ++r) worst = std::max(worst, static_cast<int>(Route(0, r).size()));
  return worst;
}

std::vector<Topology::Link> Topology::RankLinks() const {
  std::vector<Link> out;
  if (kind_ == Kind::kFull) {
    for (int a = 0; a < num_nodes_; ++a) {
      for (int b = 0; b < num_nodes_; ++b) {
        if (a != b) out.push_back(Link{a, b, full_bytes_per_s_, latency_s_});
      }
    }
    return out;
  }
  for (const auto& l : links_) {
    int ra = rank_of_node(l.src), rb = rank_of_node(l.dst);
    if (ra >= 0 && rb >= 0) out.push_back(Link{ra, rb, l.bytes_per_s, l.latency_s});
  }
  return out;
}

}  // namespace parasol::collective
