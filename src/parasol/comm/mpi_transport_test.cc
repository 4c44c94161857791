// Runs under `mpirun -np N` (and alone, as a singleton): every rank runs every test in the same
// order, so each test is a small collective program.
#include "parasol/comm/mpi_transport.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/context.h"
#include "parasol/comm/memory_region.h"
#include "parasol/comm/mpi_runtime.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::comm {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

MpiRuntime* g_runtime = nullptr;

class MpiTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { t_ = g_runtime->CreateWorldTransport(); }
  std::unique_ptr<Transport> t_;
};

TEST_F(MpiTransportTest, RingExchange) {
  int n = t_->size(), r = t_->rank();
  std::vector<double> out(1000, r + 0.5), in(1000, -1);
  Request recv = t_->Irecv((r + n - 1) % n, 4, in.data(), in.size() * 8);
  Request send = t_->Isend((r + 1) % n, 4, out.data(), out.size() * 8);
  Wait(*t_, recv, Deadline::After(10s), "ring");
  Wait(*t_, send, Deadline::After(10s), "ring");
  EXPECT_EQ(in, std::vector<double>(1000, (r + n - 1) % n + 0.5));
}

TEST_F(MpiTransportTest, SizeMismatchIsReported) {
  if (t_->size() < 2) GTEST_SKIP() << "needs two ranks";
  int r = t_->rank();
  std::vector<char> buf(64);
  if (r == 0) {
    Request s = t_->Isend(1, 9, buf.data(), 64);
    Wait(*t_, s, Deadline::After(10s), "send");
  } else if (r == 1) {
    Request q = t_->Irecv(0, 9, buf.data(), 32);
    try {
      Wait(*t_, q, Deadline::After(10s), "receive");
      ADD_FAILURE() << "expected a mismatch";
    } catch (const MismatchError& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr("rank 1: receive: message from peer 0 (tag 9) is larger than the 32 bytes"));
    }
  }
}

TEST_F(MpiTransportTest, MissingMessageTimesOutNamingThePeer) {
  if (t_->size() < 2) GTEST_SKIP() << "needs two ranks";
  if (t_->rank() == 0) {
    int v = 0;
    Request q = t_->Irecv(1, 11, &v, 4);
    try {
      Wait(*t_, q, Deadline::After(200ms), "test receive");
      ADD_FAILURE() << "expected a timeout";
    } catch (const TimeoutError& e) {
      EXPECT_THAT(e.what(), HasSubstr("rank 0: test receive: deadline passed waiting for peer 1"));
    }
  }
}

TEST_F(MpiTransportTest, FailureNoticeReachesEveryRank) {
  if (t_->size() < 2) GTEST_SKIP() << "needs two ranks";
  auto dup = t_->Duplicate(Deadline::After(10s));
  if (dup->rank() == 0) {
    dup->NotifyFailure("rank 0: test: it broke");
  } else {
    int v = 0;
    Request q = dup->Irecv(0, 1, &v, 4);
    try {
      Wait(*dup, q, Deadline::After(10s), "test receive");
      ADD_FAILURE() << "expected an abort";
    } catch (const AbortedError& e) {
      EXPECT_THAT(e.what(), HasSubstr("aborted because rank 0: test: it broke"));
    }
  }
  // Keep the duplicate alive until every rank has seen the notice.
  char token = 0;
  std::vector<char> all(static_cast<size_t>(t_->size()));
  ExchangeWithAll(*t_, 5, &token, 1, all.data(), Deadline::After(10s), "barrier");
}

TEST_F(MpiTransportTest, DuplicateSeparatesMessages) {
  auto dup = t_->Duplicate(Deadline::After(10s));
  int n = t_->size(), r = t_->rank();
  int a = 100 + r, b = 200 + r, got_a = -1, got_b = -1;
  Request ra = t_->Irecv((r + n - 1) % n, 1, &got_a, 4);
  Request rb = dup->Irecv((r + n - 1) % n, 1, &got_b, 4);
  Request sb = dup->Isend((r + 1) % n, 1, &b, 4);
  Request sa = t_->Isend((r + 1) % n, 1, &a, 4);
  Wait(*t_, ra, Deadline::After(10s), "a");
  Wait(*dup, rb, Deadline::After(10s), "b");
  Wait(*t_, sa, Deadline::After(10s), "a");
  Wait(*dup, sb, Deadline::After(10s), "b");
  EXPECT_EQ(got_a, 100 + (r + n - 1) % n);
  EXPECT_EQ(got_b, 200 + (r + n - 1) % n);
}

