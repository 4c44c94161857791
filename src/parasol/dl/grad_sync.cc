// GradSync at run time: hooks launch units; the communication thread reduces them in an order
// every rank agrees on and applies the optimizer; the training thread waits where it must.
#include "parasol/dl/grad_sync.h"

#include <algorithm>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/grad_sync_internal.h"

namespace parasol::dl {

void GradSync::OnGradReady(int param) {
  if (mirror_) MirrorGradIn(param);
  if (options_.mode == SyncMode::kAfterBackward) return;
  for (int u : units_of_param_[param]) {
    if (--units_[u]->pending == 0) Launch(u);
  }
}

void GradSync::OnFactors(int unit, const torch::Tensor& g, const torch::Tensor& x) {
  Unit& u = *units_[unit];
  u.g = g.to(torch::kCPU);
  u.x = x.to(torch::kCPU).contiguous();
  if (options_.mode != SyncMode::kAfterBackward && --u.pending == 0) Launch(unit);
}

void GradSync::Launch(int unit) { board_->Launch(unit); }

SyncStats GradSync::stats() const {
  SyncStats s = stats_;
  if (board_) s.units_done = board_->units_done();
  return s;
}

// P3, and the parameter server (which reads the gradient back in forward order): the next
// forward of a stage waits only for that stage's update.
void GradSync::BeforeStage(int stage) {
  if (!WaitsPerStage()) return;
  WaitUnits(stage_first_unit_[stage], stage_end_unit_[stage]);
}

// PyTorch 2's zero_grad() sets gradients to None (and a user may assign one): autograd would
// then accumulate into a new tensor the synchroniser never reads, and the step would apply zeros.
// Every backward starts from the flat buffer's views again.
void GradSync::AttachGradients() {
  for (size_t i = 0; i < param_tensors_.size(); ++i) {
    torch::Tensor& p = param_tensors_[i];
    const ParamSpan& span = spans_[i];
    const float* view = grads_.data_ptr<float>() + span.begin;
    if (p.grad().defined() && p.grad().data_ptr() == view && p.grad().sizes() == p.sizes()) continue;
    p.mutable_grad() = grads_.narrow(0, span.begin, span.numel).view(p.sizes());
  }
}

void GradSync::BeforeBackward(int64_t step, double lr_scale) {
  step_ = step;
  if (options_.backend == Backend::kNone && optimizer_->options().kind == OptimizerKind::kExternal) {
    return;  // one rank and the caller's own optimizer: nothing to do, autograd keeps its gradients
  }
  if (!mirror_) AttachGradients();
  if (options_.backend != Backend::kNone) {
    WaitUnits(0, num_units());
    for (auto& u : units_) u->pending = u->sfb ? 1 : u->end_param - u->first_param;
  }
  if (mirror_) {
    MirrorChangedIn();
    for (torch::Tensor& p : param_tensors_) p.mutable_grad() = torch::Tensor();  // autograd makes new ones
  }
  if (options_.backend != Backend::kNone) board_->BeginStep();
  ZeroGradients();
  // After the waits: the last step's updates (P3's run on after AfterBackward) keep their rate.
  optimizer_->set_step(step, lr_scale);
}

// Sufficient-factor units write their layer's gradient whole (RunSfb), and backward never
// accumulates into it: only the other units' ranges need zeroing (most of VGG's are the former).
void GradSync::ZeroGradients() {
  if (units_.empty()) {
    grads_.zero_();
    return;
  }
  for (const auto& u : units_) {
    if (!u->sfb) grads_.narrow(0, u->begin, u->numel()).zero_();
  }
}

void GradSync::AfterBackward() {
  if (options_.backend == Backend::kNone) {
    torch::NoGradGuard no_grad;
    const bool external = optimizer_->options().kind == OptimizerKind::kExternal;
    if (mirror_ && external) return;  // the parameters' own gradients are the step's
    const int n = static_cast<int>(spans_.size());
    for (int i = 0; mirror_ && i < n; ++i) MirrorGradIn(i);
    if (options_.measure_gradient_norms && ctx_.size() == 1) MeasureAlone();
    for (int i = 0; i < n; ++i) {
      optimizer_->UpdateParam(i);
      if (mirror_) MirrorOut(i);
    }
    return;
  }
  // after-backward launches everything now; other modes, whatever backward did not reach.
  for (int u = num_units() - 1; u >= 0; --u) {
    if (units_[u]->pending <= 0) continue;
    if (units_[u]->sfb && !units_[u]->g.defined())
      throw InternalError("a fully-connected layer sent no factors");
    units_[u]->pending = 0;
    Launch(u);
  }
  if (!WaitsPerStage()) WaitUnits(0, num_units());
}

void GradSync::Flush() {
  if (options_.backend != Backend::kNone) WaitUnits(0, num_units());
}

void GradSync::SetBatchPerRank(int64_t batch_per_rank) {
  options_.batch_per_rank = batch_per_rank;
  previous_step_ = -1;
}

void GradSync::WaitUnits(int first, int end) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + 2 * options_.timeout_ms + std::chrono::seconds(1);
  if (!board_->WaitDone(first, end, deadline)) {
    throw TimeoutError(
        fmt::format("rank {}: gradient synchronisation ({} over {}) did not finish within {} ms", ctx_.rank(),
                    ToString(options_.mode), ToString(options_.backend), options_.timeout_ms.count()));
  }
  stats_.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (first == 0 && end == num_units()) norms_ = impl_->finished;
}

