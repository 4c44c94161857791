// GradSync set-up: flat buffers, the hybrid choice per layer, units per sync mode, hooks.
#include <algorithm>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/grad_sync_internal.h"

namespace parasol::dl {
namespace {

// Runs when a parameter's gradient accumulator has added this step's gradient: the gradient is
// final (each parameter is used once per forward in these models).
class ReadyHook : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::function<void()> fn) : fn_(std::move(fn)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    fn_();
    return outputs;
  }

 private:
  std::function<void()> fn_;
};

}  // namespace

SyncMode ParseSyncMode(const std::string& s) {
  if (s == "after-backward") return SyncMode::kAfterBackward;
  if (s == "buckets") return SyncMode::kBuckets;
  if (s == "wfbp") return SyncMode::kWfbp;
  if (s == "p3") return SyncMode::kP3;
  throw InvalidArgumentError(fmt::format("--sync '{}': after-backward, buckets, wfbp or p3", s));
}

Backend ParseBackend(const std::string& s) {
  if (s == "allreduce") return Backend::kAllreduce;
  if (s == "ps") return Backend::kPs;
  if (s == "hybrid") return Backend::kHybrid;
  if (s == "none") return Backend::kNone;
  throw InvalidArgumentError(fmt::format("--comm '{}': allreduce, ps, hybrid or none", s));
}

std::string ToString(SyncMode m) {
  switch (m) {
    case SyncMode::kAfterBackward: return "after-backward";
    case SyncMode::kBuckets: return "buckets";
    case SyncMode::kWfbp: return "wfbp";
    case SyncMode::kP3: return "p3";
  }
  return "?";
}

std::string ToString(Backend b) {
  switch (b) {
    case Backend::kAllreduce: return "allreduce";
    case Backend::kPs: return "ps";
    case Backend::kHybrid: return "hybrid";
    case Backend::kNone: return "none";
  }
  return "?";
}

SyncLayout LayoutOf(Model& model) {
  SyncLayout layout;
  size_t staged = 0;
  for (int s = 0; s < model.num_stages(); ++s) {
    layout.stage_params.push_back(model.StageParameters(s));
    staged += layout.stage_params.back().size();
  }
  if (staged != model.parameters().size()) throw InternalError("model parameters outside its stages");
  for (const auto& [stage, fc] : model.fc_layers()) {
    FcLayer layer = fc;
    layout.fc_layers.push_back(
        {.stage = stage,
         .name = model.StageName(stage),
         .weight = fc->weight,
         .bias = fc->bias,
         .set_sink = [layer](FactorSink sink) mutable { layer->set_factor_sink(std::move(sink)); }});
  }
  layout.buffers = model.buffers();
  return layout;
}

