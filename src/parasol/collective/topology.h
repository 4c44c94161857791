// Network topologies for topology-aware algorithms and the network simulator: nodes joined by
// full-duplex links with a bandwidth per direction and a latency. Ranks are the live endpoint
// nodes; switches route but are not ranks.
//
// Named on the command line as full:N, ring:N, torus:RxC, mesh:RxC, hier:HxD and dgx1, or read
// from a file (format in docs/topology.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parasol::collective {

struct TopologyOptions {
  double link_gbps = 0;     // GB/s per direction; 0: the topology's default (25; dgx1 NVLink 20)
  double latency_us = 1.0;  // per hop
  double intra_gbps = 0;    // hier: links inside a host; 0: 4 x link_gbps
  std::vector<int> failed;  // torus/mesh: node ids (row-major) that have failed
};

class Topology {
 public:
  enum class Kind { kFull, kRing, kTorus, kMesh, kHier, kDgx1, kCustom };
  using Options = TopologyOptions;

  struct Link {
    int src;
    int dst;
    double bytes_per_s;
    double latency_s;
  };

  // Parses a name ("torus:32x32") or, with "file:PATH", reads PATH. Throws InvalidArgumentError
  // (a bad name) or ParseError ("file:line: what is wrong").
  static Topology Parse(std::string_view spec, const Options& options = {});
  static Topology Load(const std::string& path, const Options& options = {});

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  int num_nodes() const { return num_nodes_; }
  int num_ranks() const { return static_cast<int>(rank_node_.size()); }
  int node_of_rank(int rank) const { return rank_node_[static_cast<size_t>(rank)]; }
  // -1 for switches and failed nodes.
  int rank_of_node(int node) const { return node_rank_[static_cast<size_t>(node)]; }
  int rows() const { return rows_; }  // torus and mesh; 0 otherwise
  int cols() const { return cols_; }
  bool failed(int node) const { return failed_[static_cast<size_t>(node)]; }
  double latency_s() const { return latency_s_; }

  // Link ids run from 0 to num_link_ids(); a fully connected topology has N*N implicit links.
  size_t num_link_ids() const;
  Link link(uint32_t id) const;
  // The links a message from rank a to rank b crosses: a shortest path in hops that avoids failed
  // nodes (ties broken the same way every time). On a mesh or torus, a message along a row or
  // column that meets a failed node goes around it on a side fixed by its direction (rightwards
  // above, leftwards below, downwards on the left, upwards on the right), so detours in opposite
  // directions, and row and column detours, never share a link. Throws InvalidArgumentError if b
  // is unreachable. Not thread-safe (routes are cached).
  const std::vector<uint32_t>& Route(int from_rank, int to_rank) const;
  // Sum of the bandwidths of the rank's outgoing links, bytes/s.
  double OutBandwidth(int rank) const;
  // Largest hop count from rank 0 to any rank.
  int Diameter() const;
  // Changes whenever the links, nodes or failures differ; equal topologies hash alike.
  uint64_t fingerprint() const { return fingerprint_; }

  // Links between pairs of ranks (not through switches), one entry per direction.
  std::vector<Link> RankLinks() const;

  // Ranks that reach the others only through one link (hier: a host's devices behind its
  // uplink): every byte of an allreduce's result must enter the group through it.
  struct UplinkGroup {
    int ranks = 0;
    double uplink_bytes_per_s = 0;  // one direction
  };
  const std::vector<UplinkGroup>& uplink_groups() const { return uplink_groups_; }

 private:
  Topology() = default;
  void AddLink(int a, int b, double gbps, double latency_us, bool both_ways = true);
  void AddRing(int n, double gbps, double latency_us);
  void AddGrid(int rows, int cols, bool torus, double gbps, double latency_us);
  void AddHier(int hosts, int devices, double gbps, double intra_gbps, double latency_us);
  void AddDgx1(double nvlink_gbps, double latency_us);
  void Finalize(const std::vector<int>& failed);
  void ComputeRoutesFrom(int node) const;
  // A grid detour between two nodes of one row or column, or empty if none applies.
  std::vector<uint32_t> GridDetour(int a, int b) const;
  int32_t LinkBetween(int a, int b) const;

  Kind kind_ = Kind::kCustom;
  std::string name_;
  int num_nodes_ = 0;
  int num_endpoints_ = 0;  // nodes [0, num_endpoints_) can be ranks
  int rows_ = 0, cols_ = 0;
  double full_bytes_per_s_ = 0;
  double latency_s_ = 1e-6;
  std::vector<Link> links_;
  std::vector<UplinkGroup> uplink_groups_;
  std::vector<std::vector<uint32_t>> out_;  // link ids leaving each node
  std::vector<bool> failed_;
  std::vector<int> rank_node_;
  std::vector<int> node_rank_;
  uint64_t fingerprint_ = 0;
  // parent_link_[src][node]: last link on the route from src to node (-1: none); empty until used.
  mutable std::vector<std::vector<int32_t>> parent_link_;
  mutable std::unordered_map<uint64_t, std::vector<uint32_t>> route_cache_;
};

}  // namespace parasol::collective
