// The Python extension's hold on MPI: one World per process, made by parasol.init() (the Python
// package keeps it; nothing here is process-global). Everything that talks (collectives, the
// gradient synchroniser, parameter-server tables) holds a shared_ptr to it, so MPI outlives them;
// Close() finalises MPI once they are gone, and every call after it fails with a clear error.
//
// A communication failure (a deadline passed, a peer gone, ranks that disagree, an abort) leaves
// the job unable to finalise MPI, which waits for every rank: every call that talks runs through
// Guard, which marks the world failed, and Close() then aborts the job (mpirun ends every rank)
// instead of finalising. The caller has the exception first; the process ends when it exits.
//
// Threading: collectives on the world context from one Python thread at a time (the GIL is
// released while they wait, so they must not be interleaved from several threads). MarkFailed
// and failed() from any thread (the c10d backend's worker).
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "parasol/comm/context.h"
#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"

namespace parasol::bindings {

class World {
 public:
  explicit World(std::chrono::milliseconds timeout_ms);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // The world context; throws UnavailableError after Close().
  comm::Context& ctx();
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  std::chrono::milliseconds timeout_ms() const { return timeout_ms_; }
  // parasol.init(timeout_ms) on a world that already runs: the default deadline from now on.
  void set_timeout_ms(std::chrono::milliseconds timeout);
  // Finalises MPI, or aborts the job after a communication failure (then it does not return).
  void Close();
  bool closed() const { return !ctx_; }
  void MarkFailed() { failed_ = true; }
  bool failed() const { return failed_; }

  // Runs f(); a communication failure it throws marks the world failed on its way out.
  template <typename F>
  auto Guard(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      if (IsCommunicationFailure(e)) MarkFailed();
      throw;
    }
  }
  static bool IsCommunicationFailure(const Error& e);

 private:
  std::unique_ptr<comm::MpiRuntime> runtime_;
  std::unique_ptr<comm::Context> ctx_;
  std::chrono::milliseconds timeout_ms_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::atomic<bool> failed_{false};
};

void RegisterComm(pybind11::module_& m);
void RegisterSync(pybind11::module_& m);
void RegisterPs(pybind11::module_& m);

}  // namespace parasol::bindings
