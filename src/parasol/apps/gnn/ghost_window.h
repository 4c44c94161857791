// Ghost rows read one-sided (the RDMA tensor-transfer idea, remote memory as a device): every rank
// packs the rows its peers hold as ghosts into a registered region (comm::MemoryRegion) and each
// reader gets its block from each owner with one read, instead of the owner sending it.
//
// Readiness, per refresh: an owner packs its rows only once every reader has said it is done with
// the previous refresh's, then tells each reader they are ready; a reader reads an owner's block
// only after that owner's ready, and says done after its reads complete. So a read never sees a
// half-packed block, and a block never changes under a read. The notices are empty messages on a
// context of the window's own.
//
// The region grows (collectively) when a refresh is wider than any before; every rank makes the
// same refreshes in the same order, as GhostExchange requires. Threading: one thread per rank.
// Errors: TimeoutError (a notice or a read passes the context's deadline), PeerGoneError or
// AbortedError, naming the peer and "gnn ghost rows (one-sided)".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/comm/context.h"
#include "parasol/comm/memory_region.h"

namespace parasol::apps::gnn {

class GhostWindow {
 public:
  // Collective: duplicates `ctx` and agrees where each reader's rows start in each owner's block.
  GhostWindow(comm::Context& ctx, const GraphShard& s);
  // Without Close (after an error): waits for the readers of the last refresh until the context's
  // deadline, then abandons the region.
  ~GhostWindow();
  GhostWindow(const GhostWindow&) = delete;
  GhostWindow& operator=(const GhostWindow&) = delete;

  // Fills rows [owned, owned + ghosts) of `m` (local_rows x width) with the owners' rows. Returns
  // the bytes of this rank's rows that its readers took.
  uint64_t Refresh(const GraphShard& s, size_t width, std::span<float> m);
  // Collective: waits for the readers of the last refresh and frees the region.
  void Close();

 private:
  void AwaitReaders();
  void Grow(const GraphShard& s, size_t width);

  std::unique_ptr<comm::Context> ctx_;
  std::vector<uint64_t> offset_at_owner_;  // rows before this rank's block in each owner's
  std::vector<int> readers_;               // peers holding some of this rank's rows as ghosts
  std::vector<float> packed_;              // the registered block: send_rows x width
  size_t width_ = 0;                       // the widest refresh the region holds
  std::unique_ptr<comm::MemoryRegion> region_;
  bool readers_pending_ = false;        // the last refresh's readers have not all said done
  std::vector<comm::Request> notices_;  // this rank's ready and done sends of the last refresh
  char token_ = 0;                      // the notices' (empty) buffer
};

}  // namespace parasol::apps::gnn
