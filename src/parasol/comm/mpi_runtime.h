// MPI for this process: initialised once by the program's main and passed down explicitly.
// `parasol <cmd>` alone is a one-process job (MPI singleton init); under `mpirun -np N` it is one
// of N ranks.
#pragma once

#include <memory>

#include "parasol/comm/transport.h"

namespace parasol::comm {

class MpiRuntime {
 public:
  // Initialises MPI with MPI_THREAD_MULTIPLE. Throws UnavailableError if MPI is already
  // initialised in this process or cannot provide that thread level.
  MpiRuntime(int* argc, char*** argv);
  // Finalises MPI.
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // A transport over all ranks in a message space of its own. Collective.
  std::unique_ptr<Transport> CreateWorldTransport();
  // Ends every rank of the job with `code`; for errors after which ranks cannot agree to stop.
  [[noreturn]] void Abort(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace parasol::comm
