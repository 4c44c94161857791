#include "parasol/apps/gnn/gnn_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "parasol/apps/gnn/gcn.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

// Adam (Kingma and Ba) with the bias correction, as torch.optim.Adam.
class Adam {
 public:
  Adam(size_t size, float lr) : lr_(lr), m_(size, 0.0f), v_(size, 0.0f) {}
  void Step(std::span<float> params, std::span<const float> grad) {
    ++t_;
    const double c1 = 1 - std::pow(kBeta1, t_), c2 = 1 - std::pow(kBeta2, t_);
    const auto step = static_cast<float>(lr_ / c1), root_c2 = static_cast<float>(std::sqrt(c2));
    for (size_t i = 0; i < params.size(); ++i) {
      m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * grad[i];
      v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * grad[i] * grad[i];
      params[i] -= step * m_[i] / (std::sqrt(v_[i]) / root_c2 + kEpsilon);
    }
  }

 private:
  static constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;
  float lr_;
  int t_ = 0;
  std::vector<float> m_, v_;
};

// Softmax cross-entropy summed over the owned vertices of each split, and correct predictions.
struct SplitSums {
  double loss[3] = {0, 0, 0}, correct[3] = {0, 0, 0};
};

// Sums over owned rows; if `d_train` is given, it receives d(mean training loss)/d(output) with
// the global number of training vertices `train_total`.
SplitSums Score(const GraphShard& s, std::span<const float> out, size_t train_total,
                std::vector<float>* d_train) {
  const auto c = static_cast<size_t>(s.classes);
  SplitSums sums;
  if (d_train) d_train->assign(out.size(), 0.0f);
  std::vector<double> p(c);
  for (size_t i = 0; i < s.owned.size(); ++i) {
    const auto split = static_cast<size_t>(s.split[i]);
    if (split > 2) continue;  // unlabeled
    const float* z = out.data() + i * c;
    const float top = *std::max_element(z, z + c);
    double total = 0;
    for (size_t k = 0; k < c; ++k) total += p[k] = std::exp(static_cast<double>(z[k] - top));
    const auto label = static_cast<size_t>(s.labels[i]);
    sums.loss[split] += std::log(total) - static_cast<double>(z[label] - top);
    sums.correct[split] += static_cast<size_t>(std::max_element(z, z + c) - z) == label ? 1 : 0;
    if (d_train && s.split[i] == Split::kTrain) {
      for (size_t k = 0; k < c; ++k) {
        const double d = (p[k] / total - (k == label ? 1 : 0)) / static_cast<double>(train_total);
        (*d_train)[i * c + k] = static_cast<float>(d);
      }
    }
  }
  return sums;
}

void NormalizeFeatureRows(GraphShard* s) {
  for (size_t i = 0; i < s->owned.size(); ++i) {
    const auto begin = s->feature_values.begin() + static_cast<std::ptrdiff_t>(s->feature_offsets[i]);
    const auto end = s->feature_values.begin() + static_cast<std::ptrdiff_t>(s->feature_offsets[i + 1]);
    double sum = 0;
    for (auto it = begin; it != end; ++it) sum += *it;
    if (sum == 0) continue;  // no features, or values that cancel: left as they are
    for (auto it = begin; it != end; ++it) *it = static_cast<float>(*it / sum);
  }
}

}  // namespace

GnnResult TrainGnn(comm::Context& ctx, const Graph& g, const GnnOptions& o,
                   const std::function<void(const GnnEpoch&)>& on_epoch) {
  const size_t train = g.CountSplit(Split::kTrain);
  if (train == 0) throw InvalidArgumentError("the graph has no training vertex (split 'train')");
  if (o.patience > 0 && g.CountSplit(Split::kValidation) == 0)
    throw InvalidArgumentError("early stopping (patience) needs validation vertices (split 'val')");
  const double counts[3] = {static_cast<double>(train), static_cast<double>(g.CountSplit(Split::kValidation)),
                            static_cast<double>(g.CountSplit(Split::kTest))};
  // METIS takes a while on big graphs: one rank runs it and tells the others.
  std::vector<int32_t> owner;
  if (o.partition == PartitionKind::kMetis && ctx.size() > 1) {
    owner =
        ctx.rank() == 0 ? PartitionVertices(g, ctx.size(), o.partition) : std::vector<int32_t>(g.vertices);
    collective::Broadcast<int32_t>(ctx, owner);
  } else {
    owner = PartitionVertices(g, ctx.size(), o.partition);
  }
  GraphShard s = MakeShard(g, owner, ctx.rank(), ctx.size());
  if (o.normalize_features) NormalizeFeatureRows(&s);
  Gcn model(g.features, o.hidden, static_cast<size_t>(g.classes));
  model.InitGlorot(o.seed);
  Adam adam(model.parameters().size(), o.lr);
  std::vector<float> grad(model.parameters().size()), d_out;
  GnnResult result;
  const auto start = std::chrono::steady_clock::now();
  double best_val_loss = std::numeric_limits<double>::infinity();
  int since_best = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    model.Forward(ctx, s, {.rate = o.dropout, .seed = o.seed, .epoch = static_cast<uint64_t>(epoch)});
    const SplitSums fit = Score(s, model.output(), train, &d_out);
    model.Backward(ctx, s, d_out, grad);
    collective::Allreduce<float>(ctx, grad);
    const float* w0 = model.parameters().data() + model.weight_offset(0);
    for (size_t i = 0; i < model.in_width(0) * model.out_width(0); ++i) grad[i] += o.weight_decay * w0[i];
    adam.Step(model.parameters(), grad);
    model.Forward(ctx, s, {});
    const SplitSums eval = Score(s, model.output(), train, nullptr);
    double sums[6] = {fit.loss[0], fit.correct[0], eval.loss[1], eval.correct[1], eval.correct[2], 0};
    collective::Allreduce<double>(ctx, sums);
    GnnEpoch e;
    e.epoch = epoch;
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    e.train_loss = sums[0] / counts[0];
    e.train_accuracy = sums[1] / counts[0];
    e.val_loss = counts[1] > 0 ? sums[2] / counts[1] : 0;
    e.val_accuracy = counts[1] > 0 ? sums[3] / counts[1] : 0;
    e.test_accuracy = counts[2] > 0 ? sums[4] / counts[2] : 0;
    e.bytes_sent = model.ghost_bytes_sent();
    result.epochs.push_back(e);
    if (on_epoch) on_epoch(e);
    if (o.patience == 0 || e.val_loss < best_val_loss) {
      best_val_loss = std::min(best_val_loss, e.val_loss);
      since_best = 0;
      result.reported = result.epochs.size() - 1;
      result.parameters.assign(model.parameters().begin(), model.parameters().end());
    } else if (++since_best >= o.patience) {
      break;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parasol::apps::gnn
