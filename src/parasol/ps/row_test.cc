// A row as the parameter server moves it: dense and sparse rows add, clear and measure (L1) as
// their values say; the wire form reads back to the same row; a row that does not fit its table
// (another width, a column past it, the reserved id, a count longer than the message) is an
// error naming the sender, never a write outside the row.
#include "parasol/ps/row.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "parasol/core/wire.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;

std::string DecodeError(const std::vector<std::byte>& bytes, RowKind kind, uint64_t width) {
  WireReader r(bytes.data(), bytes.size(), /*src=*/3);
  try {
    Row::Decode(r, kind, DType::kFloat32, width);
  } catch (const MalformedMessage& e) {
    return e.what();
  }
  return "";
}

TEST(Row, DenseAndSparseRowsAddClearAndMeasure) {
  Row dense(RowKind::kDense, DType::kFloat64, 3), delta(RowKind::kDense, DType::kFloat64, 3);
  dense.Add<double>(0, 1.5);
  delta.Add<double>(0, -4.0);
  delta.Add<double>(2, 2.0);
  dense.AddRow(delta);
  EXPECT_EQ(dense.Get<double>(0), -2.5);
  EXPECT_EQ(dense.Get<double>(2), 2.0);
  EXPECT_EQ(dense.L1(), 4.5);
  EXPECT_EQ(dense.entries(), 3u);
  dense.Clear();
  EXPECT_EQ(dense.L1(), 0.0);
  EXPECT_EQ(dense.entries(), 3u) << "a dense row keeps its width";

  Row sparse(RowKind::kSparse, DType::kInt64, 0);
  sparse.Add<int64_t>(1000000007, 5);
  sparse.Add<int64_t>(3, -2);
  EXPECT_EQ(sparse.Get<int64_t>(1000000007), 5);
  EXPECT_EQ(sparse.Get<int64_t>(4), 0) << "an absent column reads as zero";
  EXPECT_EQ(sparse.entries(), 2u);
  EXPECT_EQ(sparse.L1(), 7.0);
  sparse.Clear();
  EXPECT_EQ(sparse.entries(), 0u);
}

TEST(Row, TheWireFormReadsBackToTheSameRow) {
  Row dense(RowKind::kDense, DType::kFloat32, 4);
  for (uint64_t c = 0; c < 4; ++c) dense.Add<float>(c, 0.25f * static_cast<float>(c) - 1);
  Row sparse(RowKind::kSparse, DType::kFloat32, 100);
  sparse.Add<float>(99, 3.5f);
  sparse.Add<float>(7, -1.0f);
  WireWriter w;
  dense.Encode(w);
  sparse.Encode(w);
  const std::vector<std::byte> bytes = w.Take();
  WireReader r(bytes.data(), bytes.size(), 0);
  const Row d = Row::Decode(r, RowKind::kDense, DType::kFloat32, 4);
  const Row s = Row::Decode(r, RowKind::kSparse, DType::kFloat32, 100);
  EXPECT_TRUE(r.done());
  for (uint64_t c = 0; c < 4; ++c) EXPECT_EQ(d.Get<float>(c), dense.Get<float>(c));
  EXPECT_EQ(s.Get<float>(99), 3.5f);
  EXPECT_EQ(s.Get<float>(7), -1.0f);
  EXPECT_EQ(s.entries(), 2u);

  Row into(RowKind::kDense, DType::kFloat32, 4);
  WireReader again(bytes.data(), bytes.size(), 0);
  into.DecodeDenseInPlace(again);
  EXPECT_EQ(into.Get<float>(3), dense.Get<float>(3));
}

TEST(Row, ARowThatDoesNotFitItsTableIsAnErrorNamingTheSender) {
  Row dense(RowKind::kDense, DType::kFloat32, 4);
  WireWriter w;
  dense.Encode(w);
  EXPECT_THAT(DecodeError(w.Take(), RowKind::kDense, 5),
              HasSubstr("message from rank 3 (24 bytes): dense row of 4 values where the table has 5"));

  Row wide(RowKind::kSparse, DType::kFloat32, 0);
  wide.Add<float>(50, 1.0f);
  WireWriter ws;
  wide.Encode(ws);
  EXPECT_THAT(DecodeError(ws.Take(), RowKind::kSparse, 10), HasSubstr("column 50 of a table of width 10"));

  WireWriter reserved;
  reserved.Put<uint64_t>(1);
  reserved.Put<uint64_t>(~uint64_t{0});
  reserved.Put<float>(1.0f);
  EXPECT_THAT(DecodeError(reserved.Take(), RowKind::kSparse, 0), HasSubstr("reserved column id"));

  WireWriter long_count;  // 2^40 entries claimed, none sent: refused before any is read
  long_count.Put<uint64_t>(uint64_t{1} << 40);
  EXPECT_THAT(DecodeError(long_count.Take(), RowKind::kSparse, 0),
              HasSubstr("sparse row longer than the message"));
}

}  // namespace
}  // namespace parasol::ps
