#include "parasol/comm/transport.h"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "parasol/comm/memory_region.h"
#include "parasol/core/error.h"

namespace parasol::comm {

std::string_view RequestKindName(Request::Kind kind) {
  switch (kind) {
    case Request::Kind::kNone: return "none";
    case Request::Kind::kSend: return "send";
    case Request::Kind::kRecv: return "receive";
    case Request::Kind::kPut: return "put";
    case Request::Kind::kGet: return "get";
  }
  return "?";
}

void Transport::TestSome(std::span<Request> reqs, std::vector<size_t>& done) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].valid() && Test(reqs[i])) done.push_back(i);
  }
}

namespace {

void CancelAll(Transport& t, std::vector<Request>& reqs) {
  for (auto& r : reqs) {
    if (r.valid()) t.Cancel(r);
  }
}

// Waits for every request; on any failure cancels the rest and rethrows.
void WaitAll(Transport& t, std::vector<Request>& reqs, Deadline deadline, std::string_view what) {
  try {
    for (auto& r : reqs) {
      if (r.valid()) Wait(t, r, deadline, what);
    }
  } catch (...) {
    CancelAll(t, reqs);
    throw;
  }
}

}  // namespace

void RethrowWithOperation(const Transport& t, const Error& e, std::string_view what) {
  // The transport's message names this rank and the peer; add the operation.
  std::string_view inner = e.what();
  const std::string prefix = fmt::format("rank {}: ", t.rank());
  if (inner.starts_with(prefix)) inner.remove_prefix(prefix.size());
  ThrowError(e.code(), fmt::format("rank {}: {}: {}", t.rank(), what, inner));
}

void Wait(Transport& t, Request& req, Deadline deadline, std::string_view what) {
  while (true) {
    uint64_t epoch = t.Epoch();
    try {
      if (t.Test(req)) return;
    } catch (const Error& e) {
      RethrowWithOperation(t, e, what);
    }
    if (auto failure = t.PeerFailure()) {
      t.Cancel(req);
      throw AbortedError(fmt::format("rank {}: {}: aborted because {}", t.rank(), what, *failure));
    }
    if (deadline.Expired()) {
      int peer = req.peer;
      auto kind = req.kind;
      size_t bytes = req.bytes;
      t.Cancel(req);
      throw TimeoutError(fmt::format("rank {}: {}: deadline passed waiting for peer {} ({} of {} bytes)",
                                     t.rank(), what, peer, RequestKindName(kind), bytes));
    }
    t.WaitForEvent(epoch, deadline);
  }
}

void ExchangeWithAll(Transport& t, Tag tag, const void* mine, size_t bytes, void* out, Deadline deadline,
                     std::string_view what) {
  auto* dst = static_cast<std::byte*>(out);
  std::memcpy(dst + static_cast<size_t>(t.rank()) * bytes, mine, bytes);
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<size_t>(t.size()));
  for (int p = 0; p < t.size(); ++p) {
    if (p == t.rank()) continue;
    reqs.push_back(t.Irecv(p, tag, dst + static_cast<size_t>(p) * bytes, bytes));
  }
  for (int p = 0; p < t.size(); ++p) {
    if (p == t.rank()) continue;
    reqs.push_back(t.Isend(p, tag, mine, bytes));
  }
  WaitAll(t, reqs, deadline, what);
}

std::vector<int> ExchangeColors(Transport& t, Tag tag, int color, Deadline deadline) {
  std::vector<int> colors(static_cast<size_t>(t.size()));
  ExchangeWithAll(t, tag, &color, sizeof color, colors.data(), deadline, "split transport");
  // Checked after the exchange, so that every rank hears of a bad one instead of waiting for it.
  for (int r = 0; r < t.size(); ++r) {
    if (colors[static_cast<size_t>(r)] < 0) {
      throw InvalidArgumentError(fmt::format("rank {}: split: rank {} passed color {}, a negative one",
                                             t.rank(), r, colors[static_cast<size_t>(r)]));
    }
  }
  return colors;
}

void MemoryRegion::CheckRange(std::string_view op, int rank, int peer, size_t offset, size_t bytes) const {
  if (peer < 0 || static_cast<size_t>(peer) >= sizes_.size()) {
    throw InvalidArgumentError(
        fmt::format("rank {}: {}: no rank {} (job has {} ranks)", rank, op, peer, sizes_.size()));
  }
  size_t limit = sizes_[static_cast<size_t>(peer)];
  if (offset > limit || bytes > limit - offset) {
    throw InvalidArgumentError(
        fmt::format("rank {}: {}: bytes [{}, {}) lie outside peer {}'s region of {} bytes", rank, op, offset,
                    offset + bytes, peer, limit));
  }
}

}  // namespace parasol::comm
