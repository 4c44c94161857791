// The executor's own contract, on hand-written programs (not an algorithm's): sends, receives,
// receive-reduces and copies move and combine exactly the elements their regions name, in or out
// of place; a peer that runs another call, or none, is an error naming this rank, the call and
// the peer, never a wrong result or a hang. Tags carry the sequence and the signature.
#include "parasol/collective/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"

namespace parasol::collective {
namespace {

using comm::InProcessWorld;
using comm::testing::ExpectNoErrors;
using comm::testing::Message;
using comm::testing::RunRanks;
using ::testing::HasSubstr;

ExecuteArgs Args(const Program& p, std::vector<float>& data, const std::vector<float>* input = nullptr,
                 uint64_t signature = 1, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  ExecuteArgs a;
  a.program = &p;
  a.data = data.data();
  a.input = input ? input->data() : nullptr;
  a.elem_size = sizeof(float);
  a.reduce = GetReduceFn(DType::kFloat32, ReduceOp::kSum);
  a.reduce3 = GetReduceFn3(DType::kFloat32, ReduceOp::kSum);
  a.sequence = 0;
  a.signature = signature;
  a.timeout_ms = timeout;
  a.deadline = Deadline::After(timeout);
  a.what = "test(8 x float32)";
  return a;
}

Region Data(uint64_t offset, uint64_t count) { return {BufferId::kData, offset, count}; }

TEST(Executor, MovesAndReducesExactlyTheRegionsNamed) {
  InProcessWorld world(2);
  std::vector<std::vector<float>> out(2);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    const int r = ctx.rank();
    std::vector<float> data(8);
    for (int i = 0; i < 8; ++i) data[static_cast<size_t>(i)] = static_cast<float>(10 * r + i);
    ProgramBuilder b(r, 2);
    if (r == 0) {
      b.Send(1, Data(0, 3));        // elements 0..2 to rank 1
      b.RecvReduce(1, Data(4, 2));  // += rank 1's elements 6, 7
      b.Copy(Data(7, 1), Data(0, 1));
    } else {
      b.Send(0, Data(6, 2));  // its own 6, 7: the receive below waits for this send
      b.Recv(0, Data(5, 3));  // rank 0's 0..2 into 5..7
    }
    Program p = std::move(b).Finish();
    Executor e;
    e.Run(ctx.transport(), Args(p, data));
    out[static_cast<size_t>(r)] = data;
  }));
  EXPECT_EQ(out[0], (std::vector<float>{0, 1, 2, 3, 4 + 16, 5 + 17, 6, 0}));
  EXPECT_EQ(out[1], (std::vector<float>{10, 11, 12, 13, 14, 0, 1, 2}));
}

TEST(Executor, OutOfPlaceReadsTheInputAndFillsWhatItNeverWrote) {
  InProcessWorld world(2);
  std::vector<float> got;
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    const int r = ctx.rank();
    std::vector<float> input = {1, 2, 3, 4};
    if (r == 1) input = {100, 200, 300, 400};
    std::vector<float> data(4, -1.0f);  // undefined until written
    ProgramBuilder b(r, 2, /*from_input=*/true, 4);
    if (r == 0) {
      b.RecvReduce(1, Data(0, 2));  // data[0..1] = input[0..1] + rank 1's
    } else {
      b.Send(0, Data(0, 2));  // its input: nothing written yet
    }
    Program p = std::move(b).Finish();
    Executor e;
    e.Run(ctx.transport(), Args(p, data, &input));
    if (r == 0) got = data;
  }));
  EXPECT_EQ(got, (std::vector<float>{101, 202, 3, 4}));
}

TEST(Executor, APeerRunningAnotherCallIsAMismatchNamingIt) {
  InProcessWorld world(2);
  std::vector<std::exception_ptr> errors = RunRanks(world, [&](comm::Context& ctx) {
    const int r = ctx.rank();
    std::vector<float> data(8, 1.0f);
    ProgramBuilder b(r, 2);
    if (r == 0) b.Send(1, Data(0, 4));
    if (r == 1) b.Recv(0, Data(0, 4));
    Program p = std::move(b).Finish();
    Executor e;
    e.Run(ctx.transport(), Args(p, data, nullptr, /*signature=*/r == 0 ? 7 : 9));
  });
  ASSERT_TRUE(errors[1]) << "the receiver saw a message of another call";
  EXPECT_THAT(Message(errors[1]),
              HasSubstr("rank 1: test(8 x float32): peer 0 called this collective with other"));
  try {
    std::rethrow_exception(errors[1]);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMismatch) << e.what();
  }
}

// A transport's own message (a split's handshake, tag above kMaxUserTag) waiting from a peer is
// not that peer's collective: read as one it would have sequence 0 and another signature, and
// the first collective of a context, still waiting for the peer, was refused as a mismatch.
TEST(Executor, ATransportsOwnMessageIsNotTakenForAMismatchedCollective) {
  InProcessWorld world(2, {.eager = true});
  std::vector<std::exception_ptr> errors = RunRanks(world, [&](comm::Context& ctx) {
    if (ctx.rank() == 1) {
      const int color = 1;
      comm::Request r = ctx.transport().Isend(0, comm::kMaxUserTag + 2, &color, sizeof color);
      (void)r;  // eager: done
      return;   // and never joins the collective
    }
    std::vector<float> data(8, 1.0f);
    ProgramBuilder b(0, 2);
    b.Recv(1, Data(0, 4));
    Program p = std::move(b).Finish();
    Executor e;
    e.Run(ctx.transport(), Args(p, data, nullptr, /*signature=*/5, std::chrono::milliseconds(300)));
  });
  ASSERT_TRUE(errors[0]);
  EXPECT_THROW(std::rethrow_exception(errors[0]), TimeoutError) << Message(errors[0]);
}

TEST(Executor, APeerThatNeverCallsIsATimeoutNamingIt) {
  InProcessWorld world(2);
  std::vector<std::exception_ptr> errors = RunRanks(world, [&](comm::Context& ctx) {
    if (ctx.rank() == 1) return;  // never joins
    std::vector<float> data(8, 1.0f);
    ProgramBuilder b(0, 2);
    b.Recv(1, Data(0, 4));
    Program p = std::move(b).Finish();
    Executor e;
    e.Run(ctx.transport(), Args(p, data, nullptr, 1, std::chrono::milliseconds(300)));
  });
  ASSERT_TRUE(errors[0]);
  EXPECT_FALSE(errors[1]);
  EXPECT_THROW(std::rethrow_exception(errors[0]), TimeoutError);
  EXPECT_THAT(Message(errors[0]), HasSubstr("rank 0: test(8 x float32)"));
  EXPECT_THAT(Message(errors[0]), HasSubstr("peer 1"));
}

TEST(Executor, TagsCarryTheSequenceAndTheSignature) {
  const comm::Tag t = MakeTag(/*sequence=*/21, /*channel=*/3, /*index=*/5, /*signature=*/0x3abc);
  EXPECT_EQ(TagSequence(t), 21u);
  EXPECT_EQ(TagSignature(t), 0x3abcu & ((1u << kSignatureBits) - 1));
  EXPECT_NE(MakeTag(21, 3, 5, 0x3abc), MakeTag(21, 3, 6, 0x3abc)) << "the index tells messages apart";
  EXPECT_NE(MakeTag(21, 3, 5, 0x3abc), MakeTag(21, 4, 5, 0x3abc)) << "so does the channel";
}

}  // namespace
}  // namespace parasol::collective
