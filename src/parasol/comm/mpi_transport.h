// Transport over an MPI communicator: non-blocking MPI_Isend/MPI_Irecv of bytes, one-sided
// windows for memory regions, and a control channel for failure notices.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "parasol/comm/transport.h"
#include "parasol/core/mutex.h"

namespace parasol::comm {

class MpiTransport : public Transport {
 public:
  // Takes ownership of `comm` (freed on destruction) and sets MPI_ERRORS_RETURN on it.
  explicit MpiTransport(MPI_Comm comm);
  ~MpiTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view name() const override { return "mpi"; }

  Request Isend(int peer, Tag tag, const void* data, size_t bytes) override;
  Request Irecv(int peer, Tag tag, void* data, size_t bytes) override;
  bool Test(Request& req) override;
  void Cancel(Request& req) override;
  std::optional<Message> TryReceive(Tag tag) override;
  uint64_t Epoch() override { return 0; }
  void WaitForEvent(uint64_t epoch, Deadline until) override;
  bool WaitSleeps() const override { return false; }
  std::optional<Tag> ProbeUnexpected(int peer) override;
  void NotifyFailure(const std::string& message) override;
  std::optional<std::string> PeerFailure() override;
  std::unique_ptr<MemoryRegion> RegisterMemory(void* base, size_t bytes, Deadline deadline) override;
  std::unique_ptr<Transport> Duplicate(Deadline deadline) override;
  std::unique_ptr<Transport> Split(int color, Deadline deadline) override;

  MPI_Comm comm() const { return comm_; }

 private:
  void CheckPeer(int peer, std::string_view op) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;

  Mutex control_mu_;
  MPI_Request control_recv_ PARASOL_GUARDED_BY(control_mu_) = MPI_REQUEST_NULL;
  std::vector<char> control_buf_ PARASOL_GUARDED_BY(control_mu_);
  std::optional<std::string> failure_ PARASOL_GUARDED_BY(control_mu_);
  std::vector<MPI_Request> notices_ PARASOL_GUARDED_BY(control_mu_);
  std::string notice_text_ PARASOL_GUARDED_BY(control_mu_);
  // More ranks on this node than cores: a waiting rank must give its core to the peer it waits
  // for on every idle round, not now and then.
  bool oversubscribed_ = false;
};

}  // namespace parasol::comm
