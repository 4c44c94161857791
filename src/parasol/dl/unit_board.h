// The handshake between GradSync's training thread and its communication thread, kept free of
// libtorch so that clang's thread-safety analysis checks it (clang cannot compile libtorch 1.13's
// headers as C++20; see docs/reliability.md).
//
// A step: the training thread calls BeginStep, then Launch for each unit whose gradient is ready
// (in any order); the communication thread takes the step (TakeStep), takes launches in an order
// every rank agrees on (TakeLaunch) and marks units done; the training thread waits for the units
// it needs (WaitDone). P3's priority order also needs the lowest stage from which every stage is
// launched (the frontier). Any method may be called from either thread unless it says otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <vector>

#include "parasol/core/mutex.h"

namespace parasol::dl {

class UnitBoard {
 public:
  // unit_stage[u]: the stage unit u belongs to, in [0, num_stages). Every unit starts done.
  UnitBoard(std::vector<int> unit_stage, int num_stages);

  // ---- the training thread ----
  // Starts a step: every unit pending, none launched. The previous step's units must be done.
  void BeginStep() PARASOL_EXCLUDES(mu_);
  // Unit u's gradient is ready: the communication thread may take it.
  void Launch(int u) PARASOL_EXCLUDES(mu_);
  // Waits until units [first, end) are done: true; false once `deadline` passes. Rethrows the
  // communication thread's error (Fail) if there is one.
  bool WaitDone(int first, int end, std::chrono::steady_clock::time_point deadline) PARASOL_EXCLUDES(mu_);
  // Ends every wait of the communication thread (which then returns false from it).
  void Stop() PARASOL_EXCLUDES(mu_);
  bool failed() const PARASOL_EXCLUDES(mu_);

  // ---- the communication thread ----
  // Waits for a step begun and not yet taken: true; false when stopping.
  bool TakeStep() PARASOL_EXCLUDES(mu_);
  // Waits for unit u's launch and takes it: true; false when stopping.
  bool TakeLaunch(int u) PARASOL_EXCLUDES(mu_);
  void MarkDone(int u) PARASOL_EXCLUDES(mu_);
  // Waits until this rank's frontier is below `frontier` (a stage under it was launched): true;
  // false when stopping.
  bool WaitFrontierBelow(int frontier) PARASOL_EXCLUDES(mu_);
  // The communication thread failed: its error goes to every waiting training thread.
  void Fail(std::exception_ptr error) PARASOL_EXCLUDES(mu_);

  // The lowest stage from which every stage's units are launched (num_stages: none launched).
  int local_frontier() const PARASOL_EXCLUDES(mu_);
  uint64_t units_done() const PARASOL_EXCLUDES(mu_);

 private:
  void LowerFrontier() PARASOL_REQUIRES(mu_);

  const std::vector<int> unit_stage_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<bool> launched_ PARASOL_GUARDED_BY(mu_);
  std::vector<bool> done_ PARASOL_GUARDED_BY(mu_);
  std::vector<int> stage_left_ PARASOL_GUARDED_BY(mu_);  // per stage: units not launched yet
  int local_frontier_ PARASOL_GUARDED_BY(mu_);
  uint64_t steps_begun_ PARASOL_GUARDED_BY(mu_) = 0;
  uint64_t steps_taken_ PARASOL_GUARDED_BY(mu_) = 0;
  uint64_t units_done_ PARASOL_GUARDED_BY(mu_) = 0;
  bool stop_ PARASOL_GUARDED_BY(mu_) = false;
  std::exception_ptr error_ PARASOL_GUARDED_BY(mu_);
};

}  // namespace parasol::dl
