#include "parasol/apps/gnn/ghost_window.h"

#include <cstring>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

constexpr std::string_view kWindowWhat = "gnn ghost rows (one-sided)";
constexpr comm::Tag kReadyTag = 1, kDoneTag = 2, kOffsetTag = 3;

}  // namespace

GhostWindow::GhostWindow(comm::Context& ctx, const GraphShard& s)
    : ctx_(ctx.Duplicate(ctx.DefaultDeadline())), offset_at_owner_(static_cast<size_t>(s.ranks), 0) {
  // Where each peer's rows start in this rank's block, sent to that peer.
  std::vector<uint64_t> mine(static_cast<size_t>(s.ranks), 0);
  for (size_t p = 1; p < mine.size(); ++p) mine[p] = mine[p - 1] + s.send_counts[p - 1];
  std::vector<uint64_t> all(mine.size() * mine.size());
  comm::ExchangeWithAll(ctx_->transport(), kOffsetTag, mine.data(), mine.size() * sizeof(uint64_t),
                        all.data(), ctx_->DefaultDeadline(), kWindowWhat);
  for (size_t owner = 0; owner < mine.size(); ++owner) {
    offset_at_owner_[owner] = all[owner * mine.size() + static_cast<size_t>(s.rank)];
  }
  for (int p = 0; p < s.ranks; ++p) {
    if (p != s.rank && s.send_counts[static_cast<size_t>(p)] > 0) readers_.push_back(p);
  }
}

// A reader may still be reading this rank's block (an error, or a rank that stopped early, ends
// the window without Close): free it only after the readers said done, or once the deadline has
// passed or a peer failed, never under a live reader's get.
GhostWindow::~GhostWindow() {
  comm::Transport& t = ctx_->transport();
  if (readers_pending_) {
    const Deadline deadline = ctx_->DefaultDeadline();
    for (int p : readers_) {
      try {
        comm::Request r = t.Irecv(p, kDoneTag, &token_, 0);
        comm::Wait(t, r, deadline, kWindowWhat);
      } catch (const Error&) {
        // Wait cancelled it: the reader is gone or late past the deadline.
      }
    }
  }
  for (comm::Request& r : notices_) {
    if (r.valid()) t.Cancel(r);
  }
}

// The readers' done of the last refresh, and this rank's own notices of it (sends complete when
// their peers receive them, which those peers do here or in their next refresh's reads).
void GhostWindow::AwaitReaders() {
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = ctx_->DefaultDeadline();
  if (readers_pending_) {
    for (int p : readers_) {
      comm::Request r = t.Irecv(p, kDoneTag, &token_, 0);
      comm::Wait(t, r, deadline, kWindowWhat);
    }
    readers_pending_ = false;
  }
  for (comm::Request& r : notices_) comm::Wait(t, r, deadline, kWindowWhat);
  notices_.clear();
}

// A new region, wide enough: every rank gets here in the same refresh (widths are the same on
// every rank), after its readers of the old region are done.
void GhostWindow::Grow(const GraphShard& s, size_t width) {
  const Deadline deadline = ctx_->DefaultDeadline();
  if (region_) region_->Close(deadline);
  width_ = width;
  packed_.assign(std::max<size_t>(s.send_rows.size() * width, 1), 0.0f);
  region_ = ctx_->transport().RegisterMemory(packed_.data(), packed_.size() * sizeof(float), deadline);
}

uint64_t GhostWindow::Refresh(const GraphShard& s, size_t width, std::span<float> m) {
  if (m.size() != s.local_rows() * width) throw InternalError("ghost window: matrix of the wrong size");
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = ctx_->DefaultDeadline();
  AwaitReaders();
  if (width > width_) Grow(s, width);
  float* out = packed_.data();
  for (uint32_t row : s.send_rows) {
    std::memcpy(out, m.data() + static_cast<size_t>(row) * width, width * sizeof(float));
    out += width;
  }
  for (int p : readers_) notices_.push_back(t.Isend(p, kReadyTag, &token_, 0));
  readers_pending_ = !readers_.empty();
  // Read each owner's block once it is ready, into this rank's ghost rows (ordered by owner).
  std::vector<comm::Request> reads;
  float* ghosts = m.data() + s.owned.size() * width;
  for (int p = 0; p < s.ranks; ++p) {
    const auto owner = static_cast<size_t>(p);
    if (p == s.rank || s.recv_counts[owner] == 0) continue;
    comm::Request ready = t.Irecv(p, kReadyTag, &token_, 0);
    comm::Wait(t, ready, deadline, kWindowWhat);
    reads.push_back(region_->Get(p, offset_at_owner_[owner] * width * sizeof(float), ghosts,
                                 s.recv_counts[owner] * width * sizeof(float)));
    ghosts += s.recv_counts[owner] * width;
  }
  for (comm::Request& r : reads) {
    while (!region_->Test(r)) {
      if (deadline.Expired()) {
        throw TimeoutError(
            fmt::format("rank {}: {}: deadline passed reading from peer {}", s.rank, kWindowWhat, r.peer));
      }
      if (auto failure = t.PeerFailure())
        throw AbortedError(fmt::format("rank {}: {}: aborted because {}", s.rank, kWindowWhat, *failure));
    }
  }
  for (int p = 0; p < s.ranks; ++p) {
    if (p != s.rank && s.recv_counts[static_cast<size_t>(p)] > 0)
      notices_.push_back(t.Isend(p, kDoneTag, &token_, 0));
  }
  return s.send_rows.size() * width * sizeof(float);
}

void GhostWindow::Close() {
  AwaitReaders();
  if (!region_) return;
  region_->Close(ctx_->DefaultDeadline());
  region_.reset();
}

}  // namespace parasol::apps::gnn
