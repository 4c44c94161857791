// The Transformer language model's parallel forms against the plain one: tensor parallelism
// (T = 2, 3, a vocabulary that does not divide), expert parallelism, the distributed evaluation,
// the text reader. The mixture-of-experts layer's own routing, capacity and losses: moe_test.cc.
#include "parasol/dl/transformer.h"
#include "parasol/core/testing.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/dl/lm_trainer.h"
#include "parasol/dl/parallel_groups.h"

namespace parasol::dl {
namespace {

using ::testing::HasSubstr;

TransformerOptions Small() {
  return {.vocab = 11, .layers = 2, .d_model = 24, .heads = 6, .ffn = 48, .seq = 8};
}

// A fixed batch of 3 sequences of 8 tokens and their targets.
std::pair<torch::Tensor, torch::Tensor> FixedBatch(int64_t vocab, int64_t seed) {
  torch::Tensor all = torch::remainder(torch::arange(seed, seed + 27, torch::kLong) * 7 + 3, vocab);
  torch::Tensor x = torch::stack({all.narrow(0, 0, 8), all.narrow(0, 9, 8), all.narrow(0, 18, 8)});
  torch::Tensor y = torch::stack({all.narrow(0, 1, 8), all.narrow(0, 10, 8), all.narrow(0, 19, 8)});
  return {x, y};
}

// This rank's shard of a full (T = 1) parameter, by the layers' rules: rows of each of Q, K and V,
// rows of fc1 and of the vocabulary, columns of proj and fc2; the rest replicated.
torch::Tensor Shard(const std::string& name, const torch::Tensor& full, int t, int rank, int64_t vocab) {
  auto block = [&](int64_t n) { return collective::BlockRange(static_cast<size_t>(n), t, rank); };
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("qkv.weight") || ends_with("qkv.bias")) {
    const int64_t part = full.size(0) / 3;
    const auto [b, e] = block(part);
    std::vector<torch::Tensor> parts;
    for (int p = 0; p < 3; ++p)
      parts.push_back(full.narrow(0, p * part + static_cast<int64_t>(b), static_cast<int64_t>(e - b)));
    return torch::cat(parts);
  }
  if (ends_with("fc1.weight") || ends_with("fc1.bias")) {
    const auto [b, e] = block(full.size(0));
    return full.narrow(0, static_cast<int64_t>(b), static_cast<int64_t>(e - b));
  }
  if (ends_with("proj.weight") || ends_with("fc2.weight")) {
    const auto [b, e] = block(full.size(1));
    return full.narrow(1, static_cast<int64_t>(b), static_cast<int64_t>(e - b));
  }
  if (ends_with("tokens.weight")) {
    const auto [b, e] = block(vocab);
    return full.narrow(0, static_cast<int64_t>(b), static_cast<int64_t>(e - b));
  }
  return full;
}

struct Outcome {
  torch::Tensor logits;  // [B, L, V] (the vocabulary blocks put together)
  double loss = 0;
  std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> params;  // name -> (value, gradient)
};

// One forward and backward of the model on `ranks` in-process ranks, tensor parallel `t`;
// rank `report`'s figures, the logits gathered over its tensor group.
std::vector<Outcome> RunModel(const TransformerOptions& o, int ranks, int t, int p,
                              const std::function<std::pair<torch::Tensor, torch::Tensor>(int)>& batch_of) {
  std::vector<Outcome> out(static_cast<size_t>(ranks));
  comm::InProcessWorld world(ranks);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    torch::set_num_threads(1);
    ParallelGroups groups(ctx, t, p);
    TransformerLm lm = MakeTransformerLm(o, groups, 5);
    const auto [x, y] = batch_of(ctx.rank());
    const torch::Tensor logits = lm.model->Forward(x);
    const torch::Tensor loss =
        VocabParallelCrossEntropy(logits.reshape({-1, logits.size(-1)}), y.reshape({-1}),
                                  lm.embedding->vocab_begin(), *lm.tensor_group)
            .mean();
    torch::Tensor total = loss;
    for (const MoeLayer& m : lm.moe_layers) total = total + 0.01 * m->balance_loss() + 0.001 * m->z_loss();
    total.backward();
    // The logits of every vocabulary block, gathered in rank order (blocks may differ by one).
    const int64_t v = o.vocab;
    std::vector<float> all(static_cast<size_t>(x.numel() * v));
    std::vector<uint64_t> counts;
    for (int r = 0; r < t; ++r) {
      const auto [b, e] = collective::BlockRange(static_cast<size_t>(v), t, r);
      counts.push_back(static_cast<uint64_t>(x.numel()) * (e - b));
    }
    const torch::Tensor mine = logits.reshape({-1, logits.size(-1)}).t().contiguous();  // [Vl, N]
    collective::Allgatherv(groups.tensor(), mine.data_ptr<float>(), all.data(), counts, DType::kFloat32);
    Outcome& me = out[static_cast<size_t>(ctx.rank())];
    me.logits = torch::from_blob(all.data(), {v, x.numel()}).t().reshape({x.size(0), x.size(1), v}).clone();
    me.loss = loss.item<double>();
    for (const auto& item : lm.model->named_parameters()) {
      me.params[item.key()] = {item.value().detach().clone(), item.value().grad().clone()};
    }
  }));
  return out;
}

