// The client alone, its shards played by the test through the messages it sends and the replies
// fed back: a clock sends each shard its updates before the clock; a read waits for a row fresh
// enough and sees the process's own updates not yet applied; asking twice sends one request; a
// silent shard is a timeout naming it, and a failure reaches every waiting worker.
#include "parasol/ps/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "parasol/core/error.h"
#include "parasol/core/file_system.h"
#include "parasol/core/mutex.h"
#include "parasol/ps/protocol.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr uint32_t kTable = 3;
constexpr int kProcesses = 2;

// What the client sent, in order.
class SentMessages {
 public:
  Client::Sender Sender() {
    return [this](int dst, std::vector<std::byte> bytes) {
      MutexLock lock(mu_);
      sent_.emplace_back(dst, std::move(bytes));
    };
  }
  std::vector<std::pair<int, std::vector<std::byte>>> Take() {
    MutexLock lock(mu_);
    return std::exchange(sent_, {});
  }
  static MsgType TypeOf(const std::vector<std::byte>& m) { return static_cast<MsgType>(m.at(0)); }

 private:
  Mutex mu_;
  std::vector<std::pair<int, std::vector<std::byte>>> sent_ PARASOL_GUARDED_BY(mu_);
};

TableConfig Dense() {
  return {.id = kTable,
          .kind = RowKind::kDense,
          .dtype = DType::kFloat32,
          .width = 2,
          .num_rows = 100,
          .consistency = Consistency::kBsp};
}

// A row `row` of value {a, b} at `stamp`, as shard `shard` sends it.
void Reply(Client& c, int shard, uint64_t row, uint64_t stamp, float a, float b) {
  Row r(RowKind::kDense, DType::kFloat32, 2);
  r.Add<float>(0, a);
  r.Add<float>(1, b);
  WireWriter w;
  w.Put(MsgType::kRows);
  w.Put<uint64_t>(stamp);
  w.Put<uint64_t>(0);  // no batch of this process applied
  w.Put<uint32_t>(1);
  w.Put<uint32_t>(kTable);
  w.Put<uint64_t>(row);
  r.Encode(w);
  std::vector<std::byte> bytes = w.Take();
  WireReader in(bytes.data(), bytes.size(), shard);
  c.OnMessage(shard, in);
}

uint64_t ARowOf(int shard) {
  for (uint64_t row = 0;; ++row)
    if (ShardOf(Dense(), row, kProcesses) == shard) return row;
}

TEST(Client, AClockSendsEachShardItsUpdatesBeforeTheClockOnceEveryWorkerHasClocked) {
  LocalFileSystem fs;
  SentMessages out;
  Client c(0, kProcesses, /*workers=*/2, fs, out.Sender());
  c.AddTable(Dense());
  FlatMap<std::unique_ptr<Row>> updates;
  updates[ARowOf(1)] = std::make_unique<Row>(RowKind::kDense, DType::kFloat32, 2);
  updates[ARowOf(1)]->Add<float>(0, 1.5f);
  c.AddUpdates(kTable, updates);
  c.Clocked(0, 1);
  EXPECT_TRUE(out.Take().empty()) << "worker 1 has not clocked: nothing leaves the process";
  c.Clocked(1, 1);
  std::vector<std::pair<int, MsgType>> got;
  for (const auto& [dst, m] : out.Take()) got.emplace_back(dst, SentMessages::TypeOf(m));
  const std::vector<std::pair<int, MsgType>> want = {
      {0, MsgType::kClock}, {1, MsgType::kUpdate}, {1, MsgType::kClock}};
  EXPECT_EQ(got, want) << "shard 0 has no updates; shard 1 gets its update before the clock";
  EXPECT_EQ(c.process_clock(), 1u);
  EXPECT_EQ(c.stats().update_batches, 1u);
}

TEST(Client, AReadWaitsForAFreshRowAndSeesTheProcesssOwnUpdates) {
  LocalFileSystem fs;
  SentMessages out;
  Client c(0, kProcesses, 1, fs, out.Sender());
  c.AddTable(Dense());
  const uint64_t row = ARowOf(1);
  Client::Snapshot snapshot;
  std::thread reader([&] { snapshot = c.Get(kTable, row, /*need=*/1, Deadline::After(20s)); });
  // The reader asks shard 1 once, then waits; the shard answers with a row too old, then a fresh one.
  std::vector<std::pair<int, std::vector<std::byte>>> asked;
  while (asked.empty()) {
    asked = out.Take();
    std::this_thread::yield();
  }
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].first, 1);
  EXPECT_EQ(SentMessages::TypeOf(asked[0].second), MsgType::kGet);
  c.Prefetch(kTable, row, 1);
  EXPECT_TRUE(out.Take().empty()) << "a request on its way is not sent again";
  Reply(c, 1, row, /*stamp=*/1, 2.0f, 3.0f);
  reader.join();
  ASSERT_TRUE(snapshot.row);
  EXPECT_EQ(snapshot.stamp, 1u);
  EXPECT_EQ(snapshot.row->Get<float>(0), 2.0f);

  // The process's own update shows before any shard has applied it (read-my-writes).
  FlatMap<std::unique_ptr<Row>> updates;
  updates[row] = std::make_unique<Row>(RowKind::kDense, DType::kFloat32, 2);
  updates[row]->Add<float>(1, 10.0f);
  c.AddUpdates(kTable, updates);
  const Client::Snapshot mine = c.Get(kTable, row, 1, Deadline::After(1s));
  EXPECT_EQ(mine.row->Get<float>(0), 2.0f);
  EXPECT_EQ(mine.row->Get<float>(1), 13.0f);
}

TEST(Client, ASilentShardIsATimeoutNamingIt) {
  LocalFileSystem fs;
  SentMessages out;
  Client c(0, kProcesses, 1, fs, out.Sender());
  c.AddTable(Dense());
  try {
    c.Get(kTable, ARowOf(1), 1, Deadline::After(200ms));
    FAIL() << "no shard answered, yet the read returned";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(), HasSubstr("shard 1"));
  }
}

TEST(Client, AFailureReachesTheWaitingWorkerAndEveryLaterCall) {
  LocalFileSystem fs;
  SentMessages out;
  Client c(0, kProcesses, 1, fs, out.Sender());
  c.AddTable(Dense());
  std::exception_ptr error;
  std::thread reader([&] {
    try {
      c.Get(kTable, ARowOf(1), 1, Deadline::After(60s));
    } catch (...) {
      error = std::current_exception();
    }
  });
  while (!c.HasWaiters()) std::this_thread::yield();
  c.Fail(ErrorCode::kPeerGone, "rank 0: parameter server: peer 1 is gone");
  reader.join();
  ASSERT_TRUE(error) << "the waiting read returned without the row";
  EXPECT_THROW(std::rethrow_exception(error), PeerGoneError);
  EXPECT_THROW(c.Get(kTable, ARowOf(0), 1, Deadline::After(60s)), PeerGoneError);
}

}  // namespace
}  // namespace parasol::ps
