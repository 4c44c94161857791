#include "parasol/apps/gnn/graph_generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parasol/apps/gnn/gnn_trainer.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::gnn {
namespace {

namespace fs = std::filesystem;

GeneratorOptions Small() {
  GeneratorOptions o;
  o.vertices = 20000;
  o.edges = 100000;
  o.classes = 8;
  o.features = 256;
  o.seed = 3;
  return o;
}

int Community(const GeneratorOptions& o, uint32_t v) {
  return static_cast<int>(static_cast<uint64_t>(v) * static_cast<uint64_t>(o.classes) / o.vertices);
}

TEST(GraphGeneratorTest, PlantsCommunitiesAndHeavyTailedDegrees) {
  const GeneratorOptions o = Small();
  const GeneratedGraph a = GenerateGraph(o);
  const Graph& g = a.graph;
  EXPECT_EQ(GenerateGraph(o).edges, a.edges) << "the same seed draws the same graph";
  EXPECT_GT(g.edges(), 90000u);  // few repeats
  size_t inside = 0, max_degree = 0;
  for (const auto& [u, v] : a.edges) inside += Community(o, u) == Community(o, v) ? 1 : 0;
  // 0.7 drawn inside, and 1/8 of the other 0.3 falls inside by chance (weighted: about that).
  EXPECT_NEAR(static_cast<double>(inside) / static_cast<double>(a.edges.size()), 0.7 + 0.3 / 8, 0.02);
  for (size_t v = 0; v < g.vertices; ++v) max_degree = std::max(max_degree, g.degree(v));
  const double mean = 2.0 * static_cast<double>(g.edges()) / static_cast<double>(g.vertices);
  EXPECT_GT(static_cast<double>(max_degree), 8 * mean) << "a power law has hubs; a uniform graph does not";
  for (size_t v = 0; v < g.vertices; ++v) ASSERT_EQ(g.labels[v], Community(o, static_cast<uint32_t>(v)));
  EXPECT_NEAR(static_cast<double>(g.CountSplit(Split::kTrain)) / static_cast<double>(g.vertices), 0.05, 0.01);
}

// The labels need both halves: a GCN that sees the edges beats the same model on the features
// alone (a graph stripped of its edges) by a wide margin.
TEST(GraphGeneratorTest, EdgesCarryInformationAboutTheLabels) {
  GeneratorOptions small = Small();
  small.vertices = 8000;
  small.edges = 40000;
  GeneratedGraph a = GenerateGraph(small);
  Graph alone = a.graph;
  SetEdges({}, &alone);
  GnnOptions o;
  o.epochs = 60;
  o.lr = 0.02f;
  double accuracy[2];
  for (int i = 0; i < 2; ++i) {
    comm::InProcessWorld world(1);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      accuracy[i] = TrainGnn(ctx, i == 0 ? a.graph : alone, o).epochs.back().test_accuracy;
    }));
  }
  EXPECT_GT(accuracy[0], accuracy[1] + 0.1) << "with edges " << accuracy[0] << ", without " << accuracy[1];
  EXPECT_GT(accuracy[1], 1.5 / 8) << "the features alone are better than chance";
}

class EdgesFileTest : public testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string ReadError() {
    try {
      ReadGraphDir(dir_.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  TestDir dir_{"gnn_edges"};
};

TEST_F(EdgesFileTest, WrittenGraphsReadBackWhole) {
  GeneratorOptions o = Small();
  o.vertices = 500;
  o.edges = 3000;
  const GeneratedGraph a = GenerateGraph(o);
  WriteContent(Path("g.content"), a.graph);
  WriteEdgesBinary(Path("g.edges"), a.edges);
  const Graph b = ReadGraphDir(dir_.string());
  EXPECT_EQ(b.vertices, a.graph.vertices);
  EXPECT_EQ(b.labels, a.graph.labels);
  EXPECT_EQ(b.split, a.graph.split);
  EXPECT_EQ(b.edge_offsets, a.graph.edge_offsets);
  EXPECT_EQ(b.neighbours, a.graph.neighbours);
  EXPECT_EQ(b.feature_offsets, a.graph.feature_offsets);
  EXPECT_EQ(b.feature_values, a.graph.feature_values);
}

TEST_F(EdgesFileTest, DamagedEdgeListsAreErrorsNamingTheFile) {
  std::ofstream(Path("g.content")) << "0 0 train\n1 1 test\n2 0 val\n";
  const std::vector<std::pair<uint32_t, uint32_t>> edges = {{0, 1}, {1, 2}, {2, 7}};
  WriteEdgesBinary(Path("g.edges"), edges);
  EXPECT_THAT(ReadError(),
              testing::HasSubstr("g.edges: edge 2: vertex 7 is not in the .content file (3 vertices)"));
  WriteEdgesBinary(Path("g.edges"), std::span(edges).first(2));
  EXPECT_EQ(ReadGraphDir(dir_.string()).edges(), 2u);
  std::string bytes;
  {
    std::ifstream in(Path("g.edges"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto rewrite = [&](const std::string& b) { std::ofstream(Path("g.edges"), std::ios::binary) << b; };
  std::string flipped = bytes;
  flipped[20] ^= 1;
  rewrite(flipped);
  EXPECT_THAT(ReadError(), testing::HasSubstr("g.edges: checksum mismatch"));
  rewrite(bytes.substr(0, bytes.size() - 3));
  EXPECT_THAT(ReadError(), testing::HasSubstr("g.edges: truncated"));
  std::string huge = bytes;
  huge[63] = '\x7f';  // the edges' count near 2^63: refused before anything is allocated
  rewrite(huge);
  EXPECT_THAT(ReadError(), testing::HasSubstr("g.edges: corrupt section header"));
  rewrite("PSGEDGE2" + bytes.substr(8));
  EXPECT_THAT(ReadError(), testing::HasSubstr("g.edges: not a parasol section file"));
}

}  // namespace
}  // namespace parasol::apps::gnn
