// MPI for this process: initialised once by the program's main and passed down explicitly.
// `parasol <cmd>` alone is a one-process job (one rank, without MPI unless the command calls MPI
// itself); under `mpirun -np N` it is one of N ranks.
#pragma once

#include <memory>

#include "parasol/comm/transport.h"

namespace parasol::comm {

// Whether MPI is started when no launcher (mpirun, srun) started this process.
enum class MpiStart {
  kAlways,         // a singleton job: MPI_Init forks OpenMPI's orted, about 0.3 s
  kUnderLauncher,  // alone, no MPI at all: one rank over an in-process transport
};

class MpiRuntime {
 public:
  // Initialises MPI with MPI_THREAD_MULTIPLE (with kUnderLauncher, only when a launcher started
  // this process). Throws UnavailableError if MPI is already initialised in this process or cannot
  // provide that thread level.
  MpiRuntime(int* argc, char*** argv, MpiStart start = MpiStart::kAlways);
  // Finalises MPI.
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether MPI is initialised: false for a process alone under kUnderLauncher.
  bool started() const { return started_; }

  // A transport over all ranks in a message space of its own. Collective.
  std::unique_ptr<Transport> CreateWorldTransport();
  // Ends every rank of the job with `code`; for errors after which ranks cannot agree to stop.
  [[noreturn]] void Abort(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool started_ = false;
};

// The rank a launcher (mpirun, srun) gave this process, as its environment names it (OpenMPI's,
// PMIx's or PMI's variable), or nullptr when no launcher started it.
const char* LauncherRank();
// Whether a launcher started this process as a rank of a job.
inline bool StartedByLauncher() { return LauncherRank() != nullptr; }

}  // namespace parasol::comm