GradSync::GradSync(comm::Context& ctx, const SyncLayout& layout, const OptimizerOptions& optimizer,
                   const SyncOptions& options)
    : ctx_(ctx), options_(options), impl_(std::make_unique<Impl>()) {
  if (options.shard_updates && options.backend != Backend::kAllreduce &&
      options.backend != Backend::kHybrid) {
    throw InvalidArgumentError("--shard-updates needs --comm allreduce or hybrid");
  }
  if (options.shard_updates && optimizer.lars && options.mode == SyncMode::kP3) {
    throw InvalidArgumentError(
        "--lars with --shard-updates cannot use --sync p3 (slices cut the layers LARS normalises)");
  }
  if (options.shard_updates && optimizer.kind == OptimizerKind::kExternal) {
    throw InvalidArgumentError("weight-update sharding needs an optimizer parasol runs (SGD or AdamW)");
  }
  if (options.bucket_bytes < 4 || options.slice_elements < 1)
    throw InvalidArgumentError("bucket and slice sizes must be positive");
  Flatten(layout);
  collective::Broadcast(ctx_, params_.data_ptr<float>(), params_.numel(), DType::kFloat32);
  for (const torch::Tensor& b : layout.buffers) {
    if (b.scalar_type() != torch::kFloat32 || !b.is_contiguous()) continue;
    torch::Tensor host = b.device().is_cpu() ? b : b.to(torch::kCPU);
    collective::Broadcast(ctx_, host.data_ptr<float>(), host.numel(), DType::kFloat32);
    if (!host.is_same(b)) b.copy_(host);
  }
  if (mirror_) {  // every rank starts from rank 0's parameters
    torch::NoGradGuard no_grad;
    mirrored_version_.resize(param_tensors_.size());
    MirrorRangeOut(0, params_.numel());
  }
  optimizer_ = std::make_unique<Optimizer>(optimizer, params_, grads_, spans_);
  // One rank has nothing to synchronise: every mode is the plain step (no thread, no hooks).
  if (ctx_.size() == 1) options_.backend = Backend::kNone;
  if (options_.backend == Backend::kNone) return;
  PlanHybrid(layout);
  PlanUnits(layout);
  std::vector<int> unit_stage;
  for (const auto& u : units_) unit_stage.push_back(u->stage);
  board_ = std::make_unique<UnitBoard>(std::move(unit_stage), layout.num_stages());
  RegisterHooks();
  comm_ctx_ = ctx_.Duplicate(ctx_.DefaultDeadline());
  if (options_.backend == Backend::kPs) {
    impl_->ps = std::make_unique<ps::ParameterServer>(
        ctx_, ps::PsOptions{.workers_per_process = 1, .timeout_ms = options_.timeout_ms});
    const uint64_t rows = (params_.numel() + kPsRowWidth - 1) / kPsRowWidth;
    impl_->num_tables = options_.ps_staleness == 0 ? 2 : 1;
    for (int t = 0; t < impl_->num_tables; ++t) {
      impl_->ps->CreateTable(
          {.id = kPsTable + static_cast<uint32_t>(t),
           .kind = ps::RowKind::kDense,
           .dtype = DType::kFloat32,
           .width = kPsRowWidth,
           .num_rows = rows,
           .consistency = options_.ps_staleness == 0 ? ps::Consistency::kBsp : ps::Consistency::kSsp,
           .staleness = options_.ps_staleness,
           // Every row is asked for each step, of the step's table only.
           .refresh_cached_rows = impl_->num_tables == 1,
           .one_update_per_clock = true});
      impl_->pushed[t].assign(rows * kPsRowWidth, 0.0f);
    }
    impl_->worker = impl_->ps->CreateWorker(0);
    impl_->row.resize(kPsRowWidth);
    for (uint64_t r = 0; r < rows; ++r) {
      const int64_t base = static_cast<int64_t>(r) * kPsRowWidth;
      impl_->row_left.push_back(std::min(params_.numel(), base + kPsRowWidth) - base);
    }
  }
  thread_.Start([this](std::stop_token) { CommLoop(); },
                [this](std::exception_ptr error) { board_->Fail(error); });
}

GradSync::~GradSync() {
  thread_.Stop([this] {
    if (board_) board_->Stop();
  });
  for (size_t i = 0; i < impl_->accumulators.size(); ++i)
    impl_->accumulators[i]->del_post_hook(impl_->hook_keys[i]);
  if (impl_->ps) {
    impl_->worker.reset();
    if (board_->failed()) {
      impl_->ps->Abort("gradient synchronisation failed");
    } else {
      try {
        impl_->ps->Shutdown();
      } catch (const std::exception&) {
        // The job is ending; the error that ended it was reported by the training thread.
      }
    }
  }
}

