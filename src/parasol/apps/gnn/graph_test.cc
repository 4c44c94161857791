#include "parasol/apps/gnn/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/apps/gnn/testing_graphs.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/core/testing.h"

namespace parasol::apps::gnn {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

// The error reading `content` (and a valid two-vertex .cites, or `cites`).
std::string ParseMessage(const std::string& content, const std::string& cites = "0 1\n") {
  try {
    ReadPlanetoid(WriteTestFile("g.content", content), WriteTestFile("g.cites", cites));
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

// The figures the data set's README gives (the Planetoid split).
TEST(GraphTest, ReadsCoraAsPublished) {
  const Graph g = ReadGraphDir(CoraDir());
  EXPECT_EQ(g.vertices, 2708u);
  EXPECT_EQ(g.features, 1432u);  // of the 1,433 word ids, 444 occurs in no paper
  EXPECT_EQ(g.classes, 7);
  EXPECT_EQ(g.edges(), 5278u);
  EXPECT_EQ(g.CountSplit(Split::kTrain), 140u);
  EXPECT_EQ(g.CountSplit(Split::kValidation), 500u);
  EXPECT_EQ(g.CountSplit(Split::kTest), 1000u);
  // The first line: "0 3 train 19:1 81:1 146:1 ..." and the first edges "0 633", "0 1862", "0 2582".
  EXPECT_EQ(g.labels[0], 3);
  EXPECT_EQ(g.split[0], Split::kTrain);
  EXPECT_EQ(g.feature_ids[0], 19u);  // ids below 444 keep their number
  EXPECT_THAT(g.NeighboursOf(0), ElementsAre(633, 1862, 2582));
  for (uint32_t u : g.NeighboursOf(633)) {
    if (u == 0) return;
  }
  ADD_FAILURE() << "edge 0-633 is not in 633's list";
}

TEST(GraphTest, OrdersVerticesByIdRenumbersFeaturesAndMergesEdges) {
  const Graph g = ReadPlanetoid(WriteTestFile("o.content",
                                              "# a comment\n2 1 test 90:2\n0 0 train 7:1 90:0.5\n"
                                              "1 1 val\n"),
                                WriteTestFile("o.cites", "0 2\n2 0\n1 1\n0 1\n"));
  EXPECT_EQ(g.vertices, 3u);
  EXPECT_EQ(g.features, 2u);  // ids 7 and 90
  EXPECT_EQ(g.classes, 2);
  EXPECT_THAT(g.labels, ElementsAre(0, 1, 1));
  EXPECT_THAT(g.split, ElementsAre(Split::kTrain, Split::kValidation, Split::kTest));
  EXPECT_THAT(g.feature_offsets, ElementsAre(0, 2, 2, 3));
  EXPECT_THAT(g.feature_ids, ElementsAre(0, 1, 1));
  EXPECT_THAT(g.feature_values, ElementsAre(1.0f, 0.5f, 2.0f));
  EXPECT_EQ(g.edges(), 2u);  // 0-2 twice and the self-loop 1-1 dropped
  EXPECT_THAT(g.NeighboursOf(0), ElementsAre(1, 2));
  EXPECT_THAT(g.NeighboursOf(1), ElementsAre(0));
  EXPECT_THAT(g.NeighboursOf(2), ElementsAre(0));
}

// Planetoid's Citeseer as commonly converted: its 15 isolated vertices are `unlabeled` with label
// -1 (or another value that is no class). They load; an unlabeled vertex with a class keeps it (a
// generated graph's); only unlabeled vertices may lack one.
TEST(GraphTest, UnlabeledVerticesLoadWhateverTheirLabel) {
  const Graph g = ReadPlanetoid(
      WriteTestFile("u.content", "0 2 train\n1 -1 unlabeled\n2 x unlabeled\n3 1 unlabeled\n4 0 test\n"),
      WriteTestFile("u.cites", "0 4\n"));
  EXPECT_EQ(g.classes, 3);
  EXPECT_THAT(g.labels, ElementsAre(2, -1, -1, 1, 0));
  EXPECT_EQ(g.CountSplit(Split::kUnlabeled), 3u);
  EXPECT_THAT(ParseMessage("0 0 train\n1 -1 val\n"), HasSubstr("g.content:2: label -1 is not in [0, 65535]"));
}

TEST(GraphTest, BadLinesNameFileAndLine) {
  EXPECT_THAT(ParseMessage("0 0 train\n1 x train\n"),
              HasSubstr("g.content:2: label 'x' is not a whole number"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0 dev\n"), HasSubstr("g.content:2: split 'dev' is not train, val"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0\n"), HasSubstr("g.content:2: missing split"));
  EXPECT_THAT(ParseMessage("0 0 train 3\n1 0 val\n"), HasSubstr("g.content:1: feature '3' is not id:value"));
  EXPECT_THAT(ParseMessage("0 0 train 3:nan\n1 0 val\n"), HasSubstr("g.content:1: feature value 'nan'"));
  EXPECT_THAT(ParseMessage("0 0 train 3:1 3:2\n1 0 val\n"),
              HasSubstr("g.content:1: feature 3 is given twice"));
  EXPECT_THAT(ParseMessage("0 0 train 99999999999:1\n1 0 val\n"), HasSubstr("g.content:1: feature id"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 70000 val\n"), HasSubstr("g.content:2: label 70000 is not in"));
  // Vertex ids must be 0..n-1: a huge id is an error, not an allocation.
  EXPECT_THAT(ParseMessage("0 0 train\n4000000000 0 val\n"),
              HasSubstr("g.content:2: vertex 4000000000 is out of range: 2 vertices"));
  EXPECT_THAT(ParseMessage("1 0 train\n1 0 val\n"),
              HasSubstr("g.content:2: vertex 1 is listed twice (first at line 1)"));
  EXPECT_THAT(ParseMessage(""), HasSubstr("g.content: no vertices"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0 val\n", "0 1\n0 2\n"),
              HasSubstr("g.cites:2: vertex 2 is not in the .content file (2 vertices)"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0 val\n", "0\n"), HasSubstr("g.cites:1: missing vertex id"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0 val\n", "0 1 1\n"), HasSubstr("g.cites:1: unexpected field '1'"));
  EXPECT_THAT(ParseMessage("0 0 train\n1 0 val\n", "0 -1\n"), HasSubstr("g.cites:1: vertex id '-1'"));
}

TEST(GraphTest, AFolderNeedsExactlyOneContentFile) {
  const TestDir dir("gnn_dir");
  EXPECT_THROW(ReadGraphDir(dir.string()), IoError);
  std::ofstream(dir / "a.content") << "0 0 train\n";
  EXPECT_THROW(ReadGraphDir(dir.string()), IoError);  // no a.cites
  std::ofstream(dir / "a.cites") << "";
  EXPECT_EQ(ReadGraphDir(dir.string()).vertices, 1u);
  std::ofstream(dir / "b.content") << "0 0 train\n";
  EXPECT_THROW(ReadGraphDir(dir.string()), IoError);
}

// Every rank's rows together are the graph's: each vertex owned once, each ghost owned by the
// rank it is read from, and the rows a rank sends are the ghosts its peers expect.
TEST(GraphShardTest, ShardsCoverTheGraphAndAgreeOnGhosts) {
  const Graph g = ReadGraphDir(CoraDir());
  for (PartitionKind kind : {PartitionKind::kHash, PartitionKind::kRange, PartitionKind::kMetis}) {
    for (int ranks : {1, 2, 3, 4}) {
      const std::vector<int32_t> owner = PartitionVertices(g, ranks, kind);
      std::vector<GraphShard> shards;
      for (int r = 0; r < ranks; ++r) shards.push_back(MakeShard(g, owner, r, ranks));
      size_t owned = 0, entries = 0;
      for (const GraphShard& s : shards) {
        owned += s.owned.size();
        entries += s.adj_columns.size();
        for (size_t i = 0; i < s.owned.size(); ++i) ASSERT_EQ(owner[s.owned[i]], s.rank);
      }
      EXPECT_EQ(owned, g.vertices);
      EXPECT_EQ(entries, 2 * g.edges() + g.vertices);  // both directions and the self-loops
      for (const GraphShard& s : shards) {
        size_t at = 0;  // ghosts from rank r are the rows r sends to s, in the same order
        for (int r = 0; r < ranks; ++r) {
          const GraphShard& peer = shards[static_cast<size_t>(r)];
          ASSERT_EQ(s.recv_counts[static_cast<size_t>(r)], peer.send_counts[static_cast<size_t>(s.rank)]);
          size_t first = 0;
          for (int q = 0; q < s.rank; ++q) first += peer.send_counts[static_cast<size_t>(q)];
          for (size_t k = 0; k < s.recv_counts[static_cast<size_t>(r)]; ++k) {
            ASSERT_EQ(s.ghosts[at + k], peer.owned[peer.send_rows[first + k]]) << "rank " << s.rank;
          }
          at += s.recv_counts[static_cast<size_t>(r)];
        }
      }
    }
  }
}

// The point of a graph partitioner: on Cora, METIS's parts read far fewer ghost rows than a hash
// of the ids, and stay balanced (METIS's default allows 3% imbalance).
TEST(GraphShardTest, MetisPartsNeedFarFewerGhostsThanHashParts) {
  const Graph g = ReadGraphDir(CoraDir());
  for (int ranks : {2, 4}) {
    size_t ghosts[2] = {0, 0}, largest = 0;
    for (PartitionKind kind : {PartitionKind::kHash, PartitionKind::kMetis}) {
      const std::vector<int32_t> owner = PartitionVertices(g, ranks, kind);
      for (int r = 0; r < ranks; ++r) {
        const GraphShard s = MakeShard(g, owner, r, ranks);
        ghosts[kind == PartitionKind::kMetis ? 1 : 0] += s.ghosts.size();
        if (kind == PartitionKind::kMetis) largest = std::max(largest, s.owned.size());
      }
    }
    EXPECT_LT(ghosts[1] * 4, ghosts[0]) << ranks << " ranks: metis " << ghosts[1] << ", hash " << ghosts[0];
    EXPECT_LE(static_cast<double>(largest), 1.04 * static_cast<double>(g.vertices) / ranks)
        << ranks << " ranks";
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