// Two consecutive steps' gradients stand in for two ranks' (the parameters move little between
// them); the pairs do not overlap, so each step's gradient is used once.
void GradSync::MeasureAlone() {
  if (previous_step_ < 0) {
    if (!previous_grads_.defined()) previous_grads_ = torch::empty_like(grads_);
    previous_grads_.copy_(grads_);
    previous_sqr_ = torch::dot(grads_, grads_).item<double>();
    previous_step_ = step_;
    return;
  }
  const double a = previous_sqr_, b = torch::dot(grads_, grads_).item<double>();
  const double ab = torch::dot(previous_grads_, grads_).item<double>();
  norms_ = {.step = step_,
            .local_sqr = (a + b) / 2,
            .total_sqr = (a + b + 2 * ab) / 4,
            .count = 2,
            .local_batch = options_.batch_per_rank};
  previous_step_ = -1;
}

// ---- communication thread ----

void GradSync::CommLoop() {
  at::init_num_threads();
  torch::NoGradGuard no_grad;
  while (RunStep()) {
  }
}

bool GradSync::RunStep() {
  // The step's state (pending counts, frontier) is the training thread's to reset first.
  if (!board_->TakeStep()) return false;
  impl_->local_sqr = impl_->total_sqr = impl_->shard_sqr = 0;
  param_pending_.assign(spans_.size(), 0);
  for (size_t p = 0; p < spans_.size(); ++p) param_pending_[p] = static_cast<int>(units_of_param_[p].size());
  if (options_.mode == SyncMode::kP3 && options_.backend != Backend::kPs) return RunStepByPriority();
  // Every rank runs the units in one fixed order, the order backward makes them ready.
  for (int u = num_units() - 1; u >= 0; --u) {
    if (!board_->TakeLaunch(u)) return false;
    RunUnit(*units_[u]);
    if (u == 0) FinishNorms();
    if (options_.backend != Backend::kPs) board_->MarkDone(u);
  }
  if (options_.backend == Backend::kPs) RunPsStep();
  return true;
}

