#include "parasol/apps/gnn/ghost_exchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

GhostExchange::GhostExchange(comm::Context& ctx, uint32_t staleness) : ctx_(ctx), staleness_(staleness) {
  if (staleness_ > 0 && ctx.size() > 1) async_ = ctx.Duplicate(ctx.DefaultDeadline());
}

GhostExchange::~GhostExchange() {
  if (!async_) return;
  for (Channel& c : channels_)
    for (Slot& slot : c.in_flight)
      for (comm::Request& r : slot.requests)
        if (r.valid()) async_->transport().Cancel(r);
}

void GhostExchange::BeginEpoch(uint64_t epoch) {
  if (epoch <= epoch_) throw InternalError(fmt::format("ghost exchange: epoch {} after {}", epoch, epoch_));
  epoch_ = epoch;
  next_channel_ = 0;
}

void GhostExchange::Post(const GraphShard& s, size_t width, comm::Tag tag, std::span<const float> m,
                         Slot* slot) {
  slot->epoch = epoch_;
  slot->send.resize(s.send_rows.size() * width);
  float* out = slot->send.data();
  for (uint32_t row : s.send_rows) {
    std::memcpy(out, m.data() + static_cast<size_t>(row) * width, width * sizeof(float));
    out += width;
  }
  slot->recv.resize(s.ghosts.size() * width);
  comm::Transport& t = async_->transport();
  size_t sent = 0, received = 0;  // rows
  for (int p = 0; p < s.ranks; ++p) {
    const auto peer = static_cast<size_t>(p);
    if (p == s.rank) continue;  // an owner's own rows are never its ghosts
    if (s.recv_counts[peer] > 0) {
      slot->requests.push_back(t.Irecv(p, tag, slot->recv.data() + received * width,
                                       s.recv_counts[peer] * width * sizeof(float)));
    }
    if (s.send_counts[peer] > 0) {
      slot->requests.push_back(t.Isend(p, tag, slot->send.data() + sent * width,
                                       s.send_counts[peer] * width * sizeof(float)));
    }
    sent += s.send_counts[peer];
    received += s.recv_counts[peer];
  }
  bytes_sent_ += slot->send.size() * sizeof(float);
}

void GhostExchange::Complete(Slot* slot) {
  const Deadline deadline = async_->DefaultDeadline();
  for (comm::Request& r : slot->requests)
    if (r.valid()) comm::Wait(async_->transport(), r, deadline, "gnn ghost rows (bounded staleness)");
  slot->requests.clear();
}

void GhostExchange::Refresh(const GraphShard& s, size_t width, std::span<float> m) {
  if (m.size() != s.local_rows() * width) throw InternalError("ghost exchange: matrix of the wrong size");
  last_rows_epoch_ = epoch_;
  if (!async_) {
    bytes_sent_ += RefreshGhosts(ctx_, s, width, m, &scratch_);
    return;
  }
  if (next_channel_ == channels_.size()) channels_.emplace_back().width = width;
  Channel& c = channels_[next_channel_];
  if (c.width != width) throw InternalError("ghost exchange: a refresh changed width between epochs");
  Post(s, width, static_cast<comm::Tag>(next_channel_), m, &c.in_flight.emplace_back());
  ++next_channel_;
  // Take every exchange old enough (epoch - S), and the first one whatever its age: there is
  // nothing older to use.
  while (!c.in_flight.empty() &&
         (c.in_flight.front().epoch + staleness_ <= epoch_ || c.rows_epoch == 0)) {
    Slot& oldest = c.in_flight.front();
    Complete(&oldest);
    c.rows.swap(oldest.recv);
    c.rows_epoch = oldest.epoch;
    c.in_flight.pop_front();
  }
  std::copy(c.rows.begin(), c.rows.end(), m.begin() + static_cast<std::ptrdiff_t>(s.owned.size() * width));
  last_rows_epoch_ = c.rows_epoch;
}

void GhostExchange::RefreshNow(const GraphShard& s, size_t width, std::span<float> m) {
  bytes_sent_ += RefreshGhosts(ctx_, s, width, m, &scratch_);
}

void GhostExchange::Reduce(const GraphShard& s, size_t width, std::span<float> m) {
  bytes_sent_ += ReduceGhosts(ctx_, s, width, m, &scratch_);
}

void GhostExchange::Drain() {
  for (Channel& c : channels_) {
    for (Slot& slot : c.in_flight) Complete(&slot);
    c.in_flight.clear();
  }
}

}  // namespace parasol::apps::gnn
