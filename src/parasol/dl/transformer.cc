#include "parasol/dl/transformer.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/torch_generator.h"

namespace parasol::dl {
namespace {

namespace nn = torch::nn;
constexpr double kInitStd = 0.02;

class EmbedImpl : public nn::Module {
 public:
  EmbedImpl(VocabParallelEmbedding tokens, int64_t seq, int64_t d)
      : tokens_(register_module("tokens", std::move(tokens))),
        positions_(register_parameter("positions", torch::randn({seq, d}) * kInitStd)) {}
  torch::Tensor forward(const torch::Tensor& ids) {
    return tokens_(ids) + positions_.narrow(0, 0, ids.size(1));
  }

 private:
  VocabParallelEmbedding tokens_;
  torch::Tensor positions_;
};
TORCH_MODULE(Embed);

class BlockImpl : public nn::Module {
 public:
  BlockImpl(const TransformerOptions& o, TensorGroup& group, MoeLayer moe)
      : heads_(o.heads / group.size()),
        head_dim_(o.d_model / o.heads),
        ln1_(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({o.d_model})))),
        qkv_(register_module("qkv", ColumnParallelLinear(o.d_model, 3 * o.d_model, group, 3, kInitStd))),
        proj_(register_module("proj", RowParallelLinear(o.d_model, o.d_model, group, ResidualStd(o)))),
        ln2_(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({o.d_model})))) {
    if (moe) {
      moe_ = register_module("moe", std::move(moe));
    } else {
      fc1_ = register_module("fc1", ColumnParallelLinear(o.d_model, o.ffn, group, 1, kInitStd));
      fc2_ = register_module("fc2", RowParallelLinear(o.ffn, o.d_model, group, ResidualStd(o)));
    }
  }
  static double ResidualStd(const TransformerOptions& o) { return kInitStd / std::sqrt(2.0 * o.layers); }

  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor h = Attention(ln1_(x));
    torch::Tensor y = x + proj_(h);
    const torch::Tensor z = ln2_(y);
    if (moe_) return y + moe_(z.reshape({-1, z.size(-1)})).view(z.sizes());
    return y + fc2_(torch::gelu(fc1_(z)));
  }

 private:
  // Causal self-attention of this rank's heads: [B, L, d] -> [B, L, heads x head_dim].
  torch::Tensor Attention(const torch::Tensor& x) {
    const int64_t b = x.size(0), l = x.size(1);
    // One unbind of the 3, B, H, L, hd view (an index per q, k and v would each write a zeroed copy
    // of the whole projection in backward); the scale goes on q (L x hd per head, not L x L), and
    // the causal mask is the product's starting value (no pass of its own, none in backward).
    const std::vector<torch::Tensor> qkv =
        qkv_(x).view({b, l, 3, heads_, head_dim_}).permute({2, 0, 3, 1, 4}).unbind(0);
    const torch::Tensor q =
        (qkv[0] * (1.0 / std::sqrt(static_cast<double>(head_dim_)))).reshape({b * heads_, l, head_dim_});
    const torch::Tensor k = qkv[1].reshape({b * heads_, l, head_dim_}),
                        v = qkv[2].reshape({b * heads_, l, head_dim_});
    const torch::Tensor scores =
        torch::baddbmm(CausalMask(l).expand({b * heads_, l, l}), q, k.transpose(1, 2));
    const torch::Tensor a = torch::bmm(torch::softmax(scores, -1), v).view({b, heads_, l, head_dim_});
    return a.transpose(1, 2).reshape({b, l, heads_ * head_dim_});
  }

  // 0 on and below the diagonal, -inf above: added to the scores, a position sees none after it.
  torch::Tensor CausalMask(int64_t l) {
    if (mask_.size(0) != l) {
      mask_ = torch::full({l, l}, -std::numeric_limits<float>::infinity()).triu(1);
    }
    return mask_;
  }

  int64_t heads_, head_dim_;
  torch::Tensor mask_ = torch::empty({0, 0});
  nn::LayerNorm ln1_;
  ColumnParallelLinear qkv_;
  RowParallelLinear proj_;
  nn::LayerNorm ln2_;
  ColumnParallelLinear fc1_{nullptr};
  RowParallelLinear fc2_{nullptr};
  MoeLayer moe_{nullptr};
};
TORCH_MODULE(Block);

