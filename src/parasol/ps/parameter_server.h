// The parameter server of one process: a server shard (the rows the partitioner gives this rank),
// the client the process's workers share, and the communication thread that serves both over a
// duplicate of the job's context.
//
// Usage (every process):
//   ParameterServer ps(ctx, {.workers_per_process = 4});
//   ps.CreateTable({.id = 1, .kind = RowKind::kDense, .dtype = DType::kFloat32, .width = 16,
//                   .consistency = Consistency::kSsp, .staleness = 3});
//   // on each worker thread i:
//   auto worker = ps.CreateWorker(i);
//   auto t = worker->GetTable<float>(1);
//   t.Inc(row, col, 0.5f); auto v = t.Get(row); float x = v[col]; worker->Clock();
//   // after the workers are done:
//   ps.Shutdown();
//
// Threading: CreateTable, CreateWorker and Shutdown from one thread per process; each Worker
// from its own thread. Every blocking call has the deadline options.timeout_ms.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/core/file_system.h"
#include "parasol/core/mutex.h"
#include "parasol/core/service_thread.h"
#include "parasol/ps/client.h"
#include "parasol/ps/row_window.h"
#include "parasol/ps/server_shard.h"
#include "parasol/ps/table_config.h"
#include "parasol/ps/worker.h"

namespace parasol::ps {

struct PsOptions {
  int workers_per_process = 1;
  std::chrono::milliseconds timeout_ms{60000};
  // Where checkpoints are written (tests inject faults here); null: the context's (Context::files;
  // the context outlives the server).
  FileSystem* file_system = nullptr;
  // Over MPI, how long the communication thread sleeps between polls once idle: 0 adapts (20 us
  // for a while after traffic, then 200 us). Each poll costs the workers' cores time: a job whose
  // traffic comes once per long step (a GNN's epoch) sets a longer one.
  std::chrono::microseconds idle_sleep{0};
  // Over MPI, while a worker of this process waits for a shard's answer, poll without sleeping
  // (yielding the core; for at most kWaitSpinPolls polls in a row): each message of a round trip
  // then leaves and is taken in at once instead of after a sleep, which with Linux's timer slack
  // is 50-70 us. The waiting worker's core is idle, so this costs nothing where each process has
  // its cores; where ranks share cores it takes time from the others. For jobs of many short
  // rounds under BSP (MTRL).
  bool spin_while_waiting = false;
};

class ParameterServer {
 public:
  // Collective: every process of ctx constructs one. Starts the communication thread.
  ParameterServer(comm::Context& ctx, PsOptions options);
  // Shuts down if Shutdown was not called (errors ignored: the job is ending anyway); aborts
  // instead when an exception is unwinding the stack.
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // Collective: every process creates the same tables in the same order. Throws
  // InvalidArgumentError for a bad or duplicate configuration, MismatchError if ranks disagree.
  void CreateTable(const TableConfig& config);
  // The handle for worker `index` (0 .. workers_per_process-1) of this process.
  std::unique_ptr<Worker> CreateWorker(int index);
  // Collective, after this process's workers are done: waits until every process is, then stops.
  void Shutdown();

  // Gives up: tells every other process (their waiting calls fail with AbortedError naming this
  // rank and `why`), fails this process's waiting calls and stops. Also done by the destructor
  // when it runs during stack unwinding. Any thread (a failing worker's), but not while another
  // thread is in Shutdown.
  void Abort(const std::string& why);

  int rank() const { return rank_; }
  int size() const { return size_; }
  const PsOptions& options() const { return options_; }
  Deadline DefaultDeadline() const { return Deadline::After(options_.timeout_ms); }
  PsStats stats() const {
    PsStats s = client_->stats();
    s.bytes_out = bytes_out_.load(std::memory_order_relaxed);
    s.reply_bytes_out = reply_bytes_out_.load(std::memory_order_relaxed);
    s.reply_bytes_in = reply_bytes_in_.load(std::memory_order_relaxed);
    return s;
  }
  // For monitoring and evaluation, from any thread: the values the shards hold now, outside any
  // consistency model (no clock is waited for, the cache is neither used nor changed). Throws
  // InvalidArgumentError for a missing table or row, TimeoutError naming a silent shard.
  std::vector<Row> ReadLatest(uint32_t table, std::span<const uint64_t> rows);
  // This rank's shard's copy of a row (nullopt if never touched), and its clock: for tests.
  std::optional<Row> ShardRow(uint32_t table, uint64_t row);
  uint64_t ShardClock();

  // For Worker.
  Client& client() { return *client_; }
  void Barrier(int worker);
  // Every local worker calls; worker 0 runs fn, the others wait; fn's error reaches all of them.
  void OnePerProcess(int worker, const std::function<void()>& fn);

 private:
  // Collective: throws MismatchError unless every rank made the same table (read path included).
  void CheckSameTable(const TableConfig& config);
  void Send(int dst, std::vector<std::byte> bytes);
  void Loop(std::stop_token stop);
  bool Poll(std::vector<std::pair<comm::Request, std::vector<std::byte>>>& inflight);
  void Dispatch(comm::Transport::Message& m);
  // Sleeps or yields before the next poll; `idle_rounds` and `spin_rounds` count polls since
  // the last traffic (the communication thread's own).
  void Idle(uint64_t epoch, int& idle_rounds, int& spin_rounds);

  const int rank_;
  const int size_;
  PsOptions options_;
  FileSystem& fs_;                              // options_.file_system, or the context's
  std::unique_ptr<comm::Context> messages_;     // the communication thread's
  std::unique_ptr<comm::Context> collectives_;  // barriers and table creation
  // One-sided tables' rows in registered memory; the shard writes them, the client reads them.
  std::vector<std::unique_ptr<RowWindow>> windows_;
  std::unique_ptr<Client> client_;
  Mutex shard_mu_;
  ServerShard shard_ PARASOL_GUARDED_BY(shard_mu_);

  Mutex out_mu_;
  std::deque<std::pair<int, std::vector<std::byte>>> outbox_ PARASOL_GUARDED_BY(out_mu_);
  // Written by the communication thread (PsStats says what each counts).
  std::atomic<uint64_t> bytes_out_{0}, reply_bytes_out_{0}, reply_bytes_in_{0};
  ServiceThread thread_;  // the communication thread
  // Set by Shutdown or Abort, which may run on different threads (a worker's, the destructor's).
  std::atomic<bool> shut_down_{false};

  // Local barrier among this process's workers. Not held while the last arrival runs the phase
  // (a network barrier that may wait out the deadline): Abort must get it at once.
  Mutex barrier_mu_;
  CondVar barrier_cv_;
  int arrived_ PARASOL_GUARDED_BY(barrier_mu_) = 0;
  uint64_t generation_ PARASOL_GUARDED_BY(barrier_mu_) = 0;
  std::optional<std::pair<ErrorCode, std::string>> phase_error_ PARASOL_GUARDED_BY(barrier_mu_);
  std::optional<std::string> aborted_ PARASOL_GUARDED_BY(barrier_mu_);
};

}  // namespace parasol::ps