// T = 2 and T = 3 (vocabulary 11: blocks 6 + 5 and 4 + 4 + 3) give one rank's logits, loss and
// gradients, each rank's parameters being its shard of the one-rank model's.
TEST(TensorParallel, MatchesOneRankIncludingAVocabularyThatDoesNotDivide) {
  const TransformerOptions o = Small();
  const auto batch = [&](int) { return FixedBatch(o.vocab, 3); };
  const Outcome one = RunModel(o, 1, 1, 1, batch)[0];
  for (int t : {2, 3}) {
    const std::vector<Outcome> split = RunModel(o, t, t, 1, batch);
    for (int r = 0; r < t; ++r) {
      const Outcome& got = split[static_cast<size_t>(r)];
      EXPECT_TRUE(torch::allclose(got.logits, one.logits, 1e-4, 1e-5)) << "T = " << t << ", rank " << r;
      EXPECT_NEAR(got.loss, one.loss, 1e-5) << "T = " << t;
      ASSERT_EQ(got.params.size(), one.params.size());
      for (const auto& [name, value_grad] : one.params) {
        const auto& [value, grad] = got.params.at(name);
        const torch::Tensor want_value = Shard(name, value_grad.first, t, r, o.vocab);
        const torch::Tensor want_grad = Shard(name, value_grad.second, t, r, o.vocab);
        ASSERT_TRUE(torch::equal(value, want_value))
            << name << ": T = " << t << " rank " << r << " holds another shard";
        // Within float32's rounding at the tensor's scale: a sum's order varies with the thread
        // team torch's parallel regions get while other ranks' threads run (one CI run saw 2.6e-6
        // on a tensor of 0.23, where a quiet run differs by 4e-8), so an element's own size is no
        // yardstick; a wrong shard or a missing reduction is off by the gradient itself.
        const double scale = want_grad.abs().max().item<double>();
        const double off = (grad - want_grad).abs().max().item<double>();
        EXPECT_LE(off, 1e-4 * scale + 1e-7) << name << ": T = " << t << " rank " << r
                                            << " gradient differs by " << off << " at scale " << scale;
      }
    }
  }
}

// Two ranks with their own tokens: experts split over both (P = 2, tokens moved by all-to-all)
// against every rank holding all experts (P = 1). Same losses and dense gradients on each rank; an
// expert's gradient under P = 2 sums what the two ranks' copies got under P = 1.
TEST(ExpertParallel, MatchesReplicatedExpertsForTheSameRouting) {
  TransformerOptions o = Small();
  o.moe_experts = 4;
  o.moe_every = 1;
  o.moe_top_k = 2;
  o.capacity_factor = 1.0;  // some tokens dropped, the same ones in both layouts
  const auto batch = [&](int rank) { return FixedBatch(o.vocab, 3 + 10 * rank); };
  const std::vector<Outcome> replicated = RunModel(o, 2, 1, 1, batch);
  const std::vector<Outcome> split = RunModel(o, 2, 1, 2, batch);
  for (int r = 0; r < 2; ++r) {
    const Outcome& a = replicated[static_cast<size_t>(r)];
    const Outcome& b = split[static_cast<size_t>(r)];
    EXPECT_NEAR(a.loss, b.loss, 1e-6) << "rank " << r;
    for (const auto& [name, vg] : b.params) {
      const bool expert =
          name.find(".moe.w") != std::string::npos || name.find(".moe.b") != std::string::npos;
      if (!expert) {
        EXPECT_TRUE(torch::allclose(vg.second, a.params.at(name).second, 1e-4, 1e-7))
            << name << ", rank " << r;
        continue;
      }
      // Rank r holds experts [2r, 2r + 2) of the replicated layer's four.
      const torch::Tensor sum = replicated[0].params.at(name).second + replicated[1].params.at(name).second;
      EXPECT_TRUE(torch::equal(vg.first, a.params.at(name).first.narrow(0, 2 * r, 2))) << name;
      EXPECT_TRUE(torch::allclose(vg.second, sum.narrow(0, 2 * r, 2), 1e-4, 1e-7)) << name << ", rank " << r;
    }
  }
}

