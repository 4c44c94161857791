#include "parasol/ps/parameter_server.h"

#include <sched.h>

#include <thread>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/ps/protocol.h"

namespace parasol::ps {

namespace {

bool ForShard(MsgType t) {
  return t == MsgType::kUpdate || t == MsgType::kClock || t == MsgType::kGet || t == MsgType::kCheckpoint ||
         t == MsgType::kRestore || t == MsgType::kSync || t == MsgType::kRead;
}

}  // namespace

ParameterServer::ParameterServer(comm::Context& ctx, PsOptions options)
    : rank_(ctx.rank()),
      size_(ctx.size()),
      options_(options),
      fs_(options.file_system != nullptr ? *options.file_system : ctx.env().files()),
      shard_(ctx.rank(), ctx.size(), fs_) {
  if (options_.workers_per_process < 1) {
    throw InvalidArgumentError(
        fmt::format("rank {}: parameter server: workers_per_process must be at least 1", rank_));
  }
  Deadline deadline = Deadline::After(options_.timeout_ms);
  messages_ = ctx.Duplicate(deadline);
  collectives_ = ctx.Duplicate(deadline);
  client_ = std::make_unique<Client>(
      rank_, size_, options_.workers_per_process, fs_,
      [this](int dst, std::vector<std::byte> bytes) { Send(dst, std::move(bytes)); },
      // Lock order: the client's lock, then the shard's (the shard never calls the client).
      [this](uint64_t need) {
        MutexLock lock(shard_mu_);
        return shard_.Behind(need);
      });
  thread_.Start([this](std::stop_token stop) { Loop(stop); },
                [this](std::exception_ptr error) {
                  // Loop handles the protocol's failures itself; this is whatever escaped it.
                  try {
                    std::rethrow_exception(error);
                  } catch (const std::exception& e) {
                    client_->Fail(
                        ErrorCode::kInternal,
                        fmt::format("rank {}: parameter server: internal error: {}", rank_, e.what()));
                  }
                });
}

ParameterServer::~ParameterServer() {
  if (!shut_down_ && std::uncaught_exceptions() > 0) {
    // This process is failing: tell the others at once rather than let them wait for it.
    Abort(fmt::format("rank {} failed and left the parameter server", rank_));
  }
  try {
    Shutdown();
  } catch (...) {
    // The job is failing already; make sure the thread stops.
    thread_.Stop();
  }
}

void ParameterServer::CreateTable(const TableConfig& config) {
  config.Validate();
  if (config.one_update_per_clock && options_.workers_per_process != 1) {
    throw InvalidArgumentError(
        fmt::format("rank {}: table {}: one_update_per_clock needs one worker per process, not {}", rank_,
                    config.id, options_.workers_per_process));
  }
  if (client_->Config(config.id)) {
    throw InvalidArgumentError(fmt::format("rank {}: table {} already exists", rank_, config.id));
  }
  RowWindow* window = nullptr;
  if (config.one_sided_reads) {
    // Agree first: registering the memory is collective and would wait on a rank that disagrees.
    CheckSameTable(config);
    windows_.push_back(std::make_unique<RowWindow>(collectives_->transport(), config, DefaultDeadline()));
    window = windows_.back().get();
    MutexLock lock(shard_mu_);
    window->PublishClock(shard_.min_clock());
  }
  {
    MutexLock lock(shard_mu_);
    shard_.AddTable(config, window);
  }
  client_->AddTable(config, window);
  // Every rank must have made the same table before anyone uses it: the exchange is also a barrier.
  CheckSameTable(config);
}

void ParameterServer::CheckSameTable(const TableConfig& config) {
  // The read path is not part of the model (checkpoints ignore it) but the ranks must agree on it.
  uint64_t mine = config.Fingerprint() ^ (config.one_sided_reads ? 0x6f6e6573696465 : 0);
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  collective::AllgatherOptions o;
  o.timeout_ms = options_.timeout_ms;
  collective::Allgather(*collectives_, &mine, all.data(), 1, DType::kInt64, o);
  for (int r = 0; r < size_; ++r) {
    if (all[static_cast<size_t>(r)] != mine) {
      throw MismatchError(
          fmt::format("rank {}: create {}: rank {} created table {} with another configuration", rank_,
                      config.Describe(), r, config.id));
    }
  }
}

std::unique_ptr<Worker> ParameterServer::CreateWorker(int index) {
  if (index < 0 || index >= options_.workers_per_process) {
    throw InvalidArgumentError(fmt::format("rank {}: worker index {} outside 0..{}", rank_, index,
                                           options_.workers_per_process - 1));
  }
  return std::make_unique<Worker>(this, index);
}

std::vector<Row> ParameterServer::ReadLatest(uint32_t table, std::span<const uint64_t> rows) {
  return client_->ReadLatest(table, rows, DefaultDeadline());
}

std::optional<Row> ParameterServer::ShardRow(uint32_t table, uint64_t row) {
  MutexLock lock(shard_mu_);
  const Row* r = shard_.Peek(table, row);
  return r ? std::optional<Row>(*r) : std::nullopt;
}

uint64_t ParameterServer::ShardClock() {
  MutexLock lock(shard_mu_);
  return shard_.min_clock();
}

void ParameterServer::Send(int dst, std::vector<std::byte> bytes) {
  MutexLock lock(out_mu_);
  outbox_.emplace_back(dst, std::move(bytes));
}

void ParameterServer::Dispatch(comm::Transport::Message& m) {
  if (m.data.empty()) return;
  WireReader r(m.data.data(), m.data.size(), m.src);
  if (m.src != rank_ && static_cast<MsgType>(m.data[0]) == MsgType::kRows) {
    reply_bytes_in_.fetch_add(m.data.size(), std::memory_order_relaxed);
  }
  if (ForShard(static_cast<MsgType>(m.data[0]))) {
    Outbox out;
    {
      MutexLock lock(shard_mu_);
      shard_.Handle(m.src, r, out);
    }
    for (auto& [dst, bytes] : out) Send(dst, std::move(bytes));
    return;
  }
  try {
    client_->OnMessage(m.src, r);
  } catch (const MalformedMessage& e) {
    client_->Fail(ErrorCode::kInternal, fmt::format("rank {}: parameter server: {}", rank_, e.what()));
  }
}

bool ParameterServer::Poll(std::vector<std::pair<comm::Request, std::vector<std::byte>>>& inflight) {
  comm::Transport& t = messages_->transport();
  bool busy = false;
  std::deque<std::pair<int, std::vector<std::byte>>> out;
  {
    MutexLock lock(out_mu_);
    out.swap(outbox_);
  }
  for (auto& [dst, bytes] : out) {
    if (dst != rank_) {
      bytes_out_.fetch_add(bytes.size(), std::memory_order_relaxed);
      if (static_cast<MsgType>(bytes[0]) == MsgType::kRows)
        reply_bytes_out_.fetch_add(bytes.size(), std::memory_order_relaxed);
    }
    comm::Request req = t.Isend(dst, kPsTag, bytes.data(), bytes.size());
    inflight.emplace_back(std::move(req), std::move(bytes));  // the vector's buffer does not move
    busy = true;
  }
  for (size_t i = 0; i < inflight.size();) {
    if (t.Test(inflight[i].first)) {
      inflight[i] = std::move(inflight.back());
      inflight.pop_back();
    } else {
      ++i;
    }
  }
  // A peer streaming messages in must not keep this rank's own from leaving: back to sending as
  // soon as there is something to send (a reply, or a worker's batch).
  for (int n = 0; n < 256; ++n) {
    auto m = t.TryReceive(kPsTag);
    if (!m) break;
    Dispatch(*m);
    busy = true;
    MutexLock lock(out_mu_);
    if (!outbox_.empty()) break;
  }
  return busy;
}

void ParameterServer::Idle(uint64_t epoch, int& idle_rounds, int& spin_rounds) {
  comm::Transport& t = messages_->transport();
  // A rank that failed said so: waiting workers get its reason instead of a timeout later.
  if (auto notice = t.PeerFailure())
    client_->Fail(ErrorCode::kAborted, fmt::format("rank {}: parameter server: {}", rank_, *notice));
  if (t.WaitSleeps()) {
    t.WaitForEvent(epoch, Deadline::After(std::chrono::microseconds(200)));
    return;
  }
  // MPI cannot block with a timeout: spin briefly, then sleep in short steps so a waiting process
  // leaves its cores to the workers.
  constexpr int kWaitSpinPolls = 20000;  // a few milliseconds
  if (options_.spin_while_waiting && client_->HasWaiters() && ++spin_rounds < kWaitSpinPolls) {
    sched_yield();
    return;
  }
  if (++idle_rounds < 16) {
    sched_yield();
  } else if (options_.idle_sleep.count() > 0) {
    messages_->env().clock().SleepFor(options_.idle_sleep);
  } else {
    messages_->env().clock().SleepFor(std::chrono::microseconds(idle_rounds < 2000 ? 20 : 200));
  }
}

void ParameterServer::Loop(std::stop_token stop) {
  std::vector<std::pair<comm::Request, std::vector<std::byte>>> inflight;
  comm::Transport& t = messages_->transport();
  int idle_rounds = 0, spin_rounds = 0;
  while (true) {
    uint64_t epoch = t.Epoch();
    bool busy = false;
    try {
      busy = Poll(inflight);
    } catch (const Error& e) {
      client_->Fail(e.code(), fmt::format("rank {}: parameter server: {}", rank_, e.what()));
      break;
    } catch (const std::exception& e) {
      // A bug or an exhausted resource, not a failure the protocol knows: this process's workers
      // and every peer hear of it now instead of the process ending in std::terminate.
      const std::string why = fmt::format("rank {}: parameter server: internal error: {}", rank_, e.what());
      client_->Fail(ErrorCode::kInternal, why);
      messages_->transport().NotifyFailure(why);
      collectives_->transport().NotifyFailure(why);
      break;
    }
    if (busy) {
      idle_rounds = spin_rounds = 0;
      continue;
    }
    if (stop.stop_requested()) {
      MutexLock lock(out_mu_);
      if (outbox_.empty()) break;
      continue;
    }
    Idle(epoch, idle_rounds, spin_rounds);
  }
  // A send's buffer must outlive the send: a peer may still be reading it (MPI's rendezvous reads
  // large messages straight from this buffer), and freeing it under that read handed the peer
  // garbage ("unexpected message type") when this process stopped on an error of its own. So the
  // sends still in flight get a short while to complete; what a live peer receives meanwhile is
  // intact, and a peer that has stopped listening costs this process the bound once.
  const Deadline drain = Deadline::After(std::chrono::milliseconds(500));
  while (!inflight.empty() && !drain.Expired()) {
    const uint64_t epoch = t.Epoch();
    std::erase_if(inflight, [&t](auto& f) { return t.Test(f.first); });
    if (!inflight.empty()) t.WaitForEvent(epoch, drain);
  }
  for (auto& f : inflight) t.Cancel(f.first);  // peers that have stopped listening
}

void ParameterServer::Shutdown() {
  if (shut_down_.exchange(true)) return;
  // Hand what is queued to the transport, then wait for every process before going quiet.
  Deadline deadline = DefaultDeadline();
  while (true) {
    {
      MutexLock lock(out_mu_);
      if (outbox_.empty()) break;
    }
    if (deadline.Expired()) break;
    messages_->env().clock().SleepFor(std::chrono::microseconds(100));
  }
  std::exception_ptr error;
  try {
    collective::Barrier(*collectives_, options_.timeout_ms);
  } catch (...) {
    error = std::current_exception();
  }
  thread_.Stop();
  if (error) std::rethrow_exception(error);
  // Every process is past its reads (the barrier): the one-sided tables' memory may go.
  for (auto& w : windows_) w->Close(deadline);
}

void ParameterServer::Abort(const std::string& why) {
  {
    MutexLock lock(barrier_mu_);
    if (aborted_) return;
    aborted_ = why;
    barrier_cv_.NotifyAll();
  }
  messages_->transport().NotifyFailure(why);
  collectives_->transport().NotifyFailure(why);
  client_->Fail(ErrorCode::kAborted, why);
  shut_down_ = true;
  thread_.Stop();
}

void ParameterServer::OnePerProcess(int worker, const std::function<void()>& fn) {
  (void)worker;
  MutexLock lock(barrier_mu_);
  if (aborted_) throw AbortedError(*aborted_);
  uint64_t generation = generation_;
  if (++arrived_ == options_.workers_per_process) {
    phase_error_.reset();  // waiters of the last phase have read theirs: this phase needed them
    // Every local worker is here, so none can enter the next phase until generation_ moves.
    lock.Unlock();
    std::optional<std::pair<ErrorCode, std::string>> error;
    try {
      fn();
    } catch (const Error& e) {
      error = {e.code(), e.what()};
    } catch (const std::exception& e) {
      error = {ErrorCode::kInternal, e.what()};
    }
    lock.Lock();
    phase_error_ = std::move(error);
    arrived_ = 0;
    ++generation_;
    barrier_cv_.NotifyAll();
  } else {
    Deadline deadline = DefaultDeadline();
    while (generation_ == generation && !aborted_ && barrier_cv_.WaitUntil(barrier_mu_, deadline.time())) {
    }
    if (generation_ == generation && !aborted_) {
      throw TimeoutError(
          fmt::format("rank {}: worker {}: only {} of {} local workers reached the barrier by the deadline",
                      rank_, worker, arrived_, options_.workers_per_process));
    }
  }
  if (aborted_) throw AbortedError(*aborted_);
  if (phase_error_) ThrowError(phase_error_->first, phase_error_->second);
}

void ParameterServer::Barrier(int worker) {
  OnePerProcess(worker, [&] {
    Deadline deadline = DefaultDeadline();
    client_->Sync(deadline);  // this process's updates are at their shards
    collective::Barrier(*collectives_, options_.timeout_ms);
    // Everyone's are. Rows cached or in flight from before may predate some of them: sync again
    // so those have arrived, then forget them.
    client_->Sync(deadline);
    client_->DropCache();
  });
}

}  // namespace parasol::ps
