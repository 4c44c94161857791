#include "parasol/apps/gnn/gnn_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <random>

#include "parasol/apps/gnn/testing_graphs.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

// The loss sum_i r_i . output_i for fixed random r: its gradient by the output is r.
double LinearLoss(std::span<const float> out, std::span<const float> r) {
  double loss = 0;
  for (size_t i = 0; i < out.size(); ++i) loss += static_cast<double>(out[i]) * r[i];
  return loss;
}

// Each test runs for both models, made by name as the trainer makes them.
class ModelTest : public testing::TestWithParam<std::string> {};

// Backward's gradient against central differences of the loss, entry by entry, with and
// without dropout (the mask is a function of the draw, so both sides see the same one).
TEST_P(ModelTest, GradientMatchesFiniteDifferences) {
  const Graph g = SmallTestGraph();
  const std::vector<int32_t> owner(g.vertices, 0);
  const GraphShard s = MakeShard(g, owner, 0, 1);
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    GhostExchange ghosts(ctx, 0);
    for (const std::vector<size_t>& hidden : {std::vector<size_t>{4}, std::vector<size_t>{5, 4}}) {
      for (float rate : {0.0f, 0.3f}) {
        const std::unique_ptr<GnnModel> made = MakeGnnModel(GetParam(), g.features, hidden, 3);
        GnnModel& model = *made;
        model.InitGlorot(3);
        std::mt19937_64 rng(11);
        for (float& p : model.parameters()) p += static_cast<float>(rng() % 100) / 500.0f;  // biases too
        const DropoutDraw draw{.rate = rate, .seed = 5, .epoch = 2};
        std::vector<float> r(g.vertices * 3);
        for (float& x : r) x = static_cast<float>(rng() % 200) / 100.0f - 1.0f;
        model.Forward(ghosts, s, draw);
        std::vector<float> grad(model.parameters().size());
        model.Backward(ghosts, s, r, grad);
        // Central differences at two steps: where they disagree, a kink (ReLU, LeakyReLU) lies
        // within the step and the difference quotient is not a derivative; such entries are
        // skipped (few).
        auto numeric = [&](float& p, float h) {
          const float saved = p;
          p = saved + h;
          model.Forward(ghosts, s, draw);
          const double up = LinearLoss(model.output(), r);
          p = saved - h;
          model.Forward(ghosts, s, draw);
          const double down = LinearLoss(model.output(), r);
          p = saved;
          return (up - down) / (2 * static_cast<double>(h));
        };
        size_t checked = 0, skipped = 0;
        for (size_t k = 0; k < grad.size(); ++k) {
          const double coarse = numeric(model.parameters()[k], 2e-3f);
          const double fine = numeric(model.parameters()[k], 1e-3f);
          if (std::abs(coarse - fine) > 1e-2 * (1 + std::abs(fine))) {
            ++skipped;
            continue;
          }
          ASSERT_NEAR(grad[k], fine, 2e-3 + 2e-3 * std::abs(fine))
              << "parameter " << k << ", hidden " << hidden.size() << " layer(s), dropout " << rate;
          checked += std::abs(fine) > 1e-3 ? 1 : 0;
        }
        EXPECT_LE(skipped, grad.size() / 10);
        EXPECT_GT(checked, grad.size() / 2) << "most gradients are nonzero, so the check means something";
      }
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(DropoutTest, KeepsTheExpectedShareAndDependsOnTheDraw) {
  const DropoutDraw a{.rate = 0.5f, .seed = 1, .epoch = 1}, b{.rate = 0.5f, .seed = 1, .epoch = 2};
  int kept = 0, same = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const bool ka = KeepEntry(a, 1, static_cast<uint64_t>(i / 16), static_cast<uint64_t>(i % 16));
    kept += ka ? 1 : 0;
    same += ka == KeepEntry(b, 1, static_cast<uint64_t>(i / 16), static_cast<uint64_t>(i % 16)) ? 1 : 0;
  }
  EXPECT_NEAR(kept, n / 2, 1000);  // about 6 standard deviations
  EXPECT_NEAR(same, n / 2, 1000);  // another epoch draws another mask
}

// Partitioned over 2, 3 and 4 ranks, Cora's output rows equal one process's (each row sums its
// neighbours in one order) and the gradients summed over ranks equal one process's up to the
// order of the sum over vertices. Also under a staleness bound (the backward pass then
// differentiates every local row and sends the ghosts' part to their owners), for a pass repeated
// until the rows and reductions it receives are from an identical pass.
TEST_P(ModelTest, PartitionedForwardAndBackwardEqualOneProcess) {
  const Graph g = ReadGraphDir(CoraDir());
  const DropoutDraw draw{.rate = 0.5f, .seed = 9, .epoch = 3};
  const std::unique_ptr<GnnModel> made =
      MakeGnnModel(GetParam(), g.features, {16}, static_cast<size_t>(g.classes));
  GnnModel& reference = *made;
  reference.InitGlorot(4);
  std::mt19937_64 rng(2);
  std::vector<float> r(g.vertices * static_cast<size_t>(g.classes));
  for (float& x : r) x = static_cast<float>(rng() % 200) / 100.0f - 1.0f;
  std::vector<float> want_grad(reference.parameters().size());
  std::vector<float> want_out;
  {
    comm::InProcessWorld world(1);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      GhostExchange ghosts(ctx, 0);
      const GraphShard s = MakeShard(g, std::vector<int32_t>(g.vertices, 0), 0, 1);
      reference.Forward(ghosts, s, draw);
      want_out.assign(reference.output().begin(), reference.output().end());
      reference.Backward(ghosts, s, r, want_grad);
    }));
  }
  const size_t c = static_cast<size_t>(g.classes);
  for (auto [kind, bound] : {std::pair{PartitionKind::kHash, 0u}, std::pair{PartitionKind::kRange, 0u},
                             std::pair{PartitionKind::kHash, 1u}}) {
    const uint32_t staleness = bound;  // clang 14 cannot capture a structured binding in a lambda
    for (int ranks : {2, 3, 4}) {
      const std::vector<int32_t> owner = PartitionVertices(g, ranks, kind);
      std::vector<float> sum(want_grad.size(), 0.0f);
      std::mutex mu;
      comm::InProcessWorld world(ranks);
      comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
        GhostExchange ghosts(ctx, staleness);
        const GraphShard s = MakeShard(g, owner, ctx.rank(), ranks);
        const std::unique_ptr<GnnModel> mine = MakeGnnModel(GetParam(), g.features, {16}, c);
        GnnModel& model = *mine;
        model.InitGlorot(4);
        std::vector<float> d(s.owned.size() * c);
        for (size_t i = 0; i < s.owned.size(); ++i)
          for (size_t k = 0; k < c; ++k) d[i * c + k] = r[s.owned[i] * c + k];
        std::vector<float> grad(model.parameters().size());
        // The same pass 2S + 1 times: the last one's stale rows and late reductions then come from
        // passes equal to it (a reduction of the first layer is complete from pass S + 1 on, once
        // the second layer's has arrived).
        for (uint64_t epoch = 1; epoch <= 2 * staleness + 1; ++epoch) {
          ghosts.BeginEpoch(epoch);
          model.Forward(ghosts, s, draw);
          model.Backward(ghosts, s, d, grad);
        }
        for (size_t i = 0; i < s.owned.size(); ++i) {
          for (size_t k = 0; k < c; ++k) {
            ASSERT_FLOAT_EQ(model.output()[i * c + k], want_out[s.owned[i] * c + k])
                << "vertex " << s.owned[i];
          }
        }
        ghosts.Drain();
        std::lock_guard lock(mu);
        for (size_t k = 0; k < grad.size(); ++k) sum[k] += grad[k];
      }));
      for (size_t k = 0; k < sum.size(); ++k)
        ASSERT_NEAR(sum[k], want_grad[k], 1e-4 + 1e-4 * std::abs(want_grad[k]))
            << ranks << " ranks, staleness " << staleness << ", entry " << k;
    }
  }
}

