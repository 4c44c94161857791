// Bad requests and lost shards: the caller gets a clear error, the server keeps serving.
#include <atomic>
#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/ps/parameter_server.h"
#include "parasol/ps/protocol.h"
#include "parasol/ps/server_shard.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TableConfig FloatTable() {
  return {.id = 1,
          .kind = RowKind::kDense,
          .dtype = DType::kFloat32,
          .width = 8,
          .num_rows = 100,
          .consistency = Consistency::kSsp,
          .staleness = 1};
}

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PsErrors, BadTablesRowsColumnsAndTypes) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 10s});
    ps.CreateTable(FloatTable());
    auto w = ps.CreateWorker(0);
    EXPECT_THAT(ErrorOf([&] { w->GetTable<float>(9); }), HasSubstr("table 9 does not exist"));
    EXPECT_THAT(ErrorOf([&] { w->GetTable<double>(1); }), HasSubstr("holds float32 values, not float64"));
    auto t = w->GetTable<float>(1);
    EXPECT_THAT(ErrorOf([&] { t.Get(100); }), HasSubstr("row 100 is out of range"));
    EXPECT_THAT(ErrorOf([&] { t.Inc(7, 8, 1.0f); }), HasSubstr("column 8 is out of range"));
    std::vector<float> short_row(3);
    EXPECT_THAT(ErrorOf([&] { t.IncRow(7, short_row); }), HasSubstr("needs 8 deltas"));
    EXPECT_THAT(ErrorOf([&] { ps.CreateTable(FloatTable()); }), HasSubstr("table 1 already exists"));
    TableConfig bad = FloatTable();
    bad.id = 2;
    bad.width = 0;
    EXPECT_THAT(ErrorOf([&] { ps.CreateTable(bad); }), HasSubstr("table 2"));
    EXPECT_THAT(ErrorOf([&] { ps.CreateWorker(1); }), HasSubstr("worker index 1 outside 0..0"));
    // None of that disturbed the tables: a normal round still works.
    t.Inc(7, 2, 1.5f);
    w->Clock();
    w->GlobalBarrier();
    EXPECT_EQ(t.Get(7)[2], 3.0f);  // both ranks added 1.5
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(PsErrors, RanksThatCreateDifferentTablesAreTold) {
  comm::InProcessWorld world(3);
  auto errors = comm::testing::RunRanks(world, [](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 10s});
    TableConfig c = FloatTable();
    if (ctx.rank() == 2) c.staleness = 2;
    EXPECT_THAT(ErrorOf([&] { ps.CreateTable(c); }), HasSubstr("with another configuration"));
    ps.Shutdown();
  });
  comm::testing::ExpectNoErrors(errors);
}

// Abort while a worker waits in the network barrier for a rank that never comes: the barrier ends
// with the abort's reason at once (it used to hold the lock Abort needs until the deadline).
TEST(PsErrors, AbortDuringABarrierEndsItWithTheReason) {
  comm::InProcessWorld world(2);
  std::atomic<bool> aborted{false};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 30s});
    ps.CreateTable(FloatTable());
    if (ctx.rank() == 1) {
      comm::testing::WaitUntil([&] { return aborted.load(); }, "rank 0 to abort");
      return;  // never reaches the barrier; its shutdown fails quietly
    }
    auto w = ps.CreateWorker(0);
    std::thread stopper([&] {
      // Three waits for messages: the two parameter servers' loops (between their polls) and this
      // worker, in the barrier; without the worker there are at most two.
      comm::testing::WaitUntil([&] { return world.waiting() >= 3; }, "the worker in the barrier");
      ps.Abort("stopped by the operator");
      aborted = true;
    });
    Error error(ErrorCode::kInternal, "no error");
    try {
      w->GlobalBarrier();
    } catch (const Error& e) {
      error = e;
    }
    stopper.join();
    EXPECT_NE(error.code(), ErrorCode::kTimeout) << error.what();
    EXPECT_THAT(error.what(), HasSubstr("stopped by the operator"));
  });
  comm::testing::ExpectNoErrors(errors);
}