// P3: the ranks agree on a frontier (every stage from it up is ready everywhere) and always run
// the ready slice nearest the input, so a lower layer's slices overtake at slice boundaries.
bool GradSync::RunStepByPriority() {
  impl_->agreed_frontier = static_cast<int>(stage_first_unit_.size());  // the number of stages
  std::vector<bool> ran(units_.size(), false);
  for (int remaining = num_units(); remaining > 0;) {
    int next = -1;
    for (int u = 0; u < num_units() && next < 0; ++u) {
      if (!ran[u] && units_[u]->stage >= impl_->agreed_frontier) next = u;
    }
    if (next < 0) {
      if (!board_->WaitFrontierBelow(impl_->agreed_frontier)) return false;
      AgreeFrontier(nullptr, 0);
      continue;
    }
    if (!board_->TakeLaunch(next)) return false;
    RunUnit(*units_[next]);
    if (units_[next]->sfb || options_.shard_updates) AgreeFrontier(nullptr, 0);
    ran[next] = true;
    if (--remaining == 0) FinishNorms();
    board_->MarkDone(next);
  }
  return true;
}

// All-reduces data[0, n) (may be empty) with a readiness vector appended (this rank's frontier at
// its slot), so the frontier rides on a slice's reduction instead of a message of its own.
void GradSync::AgreeFrontier(float* data, int64_t n) {
  const int p = ctx_.size();
  std::vector<float>& buf = impl_->scratch;
  buf.assign(static_cast<size_t>(n + p), 0.0f);
  if (n > 0) std::copy(data, data + n, buf.begin());
  buf[n + ctx_.rank()] = static_cast<float>(board_->local_frontier());
  collective::Allreduce(*comm_ctx_, buf.data(), buf.data(), buf.size(), DType::kFloat32);
  if (n > 0) std::copy(buf.begin(), buf.begin() + n, data);
  impl_->agreed_frontier = static_cast<int>(*std::max_element(buf.begin() + n, buf.end()));
}

void GradSync::RunUnit(Unit& u) {
  if (options_.backend == Backend::kPs) {
    PushPs(u);
  } else if (u.sfb) {
    RunSfb(u);
  } else if (options_.shard_updates) {
    RunSharded(u);
  } else {
    RunDense(u);
  }
}

void GradSync::RunDense(Unit& u) {
  const int p = ctx_.size();
  MeasureLocal(u);
  float* g = grads_.data_ptr<float>() + u.begin;
  if (options_.mode == SyncMode::kP3) {
    AgreeFrontier(g, u.numel());
  } else {
    collective::Allreduce(*comm_ctx_, g, g, static_cast<size_t>(u.numel()), DType::kFloat32);
  }
  grads_.narrow(0, u.begin, u.numel()).mul_(1.0 / p);
  MeasureAveraged(u);
  stats_.bytes_sent += 2ull * static_cast<uint64_t>(u.numel()) * (p - 1) / p * 4;
  FinishParams(u);
}

// Before the reduction: this rank's gradient of the unit (under SFB, from its factors:
// |G^T X|^2 = sum((G G^T) o (X X^T)), and the bias gradient is G's column sums).
void GradSync::MeasureLocal(const Unit& u) {
  if (!options_.measure_gradient_norms) return;
  if (u.sfb) {
    impl_->local_sqr += (torch::mm(u.g, u.g.t()) * torch::mm(u.x, u.x.t())).sum().item<double>();
    const torch::Tensor db = u.g.sum(0);
    impl_->local_sqr += torch::dot(db, db).item<double>();
    return;
  }
  const torch::Tensor g = grads_.narrow(0, u.begin, u.numel());
  impl_->local_sqr += torch::dot(g, g).item<double>();
}

// After averaging, before the optimizer (which adds weight decay into the buffer). SFB units
// span their layer's weight and bias.
void GradSync::MeasureAveraged(const Unit& u) {
  if (!options_.measure_gradient_norms) return;
  auto sqr = [&](const ParamSpan& span) {
    const torch::Tensor g = grads_.narrow(0, span.begin, span.numel);
    return torch::dot(g, g).item<double>();
  };
  if (u.sfb) {
    impl_->total_sqr += sqr(spans_[u.weight]) + sqr(spans_[u.bias]);
    return;
  }
  const torch::Tensor g = grads_.narrow(0, u.begin, u.numel());
  impl_->total_sqr += torch::dot(g, g).item<double>();
}