TEST(ParallelLayout, ARankWithAnotherExpertCountIsNamed) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParallelGroups groups(ctx, 1, 2);
    TransformerOptions o = Small();
    o.moe_experts = ctx.rank() == 0 ? 4 : 2;
    MakeTransformerLm(o, groups, 1);
  });
  EXPECT_THAT(comm::testing::Message(errors[0]),
              HasSubstr("rank 1 builds a model of 2 experts, this rank of 4"));
  EXPECT_THAT(comm::testing::Message(errors[1]),
              HasSubstr("rank 0 builds a model of 4 experts, this rank of 2"));
}

TEST(ParallelLayout, HeadsThatDoNotSplitOverTheTensorRanksAreRefused) {
  comm::InProcessWorld world(2);
  auto more = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParallelGroups groups(ctx, 2, 1);
    MakeTransformerLm({.vocab = 11, .layers = 1, .d_model = 24, .heads = 3, .ffn = 48, .seq = 8}, groups, 1);
  });
  EXPECT_THAT(comm::testing::Message(more[0]), HasSubstr("3 heads do not split over tensor parallel 2"));
}

// The validation loss over 2 replicas x 2 tensor ranks is one rank's, batch by batch (the MoE
// capacity is per batch, so the same batches must meet the same experts).
TEST(LmEvaluation, SplitOverReplicasEqualsOneProcess) {
  TransformerOptions o = Small();
  o.moe_experts = 2;
  o.moe_every = 2;
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < 200; ++i) tokens.push_back((i * 5 + i / 7) % o.vocab);
  const auto evaluate = [&](int ranks, int t, int p) {
    LmEvaluation got;
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      torch::set_num_threads(1);
      ParallelGroups groups(ctx, t, p);
      TransformerLm lm = MakeTransformerLm(o, groups, 9);
      const LmEvaluation e = EvaluateLm(groups, lm, tokens, o.seq, 3, 0);
      if (ctx.rank() == 0) got = e;
    }));
    return got;
  };
  const LmEvaluation one = evaluate(1, 1, 1);
  EXPECT_EQ(one.tokens, 24 * 8);  // 24 whole windows of 8 (+ 1) in 200 tokens
  for (const auto& [ranks, t, p] : {std::tuple{2, 1, 2}, std::tuple{4, 2, 2}, std::tuple{3, 1, 1}}) {
    const LmEvaluation e = evaluate(ranks, t, p);
    EXPECT_EQ(e.tokens, one.tokens);
    EXPECT_NEAR(e.loss, one.loss, 1e-6 * one.loss) << ranks << " ranks, T " << t << ", P " << p;
  }
}

// A text with structure to learn (sentences built from a small grammar): a few steps of a small
// model on 2 replicas x 2 tensor ranks with a mixture of experts over the replicas cut the
// validation loss well below its start, and the experts' load stays near even.
TEST(LmTrainer, LearnsATextOnTwoReplicasTimesTwoTensorRanks) {
  std::string text;
  const char* subjects[] = {"the cat", "a dog", "my friend", "the king"};
  const char* verbs[] = {"sees", "likes", "finds", "keeps"};
  const char* objects[] = {"the ball.", "a hat.", "the bread.", "my book."};
  for (int i = 0; i < 1200; ++i) {
    text += fmt::format("{} {} {}\n", subjects[(i * 7) % 4], verbs[(i * 5 + i / 4) % 4],
                        objects[(i * 3 + i / 16) % 4]);
  }
  LmOptions o;
  o.data_path = WriteTestFile("lm_grammar.txt", text);
  o.model = {.layers = 2, .d_model = 32, .heads = 4, .ffn = 64, .seq = 32, .moe_experts = 4, .moe_every = 2};
  o.batch = 8;
  o.steps = 60;
  o.optimizer.lr = 3e-3;
  o.tensor_parallel = 2;
  o.expert_parallel = 2;
  o.eval_batches = 8;
  std::vector<LmResult> results(4);
  comm::InProcessWorld world(4);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = TrainLm(ctx, o); }));
  const LmResult& r = results[0];
  ASSERT_FALSE(r.evaluations.empty());
  ASSERT_EQ(r.evaluations.back().step, 60);
  ASSERT_EQ(r.steps.size(), 60u);
  // The first step's loss is about log(vocabulary); the grammar leaves far less to guess.
  EXPECT_NEAR(r.steps[0].loss, std::log(static_cast<double>(r.vocab)), 0.3);
  EXPECT_LT(r.evaluations.back().loss, 0.5 * r.steps[0].loss);
  EXPECT_LT(r.steps.back().expert_load, 2.0);  // 4 experts: 4 would be all on one
  for (const LmResult& other : results)
    EXPECT_DOUBLE_EQ(other.evaluations.back().loss, r.evaluations.back().loss);
}

}  // namespace
}  // namespace parasol::dl