void GradSync::Flatten(const SyncLayout& layout) {
  std::vector<std::pair<torch::Tensor, int>> all;
  const auto excluded = [&](const torch::Tensor& p) {
    return std::any_of(options_.excluded.begin(), options_.excluded.end(), [&](const torch::Tensor& e) {
      return e.unsafeGetTensorImpl() == p.unsafeGetTensorImpl();
    });
  };
  for (int s = 0; s < layout.num_stages(); ++s) {
    for (const torch::Tensor& p : layout.stage_params[s]) {
      if (!excluded(p)) all.emplace_back(p, s);
    }
  }
  mirror_ = options_.mirror_parameters ||
            std::any_of(all.begin(), all.end(), [](const auto& ps) { return !ps.first.device().is_cpu(); });
  FlatParameters flat = FlattenParameters(all, /*views=*/!mirror_);
  params_ = flat.params;
  grads_ = flat.grads;
  spans_ = std::move(flat.spans);
  for (auto& [p, s] : all) param_tensors_.push_back(p);
}

void GradSync::PlanHybrid(const SyncLayout& layout) {
  if (options_.backend != Backend::kHybrid) return;
  const uint64_t p = static_cast<uint64_t>(ctx_.size());
  const uint64_t k = static_cast<uint64_t>(options_.batch_per_rank);
  for (const FcSlot& fc : layout.fc_layers) {
    LayerChoice c;
    c.layer = fc.name;
    c.rows = fc.weight.size(0);
    c.cols = fc.weight.size(1);
    const uint64_t m = static_cast<uint64_t>(c.rows), n = static_cast<uint64_t>(c.cols);
    c.sfb_bytes = 2 * k * (p - 1) * (m + n) * 4;
    c.ps_bytes = 2 * m * n * (2 * p - 2) / p * 4;
    c.allreduce_bytes = 2 * m * n * (p - 1) / p * 4;
    c.sfb = p > 1 && c.sfb_bytes < c.ps_bytes;
    choices_.push_back(c);
  }
}

// A unit over parameters [first, end) restricted to [begin, stop) of the flat buffer.
static GradSync::Unit* NewUnit(std::vector<std::unique_ptr<GradSync::Unit>>& units,
                               const std::vector<ParamSpan>& spans, int first, int end, int64_t begin,
                               int64_t stop) {
  auto u = std::make_unique<GradSync::Unit>();
  u->begin = begin;
  u->end = stop;
  while (spans[first].end() <= begin) ++first;
  int last = first;
  while (last < end && spans[last].begin < stop) ++last;
  u->first_param = first;
  u->end_param = last;
  u->stage = spans[first].stage;
  units.push_back(std::move(u));
  return units.back().get();
}

void GradSync::AddDenseRun(int first, int end) {
  const auto begin_of = [&](int i) { return spans_[i].begin; };
  switch (options_.mode) {
    case SyncMode::kAfterBackward:
      NewUnit(units_, spans_, first, end, begin_of(first), spans_[end - 1].end());
      break;
    case SyncMode::kWfbp:
    case SyncMode::kP3:
      for (int i = first; i < end;) {
        int j = i;
        while (j < end && spans_[j].stage == spans_[i].stage) ++j;
        const int64_t b = begin_of(i), e = spans_[j - 1].end();
        const int64_t step = options_.mode == SyncMode::kP3 ? options_.slice_elements : e - b;
        for (int64_t s = b; s < e; s += step) NewUnit(units_, spans_, i, j, s, std::min(e, s + step));
        i = j;
      }
      break;
    case SyncMode::kBuckets: {
      // DDP: parameters in reverse order fill buckets of about bucket_bytes.
      int stop = end;
      uint64_t bytes = 0;
      for (int i = end - 1; i >= first; --i) {
        bytes += static_cast<uint64_t>(spans_[i].numel) * 4;
        if (bytes >= options_.bucket_bytes || i == first) {
          NewUnit(units_, spans_, i, stop, begin_of(i), spans_[stop - 1].end());
          stop = i;
          bytes = 0;
        }
      }
      break;
    }
  }
}

