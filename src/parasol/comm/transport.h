// Point-to-point byte messages between the ranks of a job, and the hooks the collective executor
// needs to wait with a deadline, diagnose mismatches and spread failures.
//
// Threading: a Transport may be used from several threads at once; each Request must be driven
// (Test/Cancel) by one thread at a time. MPI runs with MPI_THREAD_MULTIPLE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/core/deadline.h"
#include "parasol/core/error.h"

namespace parasol::comm {

// Message tag. Users and the collective layer use [0, kMaxUserTag]; higher values are reserved
// for the transport itself (failure notices, registration handshakes).
using Tag = uint32_t;
inline constexpr Tag kMaxUserTag = (1u << 30) - 1;

class MemoryRegion;

// A pending send, receive, put or get. A small value: the fields `handle` and `state` belong to
// the transport (or memory region) that created it and are opaque to everyone else.
struct Request {
  enum class Kind : uint8_t { kNone, kSend, kRecv, kPut, kGet };

  bool valid() const { return kind != Kind::kNone; }
  void Reset() { *this = Request(); }

  Kind kind = Kind::kNone;
  int peer = -1;
  Tag tag = 0;
  size_t bytes = 0;
  uintptr_t handle = 0;
  std::shared_ptr<void> state;
};

std::string_view RequestKindName(Request::Kind kind);

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view name() const = 0;

  // Starts sending `bytes` bytes to `peer`. REQUIRES: the data stays valid and unchanged until
  // the request completes; tag <= kMaxUserTag. Messages between a pair with the same tag are
  // received in the order they were sent.
  virtual Request Isend(int peer, Tag tag, const void* data, size_t bytes) = 0;
  // Starts receiving a message of exactly `bytes` bytes from `peer` with `tag`. A message of
  // another size is reported as a MismatchError when the request is tested.
  virtual Request Irecv(int peer, Tag tag, void* data, size_t bytes) = 0;
  // Returns true once the request has completed, and resets it. Throws PeerGoneError if the peer
  // is gone, MismatchError on a size mismatch. Never blocks.
  virtual bool Test(Request& req) = 0;
  // Tests several requests at once; appends the indices of those that completed (and were reset)
  // to `done`. One progress pass for all of them where the transport allows. Throws like Test.
  virtual void TestSome(std::span<Request> reqs, std::vector<size_t>& done);
  // Receives, without blocking, the next message with `tag` from any peer, whatever its size;
  // nullopt if none has arrived. Per sender, messages with one tag come in the order sent.
  // For message protocols whose sizes the receiver cannot know (the parameter server).
  struct Message {
    int src = -1;
    std::vector<std::byte> data;
  };
  virtual std::optional<Message> TryReceive(Tag tag) = 0;

  // Abandons a pending request and resets it. For a receive, the buffer is no longer written
  // once Cancel returns. For a send the transport may still read the buffer until the transport
  // is destroyed (MPI cannot retract a send): after a failed operation, keep such buffers alive
  // or end the job.
  virtual void Cancel(Request& req) = 0;

  // Idle waiting without lost wake-ups: read Epoch(), test the requests, and if none completed
  // call WaitForEvent(epoch, until). It returns as soon as anything may have changed since the
  // epoch was read (a message arrived, a send was taken, a peer failed) or at `until`; it may
  // also return early, so callers test again.
  virtual uint64_t Epoch() = 0;
  virtual void WaitForEvent(uint64_t epoch, Deadline until) = 0;
  // True if WaitForEvent sleeps until something happens; false if it returns at once (polling
  // transports), in which case callers may do their slower checks less often.
  virtual bool WaitSleeps() const = 0;

  // The tag of a message from `peer` that has arrived but not been received, if any. Used to
  // tell "the peer called something else" from "the peer is slow".
  virtual std::optional<Tag> ProbeUnexpected(int peer) = 0;

  // Tells every other rank, best effort and without blocking, that this rank failed.
  virtual void NotifyFailure(const std::string& message) = 0;
  // The first failure notice another rank sent, if one has arrived.
  virtual std::optional<std::string> PeerFailure() = 0;

  // One-sided memory: every rank registers a local region (sizes may differ) and may then put
  // to and get from the others' regions. Collective; waits for all ranks until `deadline`.
  virtual std::unique_ptr<MemoryRegion> RegisterMemory(void* base, size_t bytes, Deadline deadline) = 0;

  // A transport over the same ranks with a separate message space. Collective.
  virtual std::unique_ptr<Transport> Duplicate(Deadline deadline) = 0;
  // A transport over the ranks that pass the same `color` (>= 0), ranked in this transport's
  // order, with a message space of its own (MPI_Comm_split). Collective over every rank of this
  // transport; waits for them until `deadline`. Errors on the new transport name its ranks.
  virtual std::unique_ptr<Transport> Split(int color, Deadline deadline) = 0;
};

// Rethrows a transport's error (which names this rank and the peer) as the same kind of error
// with the operation `what` added: "rank R: WHAT: ...". For callers that test requests themselves.
[[noreturn]] void RethrowWithOperation(const Transport& t, const Error& e, std::string_view what);

// Waits for `req` until `deadline`. On timeout the request is cancelled and a TimeoutError names
// this rank, `what` (the operation) and the peer. A failure notice from another rank becomes an
// AbortedError.
void Wait(Transport& t, Request& req, Deadline deadline, std::string_view what);

// Every rank sends `bytes` bytes to every other and receives theirs: out[r * bytes ...] holds
// rank r's. O(size) messages per rank; for handshakes and small agreements, not bulk data.
void ExchangeWithAll(Transport& t, Tag tag, const void* mine, size_t bytes, void* out, Deadline deadline,
                     std::string_view what);

// The colors every rank passed to Split (index: rank), checked (InvalidArgumentError for a
// negative one). Exchanged on `tag`, a transport-reserved one.
std::vector<int> ExchangeColors(Transport& t, Tag tag, int color, Deadline deadline);

}  // namespace parasol::comm
