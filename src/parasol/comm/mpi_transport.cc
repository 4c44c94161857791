#include "parasol/comm/mpi_transport.h"

#include <sched.h>
#include <stdlib.h>

#include <climits>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/memory_region.h"
#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"

namespace parasol::comm {
namespace {

// Tags above kMaxUserTag belong to the transport.
constexpr Tag kControlTag = kMaxUserTag + 1;    // failure notices
constexpr Tag kHandshakeTag = kMaxUserTag + 2;  // registration and duplication handshakes
constexpr size_t kMaxNoticeBytes = 4096;

static_assert(sizeof(MPI_Request) <= sizeof(uintptr_t), "MPI_Request must fit a Request handle");

uintptr_t ToHandle(MPI_Request r) {
  uintptr_t h = 0;
  std::memcpy(&h, &r, sizeof(r));
  return h;
}

MPI_Request FromHandle(uintptr_t h) {
  MPI_Request r;
  std::memcpy(&r, &h, sizeof(r));
  return r;
}

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

int ErrorClass(int code) {
  int cls = code;
  MPI_Error_class(code, &cls);
  return cls;
}

int CheckedInt(size_t bytes, int rank, std::string_view op) {
  if (bytes > static_cast<size_t>(INT_MAX)) {
    throw InvalidArgumentError(fmt::format("rank {}: {}: {} bytes in one message exceeds MPI's limit of {}",
                                           rank, op, bytes, INT_MAX));
  }
  return static_cast<int>(bytes);
}

// A transport can outlive MPI: Python frees a torch.distributed process group when the
// interpreter tears down, after parasol's atexit handler finalised MPI (PyTorch 2.11 does, even after
// destroy_process_group). MPI then allows no call but a few queries, and its requests and
// communicators are gone with it.
bool MpiFinalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

void CheckMpi(int rc, int rank, std::string_view op) {
  if (rc != MPI_SUCCESS) {
    throw InternalError(fmt::format("rank {}: {}: MPI error: {}", rank, op, MpiErrorString(rc)));
  }
}

class MpiMemoryRegion : public MemoryRegion {
 public:
  MpiMemoryRegion(MpiTransport& t, MPI_Win win, void* base, size_t bytes, std::vector<size_t> sizes)
      : MemoryRegion(base, bytes, std::move(sizes)), t_(t), win_(win) {}

  ~MpiMemoryRegion() override = default;  // an unclosed window is abandoned (see Close)

  Request Put(int peer, size_t offset, const void* src, size_t bytes) override {
    const int n = CheckedCount("put", peer, offset, bytes);
    MPI_Request r;
    CheckMpi(MPI_Rput(src, n, MPI_BYTE, peer, static_cast<MPI_Aint>(offset), n, MPI_BYTE, win_, &r),
             t_.rank(), "put");
    return Request{Request::Kind::kPut, peer, 0, bytes, ToHandle(r), nullptr};
  }

  Request Get(int peer, size_t offset, void* dst, size_t bytes) override {
    const int n = CheckedCount("get", peer, offset, bytes);
    MPI_Request r;
    CheckMpi(MPI_Rget(dst, n, MPI_BYTE, peer, static_cast<MPI_Aint>(offset), n, MPI_BYTE, win_, &r),
             t_.rank(), "get");
    return Request{Request::Kind::kGet, peer, 0, bytes, ToHandle(r), nullptr};
  }

  void GetFlushed(int peer, size_t offset, void* dst, size_t bytes) override {
    const int n = CheckedCount("get", peer, offset, bytes);
    CheckMpi(MPI_Get(dst, n, MPI_BYTE, peer, static_cast<MPI_Aint>(offset), n, MPI_BYTE, win_), t_.rank(),
             "get");
  }

  bool Test(Request& req) override {
    MPI_Request r = FromHandle(req.handle);
    int flag = 0;
    CheckMpi(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), t_.rank(), RequestKindName(req.kind));
    req.handle = ToHandle(r);
    if (flag) req.Reset();
    return flag != 0;
  }

  // MPI offers no flush with a timeout; passive-target completion needs no action from the
  // target, so this returns without the peer's help.
  void Flush(Deadline) override { CheckMpi(MPI_Win_flush_all(win_), t_.rank(), "flush"); }

  void Close(Deadline deadline) override {
    if (win_ == MPI_WIN_NULL) return;
    char token = 0;
    std::vector<char> all(static_cast<size_t>(t_.size()));
    // Everyone must have stopped accessing before any window memory goes away.
    CheckMpi(MPI_Win_flush_all(win_), t_.rank(), "close memory region");
    ExchangeWithAll(t_, kHandshakeTag, &token, 1, all.data(), deadline, "close memory region");
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    win_ = MPI_WIN_NULL;
  }

 private:
  // The count MPI takes for `bytes`, once the range is checked against the peer's region.
  int CheckedCount(std::string_view op, int peer, size_t offset, size_t bytes) const {
    CheckRange(op, t_.rank(), peer, offset, bytes);
    return CheckedInt(bytes, t_.rank(), op);
  }