// The final norm and the output layer, tied to the token embedding (held, not registered: its
// weight belongs to the embedding stage).
class HeadImpl : public nn::Module {
 public:
  HeadImpl(int64_t d, VocabParallelEmbedding tokens)
      : ln_(register_module("ln", nn::LayerNorm(nn::LayerNormOptions({d})))), tokens_(std::move(tokens)) {}
  torch::Tensor forward(const torch::Tensor& x) { return tokens_->Logits(ln_(x)); }

 private:
  nn::LayerNorm ln_;
  VocabParallelEmbedding tokens_;
};
TORCH_MODULE(Head);

void CheckShapes(const TransformerOptions& o, const ParallelGroups& g) {
  const auto fail = [](const std::string& why) { throw InvalidArgumentError(why); };
  if (o.vocab < 1 || o.layers < 1 || o.d_model < 1 || o.heads < 1 || o.ffn < 1 || o.seq < 1)
    fail("transformer: vocabulary, layers, d_model, heads, ffn and seq must be positive");
  if (o.d_model % o.heads != 0)
    fail(fmt::format("d_model {} is not a multiple of the {} heads", o.d_model, o.heads));
  const int t = g.tensor_parallel();
  if (o.heads % t != 0) fail(fmt::format("{} heads do not split over tensor parallel {}", o.heads, t));
  if (o.ffn % t != 0) fail(fmt::format("ffn {} does not split over tensor parallel {}", o.ffn, t));
  if (o.moe_experts > 0 && o.moe_every < 1) fail("moe_every must be at least 1");
}

// Every rank must build the same model: a rank with other experts or widths would meet the others
// in collectives of other sizes. Named before any of them.
void AgreeOnShape(const TransformerOptions& o, ParallelGroups& g) {
  const std::vector<std::pair<const char*, int64_t>> fields = {
      {"vocabulary", o.vocab},    {"layers", o.layers},   {"d_model", o.d_model},
      {"heads", o.heads},         {"ffn", o.ffn},         {"seq", o.seq},
      {"experts", o.moe_experts}, {"top-k", o.moe_top_k}, {"moe_every", o.moe_every}};
  std::vector<int64_t> mine;
  for (const auto& f : fields) mine.push_back(f.second);
  comm::Context& world = g.world();
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(world.size()));
  collective::Allgather(world, mine.data(), all.data(), mine.size(), DType::kInt64);
  for (int r = 0; r < world.size(); ++r) {
    for (size_t i = 0; i < fields.size(); ++i) {
      const int64_t theirs = all[static_cast<size_t>(r) * mine.size() + i];
      if (theirs != mine[i]) {
        throw MismatchError(
            fmt::format("rank {}: transformer: rank {} builds a model of {} {}, this rank of {}",
                        world.rank(), r, theirs, fields[i].first, mine[i]));
      }
    }
  }
}

}  // namespace

TransformerLm MakeTransformerLm(const TransformerOptions& o, ParallelGroups& groups, uint64_t seed) {
  CheckShapes(o, groups);
  AgreeOnShape(o, groups);
  TransformerLm lm;
  lm.tensor_group = std::make_unique<TensorGroup>(groups.tensor());  // collective: before the lock
  TensorGroup& group = *lm.tensor_group;
  SeededTorchGenerator generator(seed);
  lm.model = std::make_shared<Model>("transformer-lm", std::vector<int64_t>{o.seq});
  lm.embedding = VocabParallelEmbedding(o.vocab, o.d_model, group, kInitStd);
  lm.model->AddStage("embedding", nn::Sequential(Embed(lm.embedding, o.seq, o.d_model)));
  for (int64_t i = 0; i < o.layers; ++i) {
    MoeLayer moe{nullptr};
    if (o.moe_experts > 0 && (i + 1) % o.moe_every == 0) {
      moe = MoeLayer(MoeOptions{.d_model = o.d_model,
                                .d_ff = o.ffn,
                                .experts = o.moe_experts,
                                .top_k = o.moe_top_k,
                                .capacity_factor = o.capacity_factor,
                                .eval_capacity_factor = o.eval_capacity_factor,
                                .init_std = kInitStd,
                                .out_init_std = BlockImpl::ResidualStd(o)},
                     groups.expert());
      lm.moe_layers.push_back(moe);
      for (const torch::Tensor& p : moe->expert_parameters()) lm.expert_parameters.push_back(p);
    }
    lm.model->AddStage(fmt::format("block{}", i), nn::Sequential(Block(o, group, moe)));
  }
  lm.model->AddStage("head", nn::Sequential(Head(o.d_model, lm.embedding)));
  return lm;
}

}  // namespace parasol::dl
