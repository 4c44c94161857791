#include "parasol/collective/topology.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::collective {
namespace {

using ::testing::HasSubstr;

TEST(Topology, NamedShapes) {
  EXPECT_EQ(Topology::Parse("full:5").num_ranks(), 5);
  EXPECT_EQ(Topology::Parse("full:5").OutBandwidth(0), 4 * 25e9);
  auto ring = Topology::Parse("ring:6");
  EXPECT_EQ(ring.RankLinks().size(), 12u);
  EXPECT_EQ(ring.Diameter(), 3);
  auto torus = Topology::Parse("torus:4x8", {.link_gbps = 50});
  EXPECT_EQ(torus.num_ranks(), 32);
  EXPECT_EQ(torus.OutBandwidth(9), 4 * 50e9);
  EXPECT_EQ(torus.Diameter(), 2 + 4);
  auto mesh = Topology::Parse("mesh:3x3");
  EXPECT_EQ(mesh.OutBandwidth(0), 2 * 25e9);  // corner
  EXPECT_EQ(mesh.OutBandwidth(4), 4 * 25e9);  // centre
  auto hier = Topology::Parse("hier:2x4", {.link_gbps = 10});
  EXPECT_EQ(hier.num_ranks(), 8);
  EXPECT_EQ(hier.Route(0, 5).size(), 4u);  // device, NIC, core switch, NIC, device
  EXPECT_EQ(hier.Route(0, 3).size(), 1u);
}

TEST(Topology, Dgx1HybridCubeMesh) {
  auto t = Topology::Parse("dgx1");
  EXPECT_EQ(t.num_ranks(), 8);
  EXPECT_EQ(t.RankLinks().size(), 32u);  // 16 NVLinks, both directions
  for (int g = 0; g < 8; ++g) EXPECT_EQ(t.OutBandwidth(g), 4 * 20e9 + 10e9) << g;  // 4 NVLinks + PCIe
  EXPECT_EQ(t.Route(0, 4).size(), 1u);
  EXPECT_EQ(t.Route(0, 5).size(), 2u);  // over NVLink, not through the CPUs
}

TEST(Topology, RoutesAroundFailedNodes) {
  auto t = Topology::Parse("mesh:3x3", {.failed = {4}});
  EXPECT_EQ(t.num_ranks(), 8);
  EXPECT_EQ(t.rank_of_node(4), -1);
  EXPECT_EQ(t.node_of_rank(4), 5);
  // (1,0) -> (1,2) with (1,1) gone: around through row 0 or 2, four hops.
  const auto& route = t.Route(t.rank_of_node(3), t.rank_of_node(5));
  EXPECT_EQ(route.size(), 4u);
  for (uint32_t l : route) EXPECT_NE(t.link(l).dst, 4);
  EXPECT_EQ(t.OutBandwidth(t.rank_of_node(1)), 2 * 25e9);  // its link to the hole is gone
}

TEST(Topology, FailuresThatSplitTheMeshAreRejected) {
  try {
    Topology::Parse("mesh:3x3", {.failed = {3, 4, 5}});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot reach"));
  }
  EXPECT_THROW(Topology::Parse("mesh:2x2", {.failed = {9}}), InvalidArgumentError);
  EXPECT_THROW(Topology::Parse("ring:4", {.failed = {1}}), InvalidArgumentError);
}

TEST(Topology, BadNamesAreClearErrors) {
  EXPECT_THROW(Topology::Parse("star:4"), InvalidArgumentError);
  EXPECT_THROW(Topology::Parse("torus:4"), InvalidArgumentError);
  EXPECT_THROW(Topology::Parse("ring:0"), InvalidArgumentError);
  EXPECT_THROW(Topology::Parse("ring:abc"), InvalidArgumentError);
  EXPECT_THROW(Topology::Parse("dgx1:8"), InvalidArgumentError);
}

class TopologyFile : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    path_ = TestPath("topology.txt");
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

TEST_F(TopologyFile, ReadsNodesSwitchesAndLinks) {
  auto path = Write(
      "# two hosts behind one switch\nnodes 4\nswitches 1\nlink 0 1 40\nlink 2 3 40\n"
      "link 0 4 10 2.5\nlink 1 4 10\nlink 2 4 10\nlink 3 4 10\n");
  auto t = Topology::Parse("file:" + path);
  EXPECT_EQ(t.num_ranks(), 4);
  EXPECT_EQ(t.Route(0, 1).size(), 1u);
  EXPECT_EQ(t.Route(0, 2).size(), 2u);
  EXPECT_DOUBLE_EQ(t.link(t.Route(0, 2)[0]).latency_s, 2.5e-6);
  EXPECT_EQ(t.OutBandwidth(0), 50e9);
}

TEST_F(TopologyFile, ErrorsNameFileAndLine) {
  auto expect = [&](const std::string& text, const std::string& message) {
    auto path = Write(text);
    try {
      Topology::Parse("file:" + path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ParseError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path + message)) << text;
    }
  };
  expect("nodes 2\nlink 0 1\n", ":2: missing bandwidth (Gbit/s)");
  expect("nodes 2\nlink 0 5 10\n", ":2: destination node 5 is not in [0, 1]");
  expect("nodes 2\n\nlink 0 1 -3\n", ":3: bandwidth (Gbit/s) -3 is not in");
  expect("nodes 2\nlink 0 1 10 fast\n", ":2: latency (us) 'fast' is not a finite number");
  expect("nodes 2\nlink 0 1 inf\n", ":2: bandwidth (Gbit/s) 'inf' is not a finite number");
  expect("nodes 2x\n", ":1: 'nodes' count '2x' is not a whole number");
  expect("nodes 2\nwire 0 1 10\n", ":2: unknown keyword 'wire'");
  expect("nodes 2\nlink 0 1 10 1 7\n", ":2: unexpected '7'");
  expect("link 0 1 10\n", ":1: 'link' before any 'nodes' line");
  expect("# nothing\n", ": no 'nodes' line");
  expect("nodes 3\nlink 0 1 10\n", ": node 0 cannot reach node 2: no path of links");
}

}  // namespace
}  // namespace parasol::collective