  MpiTransport& t_;
  MPI_Win win_;
};

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm), control_buf_(kMaxNoticeBytes) {
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* tag_ub = nullptr;
  int flag = 0;
  // The bound is the job's: MPI guarantees the attribute on MPI_COMM_WORLD only (a split
  // communicator need not carry it).
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  if (!flag || static_cast<Tag>(*tag_ub) < kHandshakeTag) {
    throw UnavailableError(fmt::format("this MPI's largest tag ({}) is below the {} parasol needs",
                                       flag ? *tag_ub : 0, kHandshakeTag));
  }
  CheckMpi(MPI_Irecv(control_buf_.data(), static_cast<int>(control_buf_.size()), MPI_CHAR, MPI_ANY_SOURCE,
                     static_cast<int>(kControlTag), comm_, &control_recv_),
           rank_, "post control receive");
  MPI_Comm node;
  if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    int local = 1;
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    cpu_set_t cpus;
    int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0
                    ? CPU_COUNT(&cpus)
                    : static_cast<int>(std::thread::hardware_concurrency());
    oversubscribed_ = local > cores;
  }
}

MpiTransport::~MpiTransport() {
  MutexLock lock(control_mu_);
  if (MpiFinalized()) return;
  if (control_recv_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&control_recv_);
    MPI_Wait(&control_recv_, MPI_STATUS_IGNORE);
  }
  for (auto& r : notices_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  MPI_Comm_free(&comm_);
}

void MpiTransport::CheckPeer(int peer, std::string_view op) const {
  if (peer < 0 || peer >= size_) {
    throw InvalidArgumentError(
        fmt::format("rank {}: {}: no rank {} (job has {} ranks)", rank_, op, peer, size_));
  }
}

Request MpiTransport::Isend(int peer, Tag tag, const void* data, size_t bytes) {
  CheckPeer(peer, "send");
  MPI_Request r;
  CheckMpi(
      MPI_Isend(data, CheckedInt(bytes, rank_, "send"), MPI_BYTE, peer, static_cast<int>(tag), comm_, &r),
      rank_, "send");
  return Request{Request::Kind::kSend, peer, tag, bytes, ToHandle(r), nullptr};
}

Request MpiTransport::Irecv(int peer, Tag tag, void* data, size_t bytes) {
  CheckPeer(peer, "receive");
  MPI_Request r;
  CheckMpi(
      MPI_Irecv(data, CheckedInt(bytes, rank_, "receive"), MPI_BYTE, peer, static_cast<int>(tag), comm_, &r),
      rank_, "receive");
  return Request{Request::Kind::kRecv, peer, tag, bytes, ToHandle(r), nullptr};
}

bool MpiTransport::Test(Request& req) {
  MPI_Request r = FromHandle(req.handle);
  int flag = 0;
  MPI_Status status;
  int rc = MPI_Test(&r, &flag, &status);
  req.handle = ToHandle(r);
  if (rc != MPI_SUCCESS) {
    Request failed = req;
    req.Reset();
    if (ErrorClass(rc) == MPI_ERR_TRUNCATE) {
      throw MismatchError(
          fmt::format("rank {}: message from peer {} (tag {}) is larger than the {} bytes expected", rank_,
                      failed.peer, failed.tag, failed.bytes));
    }
    throw InternalError(fmt::format("rank {}: {} with peer {}: MPI error: {}", rank_,
                                    RequestKindName(failed.kind), failed.peer, MpiErrorString(rc)));
  }
  if (!flag) return false;
  if (req.kind == Request::Kind::kRecv) {
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (static_cast<size_t>(count) != req.bytes) {
      Request failed = req;
      req.Reset();
      throw MismatchError(
          fmt::format("rank {}: message from peer {} (tag {}) has {} bytes where {} were expected", rank_,
                      failed.peer, failed.tag, count, failed.bytes));
    }
  }
  req.Reset();
  return true;
}

std::optional<Transport::Message> MpiTransport::TryReceive(Tag tag) {
  int flag = 0;
  MPI_Message handle;
  MPI_Status status;
  CheckMpi(MPI_Improbe(MPI_ANY_SOURCE, static_cast<int>(tag), comm_, &flag, &handle, &status), rank_,
           "probe");
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.src = status.MPI_SOURCE;
  m.data.resize(static_cast<size_t>(count));
  CheckMpi(MPI_Mrecv(m.data.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE), rank_, "receive");
  return m;
}

