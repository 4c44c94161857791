#include "parasol/apps/gnn/ghost_exchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

constexpr std::string_view kWhat = "gnn ghost rows (bounded staleness)";
// How often the communication thread drives the messages in flight. Each poll costs the cores
// that compute (MPI's progress under its thread lock): over a 1 Gbit/s link a 300k-vertex graph's
// S = 1 epoch took 677-720 ms polling every 100 us, 575-600 ms every 1-5 ms.
constexpr auto kPollInterval = std::chrono::milliseconds(1);

}  // namespace

GhostExchange::GhostExchange(comm::Context& ctx, uint32_t staleness, GhostTransfer transfer)
    : ctx_(ctx), staleness_(staleness), transfer_(transfer) {
  if (transfer_ == GhostTransfer::kOneSided && staleness_ > 0) {
    throw InvalidArgumentError("one-sided ghost rows need staleness 0 (stale rows travel two-sided)");
  }
  if (staleness_ == 0 || ctx.size() == 1) return;
  async_ = ctx.Duplicate(ctx.DefaultDeadline());
  // Drive catches the transport's errors into their slot; anything else fails every waiting slot.
  thread_.Start([this](std::stop_token stop) { Progress(stop); },
                [this](std::exception_ptr error) {
                  MutexLock lock(mu_);
                  for (Slot* slot : queue_) {
                    slot->done = true;
                    slot->error = error;
                  }
                  queue_.clear();
                  cv_.NotifyAll();
                });
}

GhostExchange::~GhostExchange() {
  if (!async_) return;
  thread_.Stop([this] {
    MutexLock lock(mu_);
    cv_.NotifyAll();
  });
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
                         bool reduce, Slot* slot) {
  slot->epoch = epoch_;
  // A refresh sends owned rows to the ranks holding them as ghosts; a reduction the reverse.
  const std::vector<uint64_t>& send_counts = reduce ? s.recv_counts : s.send_counts;
  const std::vector<uint64_t>& recv_counts = reduce ? s.send_counts : s.recv_counts;
  if (reduce) {
    const auto ghosts = m.subspan(s.owned.size() * width);
    slot->send.assign(ghosts.begin(), ghosts.end());
    slot->recv.resize(s.send_rows.size() * width);
  } else {
    slot->send.resize(s.send_rows.size() * width);
    float* out = slot->send.data();
    for (uint32_t row : s.send_rows) {
      std::memcpy(out, m.data() + static_cast<size_t>(row) * width, width * sizeof(float));
      out += width;
    }
    slot->recv.resize(s.ghosts.size() * width);
  }
  comm::Transport& t = async_->transport();
  size_t sent = 0, received = 0;  // rows
  for (int p = 0; p < s.ranks; ++p) {
    const auto peer = static_cast<size_t>(p);
    if (p == s.rank) continue;  // an owner's own rows are never its ghosts
    if (recv_counts[peer] > 0) {
      slot->requests.push_back(
          t.Irecv(p, tag, slot->recv.data() + received * width, recv_counts[peer] * width * sizeof(float)));
    }
    if (send_counts[peer] > 0) {
      slot->requests.push_back(
          t.Isend(p, tag, slot->send.data() + sent * width, send_counts[peer] * width * sizeof(float)));
    }
    sent += send_counts[peer];
    received += recv_counts[peer];
  }
  bytes_sent_ += slot->send.size() * sizeof(float);
  MutexLock lock(mu_);
  queue_.push_back(slot);
  cv_.NotifyAll();
}

