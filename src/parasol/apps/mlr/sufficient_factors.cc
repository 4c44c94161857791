#include "parasol/apps/mlr/sufficient_factors.h"

#include <cstring>
#include <limits>

#include "parasol/core/error.h"

namespace parasol::apps::mlr {

void FactorWriter::Add(std::span<const double> u, std::span<const uint32_t> ids,
                       std::span<const double> values) {
  if (u.size() != classes_ || ids.size() != values.size())
    throw InvalidArgumentError("sufficient factors: u or the values have the wrong length");
  body_.PutBytes(u.data(), u.size_bytes());
  body_.PutVarint(ids.size());
  for (size_t e = 0; e < ids.size(); ++e) {
    if (e > 0 && ids[e] <= ids[e - 1])
      throw InvalidArgumentError("sufficient factors: feature ids must be strictly ascending");
    body_.PutVarint(e == 0 ? ids[0] : ids[e] - ids[e - 1]);
  }
  body_.PutBytes(values.data(), values.size_bytes());
  ++samples_;
}

std::vector<int64_t> FactorWriter::Finish() {
  WireWriter head;
  head.PutVarint(samples_);
  const size_t bytes = head.size() + body_.size();
  std::vector<int64_t> words((bytes + 7) / 8, 0);
  auto* out = reinterpret_cast<std::byte*>(words.data());
  std::memcpy(out, head.bytes().data(), head.size());
  if (body_.size()) std::memcpy(out + head.size(), body_.bytes().data(), body_.size());
  body_.bytes().clear();
  samples_ = 0;
  return words;
}

FactorReader::FactorReader(std::span<const int64_t> words, size_t classes, int src)
    : in_(reinterpret_cast<const std::byte*>(words.data()), words.size_bytes(), src),
      classes_(classes),
      u_(classes) {}

bool FactorReader::Next(SampleFactors* f) {
  while (left_ == 0) {
    // A block ends on a word boundary: skip its padding, then read the next block's count.
    const size_t pad = in_.remaining() % 8;
    for (size_t i = 0; i < pad; ++i)
      if (in_.Get<uint8_t>() != 0) in_.Fail("sufficient factors: padding that is not zero");
    if (in_.done()) return false;
    left_ = in_.GetVarint();
  }
  in_.GetBytes(u_.data(), classes_ * sizeof(double));
  const uint64_t nnz = in_.GetVarint();
  // Each id takes one byte at least: a count beyond the bytes left is malformed, not an allocation.
  if (nnz > in_.remaining()) in_.Fail("sufficient factors: more features than bytes");
  ids_.resize(nnz);
  uint64_t id = 0;
  for (uint64_t e = 0; e < nnz; ++e) {
    const uint64_t gap = in_.GetVarint();
    if (e > 0 && gap == 0) in_.Fail("sufficient factors: feature ids not ascending");
    id += gap;
    if (id > std::numeric_limits<uint32_t>::max()) in_.Fail("sufficient factors: a feature id past 32 bits");
    ids_[e] = static_cast<uint32_t>(id);
  }
  values_.resize(nnz);
  in_.GetBytes(values_.data(), nnz * sizeof(double));
  --left_;
  *f = SampleFactors{u_, ids_, values_};
  return true;
}

}  // namespace parasol::apps::mlr
