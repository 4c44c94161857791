#include "parasol/apps/lda/totals_exchange.h"

#include <cassert>

#include <fmt/format.h>

#include "parasol/comm/transport.h"
#include "parasol/core/clock.h"

namespace parasol::apps::lda {

namespace {
constexpr comm::Tag kChangesTag = 1;
}  // namespace

TotalsExchange::TotalsExchange(comm::Context& ctx, size_t topics, std::chrono::milliseconds timeout_ms)
    : ctx_(ctx.Duplicate(Deadline::After(timeout_ms))),
      topics_(topics),
      timeout_ms_(timeout_ms),
      received_(static_cast<size_t>(ctx.size())),
      sends_(static_cast<size_t>(ctx.size())),
      recvs_(static_cast<size_t>(ctx.size())) {}

TotalsExchange::~TotalsExchange() {
  comm::Transport& t = ctx_->transport();
  for (auto* reqs : {&sends_, &recvs_}) {
    for (comm::Request& r : *reqs) {
      if (r.valid()) t.Cancel(r);
    }
  }
}

void TotalsExchange::Post(std::span<const int64_t> changes) {
  assert(!pending_ && changes.size() == topics_);
  comm::Transport& t = ctx_->transport();
  sent_.assign(changes.begin(), changes.end());
  const size_t bytes = topics_ * sizeof(int64_t);
  for (int p = 0; p < ctx_->size(); ++p) {
    if (p == ctx_->rank()) continue;
    const auto i = static_cast<size_t>(p);
    received_[i].resize(topics_);
    recvs_[i] = t.Irecv(p, kChangesTag, received_[i].data(), bytes);
    sends_[i] = t.Isend(p, kChangesTag, sent_.data(), bytes);
  }
  pending_ = true;
}

void TotalsExchange::Poll() {
  if (!pending_) return;
  comm::Transport& t = ctx_->transport();
  for (auto* reqs : {&sends_, &recvs_}) {
    for (comm::Request& r : *reqs) {
      if (r.valid()) t.Test(r);
    }
  }
}

void TotalsExchange::Collect(std::span<int64_t> totals) {
  if (!pending_) return;
  assert(totals.size() == topics_);
  comm::Transport& t = ctx_->transport();
  Clock& clock = ctx_->env().clock();
  const Clock::TimePoint start = clock.Now();
  const Deadline deadline = Deadline::After(timeout_ms_);
  for (int p = 0; p < ctx_->size(); ++p) {
    const auto i = static_cast<size_t>(p);
    if (recvs_[i].valid())
      comm::Wait(t, recvs_[i], deadline, fmt::format("lda: receive topic totals from rank {}", p));
    if (sends_[i].valid())
      comm::Wait(t, sends_[i], deadline, fmt::format("lda: send topic totals to rank {}", p));
    if (p == ctx_->rank()) continue;
    for (size_t k = 0; k < topics_; ++k) totals[k] += received_[i][k];
  }
  wait_seconds_ += std::chrono::duration<double>(clock.Now() - start).count();
  pending_ = false;
}

}  // namespace parasol::apps::lda