void GhostExchange::Drive(Slot* slot, const std::stop_token& stop) {
  comm::Transport& t = async_->transport();
  while (!stop.stop_requested()) {
    int pending = -1;
    for (comm::Request& r : slot->requests) {
      if (!r.valid()) continue;
      try {
        if (t.Test(r)) continue;
      } catch (const Error& e) {
        comm::RethrowWithOperation(t, e, kWhat);
      }
      if (pending < 0) pending = r.peer;
    }
    if (pending < 0) return;
    if (auto failure = t.PeerFailure())
      throw AbortedError(fmt::format("rank {}: {}: aborted because {}", t.rank(), kWhat, *failure));
    {
      MutexLock lock(mu_);
      slot->waiting_for = pending;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void GhostExchange::Progress(std::stop_token stop) {
  MutexLock lock(mu_);
  while (true) {
    while (!stop.stop_requested() && queue_.empty()) cv_.Wait(mu_);
    if (stop.stop_requested()) return;
    Slot* slot = queue_.front();
    lock.Unlock();
    std::exception_ptr error;
    try {
      Drive(slot, stop);
    } catch (...) {
      error = std::current_exception();
    }
    lock.Lock();
    if (stop.stop_requested()) return;
    queue_.pop_front();
    slot->done = true;
    slot->error = error;
    cv_.NotifyAll();
  }
}

void GhostExchange::Complete(Slot* slot) {
  const Deadline deadline = async_->DefaultDeadline();
  MutexLock lock(mu_);
  while (!slot->done) {
    if (!cv_.WaitUntil(mu_, deadline.time()) && deadline.Expired() && !slot->done) {
      throw TimeoutError(
          fmt::format("rank {}: {}: deadline passed waiting for peer {} (the rows of epoch {})", ctx_.rank(),
                      kWhat, slot->waiting_for, slot->epoch));
    }
  }
  if (slot->error) std::rethrow_exception(slot->error);
}

GhostExchange::Channel& GhostExchange::PostNext(const GraphShard& s, size_t width, std::span<const float> m,
                                                bool reduce) {
  if (next_channel_ == channels_.size()) channels_.emplace_back().width = width;
  Channel& c = channels_[next_channel_];
  if (c.width != width) throw InternalError("ghost exchange: an exchange changed width between epochs");
  Post(s, width, static_cast<comm::Tag>(next_channel_), m, reduce, &c.in_flight.emplace_back());
  ++next_channel_;
  return c;
}

void GhostExchange::Refresh(const GraphShard& s, size_t width, std::span<float> m) {
  if (m.size() != s.local_rows() * width) throw InternalError("ghost exchange: matrix of the wrong size");
  last_rows_epoch_ = epoch_;
  if (!async_) {
    bytes_sent_ += RefreshAtOnce(s, width, m);
    return;
  }
  Channel& c = PostNext(s, width, m, false);
  // Take every exchange old enough (epoch - S), and the first one whatever its age: there is
  // nothing older to use.
  while (!c.in_flight.empty() && (c.in_flight.front().epoch + staleness_ <= epoch_ || c.rows_epoch == 0)) {
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
  bytes_sent_ += RefreshAtOnce(s, width, m);
}

uint64_t GhostExchange::RefreshAtOnce(const GraphShard& s, size_t width, std::span<float> m) {
  if (transfer_ == GhostTransfer::kTwoSided || s.ranks == 1)
    return RefreshGhosts(ctx_, s, width, m, &scratch_);
  if (!window_) window_ = std::make_unique<GhostWindow>(ctx_, s);
  return window_->Refresh(s, width, m);
}

void GhostExchange::Reduce(const GraphShard& s, size_t width, std::span<float> m) {
  if (m.size() != s.local_rows() * width) throw InternalError("ghost exchange: matrix of the wrong size");
  if (!async_) {
    bytes_sent_ += ReduceGhosts(ctx_, s, width, m, &scratch_);
    return;
  }
  Channel& c = PostNext(s, width, m, true);
  // The other ranks' parts of epoch - S (none in the first S epochs: they arrive S epochs late).
  while (!c.in_flight.empty() && c.in_flight.front().epoch + staleness_ <= epoch_) {
    Slot& oldest = c.in_flight.front();
    Complete(&oldest);
    const float* in = oldest.recv.data();
    for (uint32_t row : s.send_rows) {
      float* to = m.data() + static_cast<size_t>(row) * width;
      for (size_t j = 0; j < width; ++j) to[j] += in[j];
      in += width;
    }
    c.in_flight.pop_front();
  }
}

void GhostExchange::Drain() {
  if (window_) window_->Close();
  for (Channel& c : channels_) {
    for (Slot& slot : c.in_flight) Complete(&slot);
    c.in_flight.clear();
  }
}

}  // namespace parasol::apps::gnn