// Rank 1 stops answering after the tables exist: a read of a row on its shard fails by the
// deadline with an error naming the shard, and nothing hangs.
TEST(PsErrors, ShardThatStopsAnsweringIsATimeoutNamingIt) {
  comm::InProcessWorld world(2);
  std::atomic<bool> killed{false};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 400ms});
    TableConfig c = FloatTable();
    ps.CreateTable(c);
    if (ctx.rank() == 1) {
      world.KillRank(1);
      killed = true;
      return;  // the destructor's shutdown fails quietly: this rank is gone
    }
    comm::testing::WaitUntil([&] { return killed.load(); }, "rank 1 to be killed");
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<float>(1);
    uint64_t row = 0;
    while (ShardOf(c, row, 2) != 1) ++row;
    auto start = std::chrono::steady_clock::now();
    std::string error = ErrorOf([&] { t.Get(row); });
    EXPECT_THAT(error, HasSubstr("shard 1 (rank 1) did not answer by the deadline"));
    EXPECT_THAT(error, HasSubstr("rank 0"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_THAT(ErrorOf([&] { w->GlobalBarrier(); }), HasSubstr("shard 1"));
  });
  EXPECT_EQ(errors[0], nullptr) << comm::testing::Message(errors[0]);
}

// Rank 1 is alive but does not finish its clock: a read of a row on rank 0's own shard waits for
// rank 1's updates, so its timeout names rank 1 as what holds the shard back, not the shard alone
// (which this very process runs).
TEST(PsErrors, ReadOfTheOwnShardNamesTheRankHoldingItBack) {
  comm::InProcessWorld world(2);
  std::atomic<bool> read_failed{false};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 400ms});
    TableConfig c = FloatTable();
    c.consistency = Consistency::kBsp;
    c.staleness = 0;
    ps.CreateTable(c);
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<float>(1);
    if (ctx.rank() == 1) {
      comm::testing::WaitUntil([&] { return read_failed.load(); }, "rank 0's read to fail");
      w->Clock();
      return;
    }
    uint64_t row = 0;
    while (ShardOf(c, row, 2) != 0) ++row;
    w->Clock();
    std::string error = ErrorOf([&] { t.Get(row); });
    read_failed = true;
    EXPECT_THAT(error, HasSubstr("rank 0: get row"));
    EXPECT_THAT(error, HasSubstr("shard 0 (rank 0) did not answer by the deadline (its clock is 0, held "
                                 "back by rank 1)"));
  });
  comm::testing::ExpectNoErrors(errors);
}

// The same with rows read one-sided: a read from the gone shard's memory names it, and a read
// that needs a clock the other shard cannot reach without the gone rank ends at the deadline
// naming that shard.
TEST(PsErrors, OneSidedReadsOfAGoneShardNameIt) {
  comm::InProcessWorld world(2);
  std::atomic<bool> killed{false};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 400ms});
    TableConfig c = FloatTable();
    c.partitioning = Partitioning::kRange;
    c.one_sided_reads = true;
    ps.CreateTable(c);
    if (ctx.rank() == 1) {
      world.KillRank(1);
      killed = true;
      return;
    }
    comm::testing::WaitUntil([&] { return killed.load(); }, "rank 1 to be killed");
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<float>(1);
    std::string error = ErrorOf([&] { t.Get(70); });  // rows 50..99 are shard 1's
    EXPECT_THAT(error, HasSubstr("rank 0: one-sided read of table 1"));
    EXPECT_THAT(error, HasSubstr("from shard 1 (rank 1)"));
    EXPECT_THAT(error, HasSubstr("peer 1 is gone"));
    w->Clock();
    w->Clock();  // staleness 1: a read at clock 2 needs shard 0 at clock 1, which waits for rank 1
    error = ErrorOf([&] { t.Get(3); });
    EXPECT_THAT(error, HasSubstr("get row 3 of table 1"));
    EXPECT_THAT(error, HasSubstr("shard 0 (rank 0) did not reach that clock by the deadline"));
  });
  EXPECT_EQ(errors[0], nullptr) << comm::testing::Message(errors[0]);
}