// After the step's last unit, before it is marked done: the mean of the ranks' local norms, and
// the sharded units' blocks of the averaged gradient summed over the ranks.
void GradSync::FinishNorms() {
  if (!options_.measure_gradient_norms || options_.backend == Backend::kPs) return;
  double sums[2] = {impl_->local_sqr, impl_->shard_sqr};
  collective::Allreduce(*comm_ctx_, sums, sums, 2, DType::kFloat64);
  const int p = ctx_.size();
  impl_->finished = {.step = step_,
                     .local_sqr = sums[0] / p,
                     .total_sqr = impl_->total_sqr + sums[1],
                     .count = p,
                     .local_batch = options_.batch_per_rank};
}

void GradSync::FinishParams(const Unit& u) {
  for (int i = u.first_param; i < u.end_param; ++i) {
    if (--param_pending_[i] != 0) continue;
    optimizer_->UpdateParam(i);
    if (mirror_) MirrorOut(i);
  }
}

// ---- mirrored parameters (on a GPU) ----

// Autograd's thread, from the accumulator's hook: the gradient is final (a parameter backward
// did not reach keeps a zero gradient). The copy waits for the GPU.
void GradSync::MirrorGradIn(int param) {
  const torch::Tensor& g = param_tensors_[param].grad();
  if (g.defined()) grads_.narrow(0, spans_[param].begin, spans_[param].numel).copy_(g.reshape({-1}));
}

// Communication thread: a final parameter's new values, or under an external optimizer its
// averaged gradient, into the model's tensors.
void GradSync::MirrorOut(int param) {
  torch::Tensor& p = param_tensors_[param];
  const ParamSpan& span = spans_[param];
  if (optimizer_->options().kind != OptimizerKind::kExternal) {
    MirrorRangeOut(span.begin, span.end());
    return;
  }
  const torch::Tensor g = grads_.narrow(0, span.begin, span.numel).view(p.sizes());
  if (p.grad().defined()) {
    p.mutable_grad().copy_(g);
  } else {
    p.mutable_grad() = g.to(p.options(), /*non_blocking=*/false, /*copy=*/true);
  }
}

// The flat parameters [begin, end) into the parameters that hold them (parts of them at the ends).
void GradSync::MirrorRangeOut(int64_t begin, int64_t end) {
  for (size_t i = 0; i < spans_.size(); ++i) {
    const int64_t lo = std::max(begin, spans_[i].begin), hi = std::min(end, spans_[i].end());
    if (hi <= lo) continue;
    torch::Tensor p = param_tensors_[i].detach();
    p.view({-1}).narrow(0, lo - spans_[i].begin, hi - lo).copy_(params_.narrow(0, lo, hi - lo));
    mirrored_version_[i] = param_tensors_[i]._version();
  }
}

void GradSync::FlatParametersChanged() {
  if (!mirror_) return;  // the parameters are views of the flat buffer
  torch::NoGradGuard no_grad;
  MirrorRangeOut(0, params_.numel());
}

// Training thread, every update done: parameters written since the synchroniser last did (their
// version moved) are read back into the flat buffer. Under an external optimizer the flat
// parameters are not used.
void GradSync::MirrorChangedIn() {
  if (optimizer_->options().kind == OptimizerKind::kExternal) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < param_tensors_.size(); ++i) {
    const torch::Tensor& p = param_tensors_[i];
    if (p._version() == mirrored_version_[i]) continue;
    params_.narrow(0, spans_[i].begin, spans_[i].numel).copy_(p.detach().reshape({-1}));
    mirrored_version_[i] = p._version();
  }
}

}  // namespace parasol::dl
