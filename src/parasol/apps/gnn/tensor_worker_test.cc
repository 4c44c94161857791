// A tensor worker computes each of a GCN's tensor tasks exactly as the graph rank would itself:
// RemoteTensorOps over an in-process link (rank 0 the graph rank, rank 1 its worker) against
// LocalTensorOps on the same shard, parameters, rows and dropout draw, bit for bit; the workers
// share the graph ranks out evenly.
#include "parasol/apps/gnn/tensor_worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "parasol/apps/gnn/testing_graphs.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Every task of a 6 -> 4 -> 3 GCN on rows [2, 8), its outputs in order.
std::vector<std::vector<float>> RunTasks(TensorOps& ops, const GraphShard& s) {
  const size_t n = s.local_rows();
  const RowRange rows{2, 8};
  const DropoutDraw draw{.rate = 0.3f, .seed = 9, .epoch = 4};
  const std::vector<float> params = Random(6 * 4 + 4 + 4 * 3 + 3, 1);
  ops.SetParameters(params);
  std::vector<std::vector<float>> out;
  std::vector<float> t0(n * 4), h1(n * 4), t1(n * 3), gw1(4 * 3, 0.0f), dh1(n * 4), dz0(n * 4),
      gw0(6 * 4, 0.0f);
  ops.ProjectFeatures(draw, rows, t0.data());
  const std::vector<float> z0 = Random(n * 4, 2), dt1 = Random(n * 3, 3), dt0 = Random(n * 4, 4);
  ops.ActivateProject(draw, 1, z0.data(), rows, h1.data(), t1.data());
  ops.BackwardRows(draw, 1, dt1.data(), h1.data(), rows, gw1.data(), dh1.data());
  ops.ActivateBackward(draw, 1, z0.data(), dh1.data(), rows, dz0.data());
  std::vector<float> features(n * 6, 0.0f);  // layer 0's h is the features (dropped out): unused here
  ops.BackwardRows(draw, 0, dt0.data(), features.data(), rows, gw0.data(), nullptr);
  for (const auto* v : {&t0, &h1, &t1, &gw1, &dh1, &dz0, &gw0}) out.push_back(*v);
  return out;
}

TEST(TensorWorker, RemoteTasksAreTheLocalTasksBitForBit) {
  const Graph g = SmallTestGraph();
  const GraphShard s = MakeShard(g, std::vector<int32_t>(g.vertices, 0), 0, 1);
  const LayerShapes shapes{.widths = {6, 4, 3}, .offsets = {0, 6 * 4 + 4}};
  LocalTensorOps local(s, shapes);
  const std::vector<std::vector<float>> want = RunTasks(local, s);
  ASSERT_TRUE(std::any_of(want[0].begin(), want[0].end(), [](float x) { return x != 0; }));

  std::vector<std::vector<float>> got;
  comm::InProcessWorld world(2);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& link) {
    if (link.rank() == 1) {
      const int clients[] = {0};
      ServeTensorTasks(link, clients);
      return;
    }
    RemoteTensorOps remote(link, /*worker=*/1, s, shapes);
    got = RunTasks(remote, s);
    remote.Finish();
    EXPECT_GT(remote.bytes_sent(), 0u);
  }));
  ASSERT_EQ(got.size(), want.size());
  const char* names[] = {"t0", "h1", "t1", "gw1", "dh1", "dz0", "gw0"};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << names[i];
}

TEST(TensorWorker, WorkersShareTheGraphRanksEvenly) {
  for (int graph_ranks : {1, 3, 4, 7}) {
    for (int workers = 1; workers <= graph_ranks; ++workers) {
      std::vector<int> served(static_cast<size_t>(workers), 0);
      for (int r = 0; r < graph_ranks; ++r) {
        const int w = TensorWorkerOf(r, graph_ranks, workers);
        ASSERT_GE(w, graph_ranks) << "a worker is one of the link's last ranks";
        ASSERT_LT(w, graph_ranks + workers);
        ++served[static_cast<size_t>(w - graph_ranks)];
      }
      const auto [lo, hi] = std::minmax_element(served.begin(), served.end());
      EXPECT_LE(*hi - *lo, 1) << graph_ranks << " graph ranks over " << workers << " workers";
    }
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