// Even and odd ranks in two groups, each a ring of its own that passes world ranks.
TEST_F(MpiTransportTest, SplitMakesGroupsByColor) {
  const int n = t_->size(), r = t_->rank();
  auto part = t_->Split(r % 2, Deadline::After(10s));
  const int m = part->size(), q = part->rank();
  EXPECT_EQ(m, (n - r % 2 + 1) / 2);
  EXPECT_EQ(q, r / 2);
  int mine = r, got = -1;
  Request recv = part->Irecv((q + m - 1) % m, 2, &got, 4);
  Request send = part->Isend((q + 1) % m, 2, &mine, 4);
  Wait(*part, recv, Deadline::After(10s), "split ring");
  Wait(*part, send, Deadline::After(10s), "split ring");
  EXPECT_EQ(got, 2 * ((q + m - 1) % m) + r % 2);
}

TEST_F(MpiTransportTest, TryReceiveTakesMessagesOfAnySize) {
  int n = t_->size(), r = t_->rank();
  std::vector<char> out(static_cast<size_t>(100 + r), static_cast<char>('a' + r));
  Request s = t_->Isend((r + 1) % n, 55, out.data(), out.size());
  std::optional<Transport::Message> m;
  auto deadline = Deadline::After(10s);
  while (!(m = t_->TryReceive(55)) && !deadline.Expired()) {
  }
  ASSERT_TRUE(m);
  int from = (r + n - 1) % n;
  EXPECT_EQ(m->src, from);
  EXPECT_EQ(m->data.size(), static_cast<size_t>(100 + from));
  EXPECT_EQ(static_cast<char>(m->data[0]), 'a' + from);
  Wait(*t_, s, Deadline::After(10s), "send");
}

// Threads share one transport (MPI_THREAD_MULTIPLE): two exchange on it with different tags
// while a third uses a duplicate, all at once, and every message lands where it belongs.
TEST_F(MpiTransportTest, ConcurrentThreadsShareTheTransport) {
  auto dup = t_->Duplicate(Deadline::After(10s));
  const int n = t_->size(), r = t_->rank();
  auto exchange = [&](Transport& t, Tag tag, int base, int* errors) {
    for (int round = 0; round < 200; ++round) {
      int out = base + round * 100 + r, in = -1;
      Request q = t.Irecv((r + n - 1) % n, tag, &in, 4);
      Request s = t.Isend((r + 1) % n, tag, &out, 4);
      Wait(t, q, Deadline::After(30s), "exchange");
      Wait(t, s, Deadline::After(30s), "exchange");
      if (in != base + round * 100 + (r + n - 1) % n) ++*errors;
    }
  };
  int e1 = 0, e2 = 0, e3 = 0;
  std::thread a(exchange, std::ref(*t_), 21, 100000, &e1);
  std::thread b(exchange, std::ref(*t_), 22, 200000, &e2);
  std::thread c(exchange, std::ref(*dup), 21, 300000, &e3);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(e1 + e2 + e3, 0);
}

TEST_F(MpiTransportTest, MemoryRegionPutGet) {
  int n = t_->size(), r = t_->rank();
  std::vector<int64_t> mem(static_cast<size_t>(n) + 1, -1);
  mem[0] = 1000 + r;
  auto region = t_->RegisterMemory(mem.data(), mem.size() * 8, Deadline::After(10s));
  const int64_t v = r;
  EXPECT_THROW(region->Put((r + 1) % n, mem.size() * 8, &v, 8), InvalidArgumentError);
  testing::CheckRegionRing(*region, mem.data(), r, n, 10s);
}

}  // namespace
}  // namespace parasol::comm

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = 0;
  // Declared before the runtime, so they outlive MPI: a torch.distributed process group that
  // Python frees after parasol's atexit handler finalised MPI holds such a transport. Cancelling
  // its receive and destroying it must not call MPI, which aborts the job after MPI_Finalize.
  std::unique_ptr<parasol::comm::Transport> outliving;
  parasol::comm::Request posted;
  char byte = 0;
  {
    parasol::comm::MpiRuntime runtime(&argc, &argv);
    parasol::comm::g_runtime = &runtime;
    if (runtime.rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    outliving = runtime.CreateWorldTransport();
    posted = outliving->Irecv(0, 77, &byte, 1);
    parasol::comm::g_runtime = nullptr;
  }
  outliving->Cancel(posted);
  outliving.reset();
  // A failure on any rank fails the job: mpirun reports the first non-zero exit.
  return rc;
}