// A rank that fails with an exception tells the others: their waiting reads end at once with
// its reason, not at the deadline.
TEST(PsErrors, FailingRankAbortsTheOthersWaitingReads) {
  comm::InProcessWorld world(2);
  std::atomic<ParameterServer*> rank0{nullptr};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParameterServer ps(ctx, {.workers_per_process = 1, .timeout_ms = 20s});
    ps.CreateTable({.id = 1,
                    .kind = RowKind::kDense,
                    .dtype = DType::kFloat32,
                    .width = 8,
                    .num_rows = 100,
                    .consistency = Consistency::kBsp});
    auto w = ps.CreateWorker(0);
    auto t = w->GetTable<float>(1);
    if (ctx.rank() == 1) {
      // Rank 0's read is waiting for this rank's clock when this rank fails.
      comm::testing::WaitUntil([&] { return rank0.load() && rank0.load()->client().HasWaiters(); },
                               "rank 0 waiting for a row");
      throw InvalidArgumentError("rank 1: bad input file");
    }
    rank0 = &ps;
    w->Clock();  // BSP: a read at clock 1 waits for rank 1's clock, which never comes
    auto start = std::chrono::steady_clock::now();
    std::string error = ErrorOf([&] { t.Get(3); });
    EXPECT_THAT(error, HasSubstr("rank 1 failed"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  });
  EXPECT_EQ(errors[0], nullptr) << comm::testing::Message(errors[0]);
  EXPECT_THAT(comm::testing::Message(errors[1]), HasSubstr("bad input file"));
}

std::vector<std::byte> GetMessage(uint32_t table, uint64_t row, uint64_t need) {
  WireWriter w;
  w.Put(MsgType::kGet);
  w.Put(table);
  w.Put(need);
  w.Put<uint8_t>(0);
  w.Put<uint32_t>(1);
  w.Put(row);
  return w.Take();
}

std::string ErrorReply(const std::vector<std::byte>& bytes) {
  WireReader r(bytes.data(), bytes.size(), 0);
  if (static_cast<MsgType>(r.Get<uint8_t>()) != MsgType::kError) return "(not an error)";
  r.Get<uint32_t>();
  r.Get<uint64_t>();
  return r.GetString();
}

// Messages that do not decode or ask for what is not there get an error reply; the shard's rows
// are untouched and it keeps answering.
TEST(ServerShard, MalformedAndInvalidRequestsGetErrorReplies) {
  LocalFileSystem fs;
  ServerShard shard(0, 1, fs);
  shard.AddTable(FloatTable());
  Outbox out;
  auto handle = [&](const std::vector<std::byte>& m) {
    WireReader r(m.data(), m.size(), 0);
    shard.Handle(0, r, out);
  };
  // An update whose last row is cut short: nothing of it is applied.
  WireWriter u;
  u.Put(MsgType::kUpdate);
  u.Put<uint64_t>(1);
  u.Put<uint32_t>(1);
  u.Put<uint32_t>(1);
  u.Put<uint64_t>(2);
  Row delta(RowKind::kDense, DType::kFloat32, 8);
  delta.Add<float>(0, 2.0f);
  u.Put<uint64_t>(5);
  delta.Encode(u);
  u.Put<uint64_t>(6);
  u.Put<uint64_t>(8);  // width, then only half the values
  u.PutBytes(std::vector<float>(4).data(), 16);
  handle(u.Take());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ErrorReply(out[0].second), HasSubstr("shard 0: "));
  EXPECT_EQ(shard.Peek(1, 5), nullptr);
  out.clear();

  handle(GetMessage(4, 1, 0));
  handle(GetMessage(1, 100, 0));
  std::vector<std::byte> junk{std::byte{99}, std::byte{1}};
  handle(junk);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ErrorReply(out[0].second), HasSubstr("table 4 does not exist"));
  EXPECT_THAT(ErrorReply(out[1].second), HasSubstr("row 100 is out of range"));
  EXPECT_THAT(ErrorReply(out[2].second), HasSubstr("unexpected message type 99"));
  out.clear();

  handle(GetMessage(1, 5, 0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(static_cast<MsgType>(out[0].second[0]), MsgType::kRows);
}

}  // namespace
}  // namespace parasol::ps
