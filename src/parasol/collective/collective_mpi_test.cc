// The collectives over the MPI transport, under `mpirun -np N` (2, 3, 4, 5, 8) and as a
// singleton: every rank runs every test in the same order, so each test is a collective program.
#include <chrono>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/collectives.h"
#include "parasol/collective/test_util.h"
#include "parasol/comm/context.h"
#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"

namespace parasol::collective {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

comm::MpiRuntime* g_runtime = nullptr;

class MpiCollectives : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<comm::Context>(g_runtime->CreateWorldTransport(),
                                           comm::ContextOptions{.timeout_ms = 60s});
  }
  std::unique_ptr<comm::Context> ctx_;
};

TEST_F(MpiCollectives, EveryAllreduceAlgorithmOpTypeAndSize) {
  const int n = ctx_->size(), me = ctx_->rank();
  for (AllreduceAlgorithm algo : AllAllreduceAlgorithms()) {
    AllreduceOptions o;
    o.algorithm = algo;
    if (algo == AllreduceAlgorithm::kFtMesh) o.topology = testing::MeshFor(n);
    for (size_t count : {size_t{0}, size_t{1}, size_t{1009}, size_t{40009}}) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax}) {
          o.op = op;
          o.segment_bytes = count > 10000 ? 16384 : 0;  // large counts also stream in segments
          std::vector<std::vector<std::byte>> inputs;
          for (int r = 0; r < n; ++r) inputs.push_back(testing::ExactInput(dtype, op, r, count, count + 7));
          auto want = testing::Reference(dtype, op, inputs);
          std::vector<std::byte> buf = inputs[static_cast<size_t>(me)], out(buf.size());
          bool in_place = (count + static_cast<size_t>(op)) % 2 == 0;
          Allreduce(*ctx_, buf.data(), in_place ? buf.data() : out.data(), count, dtype, o);
          ASSERT_EQ(in_place ? buf : out, want) << AllreduceAlgorithmName(algo) << " count " << count << " "
                                                << DTypeName(dtype) << " " << ReduceOpName(op);
        }
      }
    }
  }
}

TEST_F(MpiCollectives, BroadcastReduceFromEveryRoot) {
  const int n = ctx_->size(), me = ctx_->rank();
  for (size_t count : {size_t{0}, size_t{7}, size_t{20011}}) {
    for (int root = 0; root < n; ++root) {
      auto want = testing::ExactInput(DType::kFloat64, ReduceOp::kSum, root, count, 3);
      std::vector<std::byte> buf = me == root ? want : std::vector<std::byte>(want.size());
      Broadcast(*ctx_, buf.data(), count, DType::kFloat64, {.root = root});
      ASSERT_EQ(buf, want) << "broadcast root " << root << " count " << count;
      std::vector<std::vector<std::byte>> inputs;
      for (int r = 0; r < n; ++r)
        inputs.push_back(testing::ExactInput(DType::kInt64, ReduceOp::kMax, r, count, 5));
      std::vector<std::byte> out(inputs[0].size());
      Reduce(*ctx_, inputs[static_cast<size_t>(me)].data(), out.data(), count, DType::kInt64,
             {.root = root, .op = ReduceOp::kMax});
      if (me == root) {
        ASSERT_EQ(out, testing::Reference(DType::kInt64, ReduceOp::kMax, inputs)) << "reduce root " << root;
      }
    }
  }
}

TEST_F(MpiCollectives, ReduceScatterAllgatherAlltoall) {
  const int n = ctx_->size(), me = ctx_->rank();
  for (size_t count : {size_t{0}, size_t{3}, size_t{5003}}) {
    std::vector<std::vector<std::byte>> inputs;
    for (int r = 0; r < n; ++r)
      inputs.push_back(testing::ExactInput(DType::kFloat32, ReduceOp::kSum, r, count, 9));
    auto sum = testing::Reference(DType::kFloat32, ReduceOp::kSum, inputs);
    auto [b, e] = BlockRange(count, n, me);
    std::vector<std::byte> block((e - b) * 4);
    ReduceScatter(*ctx_, inputs[static_cast<size_t>(me)].data(), block.data(), count, DType::kFloat32);
    ASSERT_EQ(block, std::vector<std::byte>(sum.begin() + static_cast<long>(b * 4),
                                            sum.begin() + static_cast<long>(e * 4)));
    std::vector<int32_t> mine(count, me), all(count * static_cast<size_t>(n));
    Allgather(*ctx_, mine.data(), all.data(), count, DType::kInt32);
    for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<int32_t>(i / count));
    std::vector<int64_t> to(count * static_cast<size_t>(n)), from(to.size());
    for (size_t i = 0; i < to.size(); ++i) to[i] = me * 1000 + static_cast<int64_t>(i / count);
    Alltoall(*ctx_, to.data(), from.data(), count, DType::kInt64);
    for (size_t i = 0; i < from.size(); ++i) ASSERT_EQ(from[i], static_cast<int64_t>(i / count) * 1000 + me);
  }
}

// A rank that never joins: its peers fail by the deadline with an error naming it. Runs on a
// duplicate context, since failure notices end the context they travel on.
TEST_F(MpiCollectives, AbsentRankIsNamedByTheOthers) {
  if (ctx_->size() < 2) GTEST_SKIP() << "needs two ranks";
  auto dup = ctx_->Duplicate(Deadline::After(10s));
  const int absent = ctx_->size() - 1;
  if (dup->rank() != absent) {
    std::vector<float> v(100, 1.0f);
    try {
      AllreduceOptions o;
      o.algorithm = AllreduceAlgorithm::kRing;
      o.timeout_ms = 500ms;
      Allreduce<float>(*dup, v, o);
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr(fmt::format("rank {}: allreduce(ring, 100 x float32, sum): ", dup->rank())));
      EXPECT_THAT(e.what(), HasSubstr("waiting for peer"));
    }
  }
  Barrier(*ctx_, 30s);  // the absent rank waits here for the others to finish
}

TEST_F(MpiCollectives, MismatchedOpIsReportedAcrossProcesses) {
  if (ctx_->size() < 2) GTEST_SKIP() << "needs two ranks";
  auto dup = ctx_->Duplicate(Deadline::After(10s));
  std::vector<double> v(64, 1.0);
  AllreduceOptions o;
  o.algorithm = AllreduceAlgorithm::kRing;
  o.op = dup->rank() == 0 ? ReduceOp::kMax : ReduceOp::kSum;
  o.timeout_ms = 20s;
  auto start = std::chrono::steady_clock::now();
  try {
    Allreduce<double>(*dup, v, o);
    ADD_FAILURE() << "expected an error";
  } catch (const MismatchError& e) {
    EXPECT_THAT(e.what(), HasSubstr("called this collective with other arguments"));
  } catch (const AbortedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("aborted because rank"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "found only at the deadline";
  Barrier(*ctx_, 30s);
}

}  // namespace
}  // namespace parasol::collective

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  parasol::comm::MpiRuntime runtime(&argc, &argv);
  parasol::collective::g_runtime = &runtime;
  if (runtime.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
