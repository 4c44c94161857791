// GradSync's reductions other than a plain all-reduce: weight-update sharding, sufficient-factor
// broadcasting and the parameter server. Communication thread only.
#include <algorithm>

#include "parasol/collective/collectives.h"
#include "parasol/dl/grad_sync_internal.h"

namespace parasol::dl {

// Reduce-scatter the unit, update this rank's block (parameters and momentum), all-gather the
// parameters. Blocks follow BlockRange, whose sizes may differ by one; the all-gather runs on
// equal blocks in a scratch buffer.
void GradSync::RunSharded(Unit& u) {
  const int p = ctx_.size(), rank = ctx_.rank();
  const size_t n = static_cast<size_t>(u.numel());
  MeasureLocal(u);
  float* g = grads_.data_ptr<float>() + u.begin;
  collective::ReduceScatter(*comm_ctx_, g, g, n, DType::kFloat32);
  auto [b, e] = collective::BlockRange(n, p, rank);
  grads_.narrow(0, u.begin + b, e - b).mul_(1.0 / p);
  if (options_.measure_gradient_norms) {
    const torch::Tensor block = grads_.narrow(0, u.begin + b, e - b);
    impl_->shard_sqr += torch::dot(block, block).item<double>();
  }
  std::vector<double> trust(spans_.size(), 1.0);
  if (optimizer_->options().lars) {
    // Whole-parameter norms from every rank's block of each parameter.
    std::vector<double> norms(2 * (u.end_param - u.first_param), 0.0);
    for (int i = u.first_param; i < u.end_param; ++i) {
      const int64_t lo = std::max<int64_t>(spans_[i].begin, u.begin + b),
                    hi = std::min<int64_t>(spans_[i].end(), u.begin + e);
      if (hi <= lo) continue;
      norms[2 * (i - u.first_param)] = params_.narrow(0, lo, hi - lo).pow(2).sum().item<double>();
      norms[2 * (i - u.first_param) + 1] = grads_.narrow(0, lo, hi - lo).pow(2).sum().item<double>();
    }
    collective::Allreduce(*comm_ctx_, norms.data(), norms.data(), norms.size(), DType::kFloat64);
    for (int i = u.first_param; i < u.end_param; ++i) {
      trust[i] = optimizer_->TrustRatio(norms[2 * (i - u.first_param)], norms[2 * (i - u.first_param) + 1]);
    }
  }
  optimizer_->UpdateRange(u.begin + b, u.begin + e, trust);
  const size_t c = (n + p - 1) / p;
  std::vector<float>& buf = impl_->scratch;
  buf.assign(c * p, 0.0f);
  float* w = params_.data_ptr<float>() + u.begin;
  std::copy(w + b, w + e, buf.begin() + rank * c);
  collective::Allgather(*comm_ctx_, buf.data(), buf.data(), c, DType::kFloat32);
  for (int q = 0; q < p; ++q) {
    auto [qb, qe] = collective::BlockRange(n, p, q);
    std::copy(buf.begin() + q * c, buf.begin() + q * c + (qe - qb), w + qb);
  }
  stats_.bytes_sent += 2ull * c * (p - 1) * 4;
  if (mirror_) MirrorRangeOut(u.begin, u.begin + u.numel());
}

// Every rank gathers every rank's factors and forms the same sum of g_k^T x_k: the batch's
// weight gradient without sending the M x N matrix.
void GradSync::RunSfb(Unit& u) {
  const int p = ctx_.size();
  const int64_t k = u.g.size(0), m = u.rows, n = u.cols;
  MeasureLocal(u);
  torch::Tensor local = torch::cat({u.g.reshape({-1}), u.x.reshape({-1})});
  torch::Tensor all = torch::empty({p, k * (m + n)});
  collective::Allgather(*comm_ctx_, local.data_ptr<float>(), all.data_ptr<float>(),
                        static_cast<size_t>(local.numel()), DType::kFloat32);
  torch::Tensor gs = all.narrow(1, 0, k * m).reshape({p * k, m});
  torch::Tensor xs = all.narrow(1, k * m, k * n).reshape({p * k, n});
  const ParamSpan& ws = spans_[u.weight];
  const ParamSpan& bs = spans_[u.bias];
  torch::Tensor dw = grads_.narrow(0, ws.begin, ws.numel).view({m, n});
  torch::mm_out(dw, gs.t(), xs);
  dw.mul_(1.0 / p);
  torch::Tensor db = grads_.narrow(0, bs.begin, bs.numel);
  torch::sum_out(db, gs, {0});
  db.mul_(1.0 / p);
  MeasureAveraged(u);
  u.g = torch::Tensor();
  u.x = torch::Tensor();
  stats_.bytes_sent += static_cast<uint64_t>((p - 1) * k * (m + n)) * 4;
  FinishParams(u);
}

// The unit's averaged gradient replaces this rank's last one in the table: the change is pushed
// row by row as each row's last unit finishes (a row two units share leaves once), and every
// MiB or so leaves now (Flush), so pushing overlaps the rest of backward. The rows sent are asked
// for at the next clock at once: the table takes one update per row per clock, so a shard answers
// each row when every rank's push of it is in, and the replies overlap backward too.
void GradSync::PushPs(const Unit& u) {
  const uint64_t step = impl_->worker->clock();
  auto table = impl_->worker->GetTable<float>(PsTableOf(*impl_, step));
  const float* g = grads_.data_ptr<float>();
  float* pushed = impl_->pushed[step % static_cast<uint64_t>(impl_->num_tables)].data();
  const float scale = 1.0f / static_cast<float>(ctx_.size());
  const int64_t n = params_.numel();
  for (int64_t row = u.begin / kPsRowWidth; row * kPsRowWidth < u.end; ++row) {
    const int64_t base = row * kPsRowWidth, hi = std::min(n, base + kPsRowWidth);
    int64_t& left = impl_->row_left[static_cast<size_t>(row)];
    left -= std::min(u.end, hi) - std::max(u.begin, base);
    if (left > 0) continue;
    left = hi - base;
    std::fill(impl_->row.begin(), impl_->row.end(), 0.0f);
    for (int64_t i = base; i < hi; ++i) {
      const float now = g[i] * scale;
      impl_->row[i - base] = now - pushed[i];
      pushed[i] = now;
    }
    table.IncRow(static_cast<uint64_t>(row), impl_->row);
    impl_->unflushed.push_back(static_cast<uint64_t>(row));
  }
  if (static_cast<int64_t>(impl_->unflushed.size()) * kPsRowWidth * static_cast<int64_t>(sizeof(float)) >=
      (int64_t{1} << 20)) {
    impl_->worker->Flush();
    table.PrefetchNextClock(impl_->unflushed);
    impl_->unflushed.clear();
  }
}

// Clock, then read the aggregated gradient back unit by unit in forward order, so that the next
// forward of a layer waits only for its own rows: the rows not asked for during backward are asked
// for at once (one request per shard per unit; the shards answer each row as soon as every rank's
// push of it is in) and each unit's parameters are updated as soon as its rows are here.
void GradSync::RunPsStep() {
  impl_->worker->Clock();
  impl_->unflushed.clear();
  auto table = impl_->worker->GetTable<float>(PsTableOf(*impl_, impl_->worker->clock() - 1));
  std::vector<uint64_t> rows;
  for (int u = 0; u < num_units(); ++u) {
    rows.clear();
    for (int64_t row = units_[u]->begin / kPsRowWidth; row * kPsRowWidth < units_[u]->end; ++row)
      rows.push_back(row);
    table.Prefetch(rows);
  }
  float* g = grads_.data_ptr<float>();
  const int64_t n = params_.numel();
  int64_t read_to = 0;  // rows below are read
  for (int u = 0; u < num_units(); ++u) {
    Unit& unit = *units_[u];
    for (int64_t row = read_to; row * kPsRowWidth < unit.end; ++row) {
      table.Get(static_cast<uint64_t>(row)).CopyTo(impl_->row);
      const int64_t base = row * kPsRowWidth, hi = std::min(n, base + kPsRowWidth);
      std::copy(impl_->row.begin(), impl_->row.begin() + (hi - base), g + base);
      read_to = row + 1;
    }
    FinishParams(unit);
    if (u + 1 == num_units()) {
      // What this rank's exchange put on the wire: its pushes and requests, and the replies it
      // got (summed over ranks, every byte sent), counted once this step's replies are all in
      // and before the last unit is marked done (the training thread may then read stats_).
      const ps::PsStats now = impl_->ps->stats();
      const uint64_t traffic = now.bytes_out - now.reply_bytes_out + now.reply_bytes_in;
      stats_.bytes_sent += traffic - impl_->traffic;
      impl_->traffic = traffic;
    }
    board_->MarkDone(u);
  }
}

}  // namespace parasol::dl
