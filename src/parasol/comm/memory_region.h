// One-sided access to memory other ranks registered: the remote machine seen as a device with a
// memory interface (write and read regions at offsets) instead of a peer to talk to.
//
// Completion: a put's or get's request completes locally (the source may be reused, or the
// fetched data is in place). Flush() makes every earlier put visible at its target; tell the
// target with a message after that.
#pragma once

#include <cstddef>
#include <vector>

#include "parasol/comm/transport.h"

namespace parasol::comm {

class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;

  void* local_base() const { return base_; }
  size_t local_bytes() const { return bytes_; }
  // Size of the region `peer` registered.
  size_t remote_bytes(int peer) const { return sizes_.at(static_cast<size_t>(peer)); }

  // Writes `bytes` bytes from `src` at `offset` in `peer`'s region. Throws InvalidArgumentError
  // if the range lies outside it. REQUIRES: src stays valid until the request completes.
  virtual Request Put(int peer, size_t offset, const void* src, size_t bytes) = 0;
  // Reads `bytes` bytes at `offset` of `peer`'s region into `dst`.
  virtual Request Get(int peer, size_t offset, void* dst, size_t bytes) = 0;
  // The same, without a request: the data is in place once the next Flush returns. For reads that
  // are flushed anyway, and from threads other than the one that created the region: OpenMPI
  // 4.1's osc ucx completes a request-based get from another thread only when that thread's UCX
  // worker is progressed, which MPI_Test after the flush does not always do (a read of the
  // parameter server hung so over TCP).
  virtual void GetFlushed(int peer, size_t offset, void* dst, size_t bytes) = 0;
  virtual bool Test(Request& req) = 0;
  // Blocks until every put and get this rank started has completed at its target.
  virtual void Flush(Deadline deadline) = 0;
  // Collective: ends the exposure epoch and frees the region on all ranks. A region destroyed
  // without Close (after an error) is abandoned, not freed, so a failed job cannot hang here.
  virtual void Close(Deadline deadline) = 0;

  // Throws InvalidArgumentError unless [offset, offset + bytes) lies in `peer`'s region.
  void CheckRange(std::string_view op, int rank, int peer, size_t offset, size_t bytes) const;

 protected:
  MemoryRegion(void* base, size_t bytes, std::vector<size_t> sizes)
      : base_(base), bytes_(bytes), sizes_(std::move(sizes)) {}

 private:
  void* base_;
  size_t bytes_;
  std::vector<size_t> sizes_;
};

}  // namespace parasol::comm