void GradSync::PlanUnits(const SyncLayout& layout) {
  std::vector<int> sfb_weight(spans_.size(), -1);  // param index -> index into fc_layers
  for (size_t l = 0; l < choices_.size(); ++l) {
    if (!choices_[l].sfb) continue;
    const FcSlot& fc = layout.fc_layers[l];
    for (size_t i = 0; i < param_tensors_.size(); ++i) {
      if (param_tensors_[i].is_same(fc.weight)) sfb_weight[i] = static_cast<int>(l);
    }
  }
  const int n = static_cast<int>(spans_.size());
  for (int i = 0; i < n;) {
    if (sfb_weight[i] >= 0) {
      if (i + 1 >= n || !param_tensors_[i + 1].is_same(layout.fc_layers[sfb_weight[i]].bias)) {
        throw InternalError("a fully-connected layer's bias does not follow its weight");
      }
      // The weight, then the bias: registered in that order, so adjacent in the flat buffer.
      Unit* u = NewUnit(units_, spans_, i, i + 2, spans_[i].begin, spans_[i + 1].end());
      u->sfb = true;
      u->weight = i;
      u->bias = i + 1;
      u->rows = choices_[sfb_weight[i]].rows;
      u->cols = choices_[sfb_weight[i]].cols;
      i += 2;
      continue;
    }
    int j = i;
    while (j < n && sfb_weight[j] < 0) ++j;
    AddDenseRun(i, j);
    i = j;
  }
  std::sort(units_.begin(), units_.end(), [](const auto& a, const auto& b) { return a->begin < b->begin; });
  units_of_param_.assign(spans_.size(), {});
  stage_first_unit_.assign(layout.num_stages(), 0);
  stage_end_unit_.assign(layout.num_stages(), 0);
  std::vector<bool> seen(layout.num_stages(), false);
  for (int u = 0; u < num_units(); ++u) {
    for (int p = units_[u]->first_param; p < units_[u]->end_param; ++p) {
      units_of_param_[p].push_back(u);
      const int s = spans_[p].stage;
      if (!seen[s]) stage_first_unit_[s] = u;
      seen[s] = true;
      stage_end_unit_[s] = u + 1;
    }
  }
  // Sinks for the layers that send factors: the unit is launched by its factors, not by hooks.
  for (int u = 0; u < num_units(); ++u) {
    if (!units_[u]->sfb) continue;
    for (const FcSlot& fc : layout.fc_layers) {
      if (fc.weight.is_same(param_tensors_[units_[u]->weight])) {
        fc.set_sink([this, u](const torch::Tensor& g, const torch::Tensor& x) { OnFactors(u, g, x); });
      }
    }
  }
}

void GradSync::RegisterHooks() {
  for (int i = 0; i < static_cast<int>(param_tensors_.size()); ++i) {
    if (units_of_param_[i].empty() || units_[units_of_param_[i][0]]->sfb) continue;
    AccumulatorPtr acc = torch::autograd::impl::grad_accumulator(param_tensors_[i]);
    impl_->hook_keys.push_back(
        acc->add_post_hook(std::make_unique<ReadyHook>([this, i] { OnGradReady(i); })));
    impl_->accumulators.push_back(std::move(acc));
  }
}

torch::Tensor GradSync::GatherMomentum() {
  Flush();
  torch::Tensor m = optimizer_->momentum_buffer();
  if (!options_.shard_updates) return m.clone();
  torch::Tensor owned = torch::zeros_like(m);
  for (const auto& u : units_) {
    if (u->sfb) {
      // Rebuilt whole on every rank: rank 0's copy stands for all.
      if (ctx_.rank() == 0) owned.narrow(0, u->begin, u->numel()).copy_(m.narrow(0, u->begin, u->numel()));
      continue;
    }
    auto [b, e] = collective::BlockRange(static_cast<size_t>(u->numel()), ctx_.size(), ctx_.rank());
    owned.narrow(0, u->begin + b, e - b).copy_(m.narrow(0, u->begin + b, e - b));
  }
  collective::Allreduce(ctx_, owned.data_ptr<float>(), owned.data_ptr<float>(), owned.numel(),
                        DType::kFloat32);
  return owned;
}

}  // namespace parasol::dl