void MpiTransport::Cancel(Request& req) {
  if (!req.valid()) return;
  if (MpiFinalized()) {
    req.Reset();
    return;
  }
  MPI_Request r = FromHandle(req.handle);
  if (req.kind == Request::Kind::kRecv) {
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (r != MPI_REQUEST_NULL) {
    MPI_Request_free(&r);  // a send cannot be retracted; it completes in the background
  }
  req.Reset();
}

void MpiTransport::WaitForEvent(uint64_t, Deadline until) {
  // MPI has no blocking wait with a timeout: poll, yielding the core now and then so ranks that
  // share cores (oversubscribed jobs) still make progress.
  thread_local unsigned spins = 0;
  if (until.Expired()) return;
  if (oversubscribed_ || (++spins & 7) == 0) sched_yield();
}

std::optional<Tag> MpiTransport::ProbeUnexpected(int peer) {
  int flag = 0;
  MPI_Status status;
  if (MPI_Iprobe(peer, MPI_ANY_TAG, comm_, &flag, &status) != MPI_SUCCESS || !flag) return std::nullopt;
  if (static_cast<Tag>(status.MPI_TAG) > kMaxUserTag) return std::nullopt;
  return static_cast<Tag>(status.MPI_TAG);
}

void MpiTransport::NotifyFailure(const std::string& message) {
  MutexLock lock(control_mu_);
  if (!notices_.empty()) return;  // one notice per rank is enough
  notice_text_ = message.substr(0, kMaxNoticeBytes);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    MPI_Request r;
    if (MPI_Isend(notice_text_.data(), static_cast<int>(notice_text_.size()), MPI_CHAR, p,
                  static_cast<int>(kControlTag), comm_, &r) == MPI_SUCCESS) {
      notices_.push_back(r);
    }
  }
}

std::optional<std::string> MpiTransport::PeerFailure() {
  MutexLock lock(control_mu_);
  if (failure_ || control_recv_ == MPI_REQUEST_NULL) return failure_;
  int flag = 0;
  MPI_Status status;
  MPI_Test(&control_recv_, &flag, &status);
  if (flag) {
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    failure_ = std::string(control_buf_.data(), static_cast<size_t>(count));
  }
  return failure_;
}

std::unique_ptr<MemoryRegion> MpiTransport::RegisterMemory(void* base, size_t bytes, Deadline deadline) {
  uint64_t mine = bytes;
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  ExchangeWithAll(*this, kHandshakeTag, &mine, sizeof(mine), all.data(), deadline, "register memory");
  MPI_Win win = MPI_WIN_NULL;
  int rc = MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm_, &win);
  if (rc != MPI_SUCCESS) {
    throw UnavailableError(
        fmt::format("rank {}: register memory: MPI could not create a window ({}); one-sided windows over "
                    "user memory need OMPI_MCA_osc=sm,ucx in a one-process job (scripts/mpirun.sh sets it)",
                    rank_, MpiErrorString(rc)));
  }
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  std::vector<size_t> sizes(all.begin(), all.end());
  return std::make_unique<MpiMemoryRegion>(*this, win, base, bytes, std::move(sizes));
}

std::unique_ptr<Transport> MpiTransport::Duplicate(Deadline deadline) {
  // Agree first, with a deadline, so MPI_Comm_dup (which has none) cannot wait for a rank that
  // never comes.
  char token = 0;
  std::vector<char> all(static_cast<size_t>(size_));
  ExchangeWithAll(*this, kHandshakeTag, &token, 1, all.data(), deadline, "duplicate transport");
  MPI_Comm dup;
  CheckMpi(MPI_Comm_dup(comm_, &dup), rank_, "duplicate transport");
  return std::make_unique<MpiTransport>(dup);
}

std::unique_ptr<Transport> MpiTransport::Split(int color, Deadline deadline) {
  // As Duplicate: agree (and check the colors) with a deadline before the call that has none.
  ExchangeColors(*this, kHandshakeTag, color, deadline);
  MPI_Comm part;
  CheckMpi(MPI_Comm_split(comm_, color, rank_, &part), rank_, "split transport");
  return std::make_unique<MpiTransport>(part);
}

const char* LauncherRank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* rank = std::getenv(var)) return rank;
  }
  return nullptr;
}

MpiRuntime::MpiRuntime(int* argc, char*** argv, MpiStart start) {
  if (start == MpiStart::kUnderLauncher && !StartedByLauncher()) return;  // one rank, no MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw UnavailableError("MPI is already initialised in this process");
  // Messages received by probe (the parameter server's) are matched only when the receiving
  // thread polls, and above OpenMPI's TCP eager limit (64 KiB) each waits for a rendezvous
  // handshake whose control message queues behind the other direction's data on a busy link:
  // over a 1 Gbit/s link the server moved half the bytes per second that all-reduce did. Its
  // messages are at most 1 MiB and a row, so up to 2 MiB they go eagerly. A value the user gives
  // (mpirun --mca, the environment) wins; other MPIs ignore the variable.
  setenv("OMPI_MCA_btl_tcp_eager_limit", "2097152", /*overwrite=*/0);
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    throw UnavailableError("MPI_Init_thread failed");
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw UnavailableError("this MPI cannot provide MPI_THREAD_MULTIPLE");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  started_ = true;
}

MpiRuntime::~MpiRuntime() {
  if (!started_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::unique_ptr<Transport> MpiRuntime::CreateWorldTransport() {
  if (!started_) return InProcessWorld(1).CreateTransport(0);  // the transport keeps its world
  MPI_Comm dup;
  CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), rank_, "create world transport");
  return std::make_unique<MpiTransport>(dup);
}

void MpiRuntime::Abort(int code) {
  if (!started_) std::_Exit(code);  // alone: no other rank to end
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest
}

}  // namespace parasol::comm