// The graph and tensor pools change where the tasks run, not what they compute: GCN's output and
// gradient with pools equal those without, bit for bit, synchronous and under a bound.
TEST(GcnTest, PoolsComputeWhatTheCallerComputesAlone) {
  const Graph g = ReadGraphDir(CoraDir());
  const DropoutDraw draw{.rate = 0.5f, .seed = 3, .epoch = 2};
  const size_t c = static_cast<size_t>(g.classes);
  const std::vector<int32_t> owner = PartitionVertices(g, 2, PartitionKind::kHash);
  std::mt19937_64 rng(5);
  std::vector<float> r(g.vertices * c);
  for (float& x : r) x = static_cast<float>(rng() % 200) / 100.0f - 1.0f;
  for (uint32_t staleness : {0u, 1u}) {
    std::vector<std::vector<float>> outputs, grads;
    for (PipelineOptions po :
         {PipelineOptions{.interval_rows = 100},
          PipelineOptions{.graph_threads = 1, .tensor_threads = 1, .interval_rows = 100},
          PipelineOptions{.graph_threads = 2, .tensor_threads = 3, .interval_rows = 100}}) {
      std::vector<float> out, grad;
      comm::InProcessWorld world(2);
      comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
        GhostExchange ghosts(ctx, staleness);
        IntervalPipeline pipeline(po);
        const GraphShard s = MakeShard(g, owner, ctx.rank(), 2);
        const std::unique_ptr<GnnModel> model = MakeGnnModel("gcn", g.features, {16}, c);
        model->InitGlorot(4);
        model->UsePipeline(&pipeline);
        std::vector<float> d(s.owned.size() * c), mine(model->parameters().size());
        for (size_t i = 0; i < s.owned.size(); ++i)
          for (size_t k = 0; k < c; ++k) d[i * c + k] = r[s.owned[i] * c + k];
        for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
          ghosts.BeginEpoch(epoch);
          model->Forward(ghosts, s, draw);
          model->Backward(ghosts, s, d, mine);
        }
        ghosts.Drain();
        if (ctx.rank() == 0) {
          out.assign(model->output().begin(), model->output().end());
          grad = mine;
        }
      }));
      outputs.push_back(out);
      grads.push_back(grad);
    }
    for (size_t k = 1; k < outputs.size(); ++k) {
      EXPECT_EQ(outputs[k], outputs[0]) << "pools " << k << ", staleness " << staleness;
      EXPECT_EQ(grads[k], grads[0]) << "pools " << k << ", staleness " << staleness;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelTest, testing::Values("gcn", "gat"));

