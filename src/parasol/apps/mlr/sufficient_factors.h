// The sufficient factors a rank sends for one step of multiclass logistic regression: per sample,
// u = softmax - onehot (K doubles) and v = x (its sparse features). Lossless: ids go as varint
// gaps between ascending ids (one or two bytes where a double took eight), u and the values as
// doubles, so every rank rebuilds bit for bit the update the parameter server would apply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "parasol/core/wire.h"

namespace parasol::apps::mlr {

// Builds one rank's block for a step. Not thread-safe.
class FactorWriter {
 public:
  explicit FactorWriter(size_t classes) : classes_(classes) {}

  // u holds `classes` values; ids are strictly ascending (InvalidArgumentError otherwise) and
  // match values one to one.
  void Add(std::span<const double> u, std::span<const uint32_t> ids, std::span<const double> values);
  // The block: the sample count, then the samples, padded with zero bytes to whole 8-byte words
  // (the unit the all-gather moves). Resets the writer.
  std::vector<int64_t> Finish();

 private:
  size_t classes_;
  uint64_t samples_ = 0;
  WireWriter body_;
};

// One decoded sample; the spans point into the reader's buffers and live until the next Next().
struct SampleFactors {
  std::span<const double> u;
  std::span<const uint32_t> ids;
  std::span<const double> values;
};

// Reads the blocks of every rank back to back (as the all-gather leaves them), sample by sample.
// A block that does not decode throws MalformedMessage naming `src` (the gathering rank).
class FactorReader {
 public:
  FactorReader(std::span<const int64_t> words, size_t classes, int src);
  // False once every block is read.
  bool Next(SampleFactors* f);

 private:
  WireReader in_;
  size_t classes_;
  uint64_t left_ = 0;  // samples left in the current block
  std::vector<double> u_, values_;
  std::vector<uint32_t> ids_;
};

}  // namespace parasol::apps::mlr