// With both attention vectors zero every neighbour (and the vertex itself) gets the same weight:
// a one-layer GAT is then the mean of X W over the closed neighbourhood, plus the bias.
TEST(GatTest, ZeroAttentionAveragesTheNeighbourhood) {
  const Graph g = SmallTestGraph();
  const GraphShard s = MakeShard(g, std::vector<int32_t>(g.vertices, 0), 0, 1);
  const std::unique_ptr<GnnModel> gat = MakeGnnModel("gat", g.features, {}, 3);
  gat->InitGlorot(5);
  std::span<float> p = gat->parameters();
  ASSERT_EQ(p.size(), g.features * 3 + 3 * 3);  // W, a_src, a_dst, bias
  std::fill(p.begin() + 18, p.begin() + 24, 0.0f);
  const float bias[3] = {0.5f, -1.0f, 2.0f};
  std::copy(bias, bias + 3, p.begin() + 24);
  comm::InProcessWorld world(1);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    GhostExchange ghosts(ctx, 0);
    gat->Forward(ghosts, s, {});
    for (uint32_t v = 0; v < g.vertices; ++v) {
      std::vector<uint32_t> hood(g.NeighboursOf(v).begin(), g.NeighboursOf(v).end());
      hood.push_back(v);
      for (size_t c = 0; c < 3; ++c) {
        double sum = 0;
        for (uint32_t u : hood) {
          for (uint64_t k = g.feature_offsets[u]; k < g.feature_offsets[u + 1]; ++k)
            sum += static_cast<double>(g.feature_values[k]) * p[g.feature_ids[k] * 3 + c];
        }
        EXPECT_NEAR(gat->output()[v * 3 + c], sum / static_cast<double>(hood.size()) + bias[c], 1e-5)
            << "vertex " << v << ", class " << c;
      }
    }
  }));
}

}  // namespace
}  // namespace parasol::apps::gnn
