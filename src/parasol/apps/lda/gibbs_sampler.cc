#include "parasol/apps/lda/gibbs_sampler.h"

#include <algorithm>

#include "parasol/core/cpu_dispatch.h"

namespace parasol::apps::lda {
namespace {

// The draw walks blocks of topics, summing each as it passes, then the topics of the block it lands
// in: about K / 16 block sums and 4 steps, where a prefix sum over K would be a chain of K dependent
// additions, costing more than the weights. A block is one AVX2 vector.
constexpr uint32_t kBlock = 8;
// How many tokens ahead a word's row is asked for.
constexpr uint32_t kAhead = 3;
using Floats = float __attribute__((vector_size(kBlock * sizeof(float))));
using Ints = int32_t __attribute__((vector_size(kBlock * sizeof(int32_t))));

// Writes the weights doc_k (n_wk + beta) of `blocks` blocks of topics to w and returns their
// total; doc_k = (n_dk + alpha_k) / (n_k + V beta) is the document's factor, which changes only
// where a token moves. Floats: the weights need no more precision than the counts' ratios give,
// and twice as many fit a vector.
PARASOL_WITH_AVX2_CLONE float Weigh(const float* __restrict doc, const int32_t* __restrict nwk, float beta,
                                    uint32_t blocks, float* __restrict w) {
  Floats all{};
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint32_t o = b * kBlock;
    Ints nw;
    Floats d;
    __builtin_memcpy(&nw, nwk + o, sizeof(nw));
    __builtin_memcpy(&d, doc + o, sizeof(d));
    const Floats x = d * (__builtin_convertvector(nw, Floats) + beta);
    __builtin_memcpy(w + o, &x, sizeof(x));
    all += x;
  }
  return ((all[0] + all[1]) + (all[2] + all[3])) + ((all[4] + all[5]) + (all[6] + all[7]));
}

// The document's factors of every topic (the padding's are 0).
PARASOL_WITH_AVX2_CLONE void DocFactors(const int32_t* __restrict ndk, const float* __restrict alpha,
                                        const float* __restrict inv, uint32_t n, float* __restrict doc) {
  for (uint32_t k = 0; k < n; ++k) doc[k] = (static_cast<float>(ndk[k]) + alpha[k]) * inv[k];
}

float BlockSum(const float* x) { return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])); }

}  // namespace

GibbsSampler::GibbsSampler(const LdaParams& params)
    : p_(params),
      padded_(static_cast<uint32_t>(Stride(params.topics))),
      beta_(static_cast<float>(params.beta)),
      vbeta_(params.beta * params.vocab_size),
      ndk_(padded_, 0),
      inv_nk_(padded_, 0),  // the padding stays 0: its weights are 0
      inv_less_(padded_, 0),
      doc_(padded_, 0),
      weights_(padded_, 0) {
  alpha_.assign(padded_, 0);
  for (uint32_t k = 0; k < params.topics; ++k) alpha_[k] = static_cast<float>(params.Alpha(k));
}

size_t GibbsSampler::Stride(uint32_t topics) { return (size_t{topics} + kBlock - 1) / kBlock * kBlock; }

HugePageVector<int32_t> GibbsSampler::CountWords(const TokenLayout& layout, uint32_t topics) {
  const size_t stride = Stride(topics);
  HugePageVector<int32_t> nwk(layout.num_words() * stride, 0);
  layout.WithTopics([&](const auto*, const auto* wz) {
    for (uint32_t w = 0; w < layout.num_words(); ++w) {
      for (uint32_t j = layout.word_begin(w); j < layout.word_end(w); ++j) ++nwk[w * stride + wz[j]];
    }
  });
  return nwk;
}

void GibbsSampler::BeginRound(std::span<const int64_t> totals) {
  nk_.assign(totals.begin(), totals.end());
  start_ = nk_;
  for (uint32_t k = 0; k < p_.topics; ++k) Invert(k);
}

std::vector<int64_t> GibbsSampler::TotalsDelta() const {
  std::vector<int64_t> d(nk_.size());
  for (size_t k = 0; k < d.size(); ++k) d[k] = nk_[k] - start_[k];
  return d;
}

uint32_t GibbsSampler::Draw(const int32_t* nwk, double u) {
  const uint32_t blocks = padded_ / kBlock;
  const float* w = weights_.data();
  const float total = Weigh(doc_.data(), nwk, beta_, blocks, weights_.data());
  auto r = static_cast<float>(u * total);
  uint32_t b = 0;
  for (float s; b + 1 < blocks && r >= (s = BlockSum(w + b * kBlock)); ++b) r -= s;
  uint32_t t = b * kBlock;
  for (const uint32_t end = t + kBlock - 1; t < end && r >= w[t]; ++t) r -= w[t];
  // Rounding can carry r past the block's last weight, onto the padding: the last topic then.
  return std::min(t, p_.topics - 1);
}

void GibbsSampler::DocPass(TokenLayout& layout, uint32_t doc_group, uint32_t word_group,
                           std::span<int32_t> nwk, Rng& rng) {
  layout.WithTopics([&](auto* dz, auto* wz) { DocPass(layout, dz, wz, doc_group, word_group, nwk, rng); });
}

template <typename Z>
void GibbsSampler::DocPass(const TokenLayout& layout, Z* dz, Z* wz, uint32_t doc_group, uint32_t word_group,
                           std::span<int32_t> nwk, Rng& rng) {
  const uint32_t* words = layout.doc_words();
  const uint32_t* cross = layout.doc_cross();
  const size_t stride = padded_;
  for (size_t d = layout.group_doc_begin(doc_group); d < layout.group_doc_end(doc_group); ++d) {
    const uint32_t b = layout.doc_group_begin(d, word_group), e = layout.doc_group_end(d, word_group);
    if (b == e) continue;
    for (uint32_t i = layout.doc_begin(d); i < layout.doc_end(d); ++i) ++ndk_[dz[i]];
    DocFactors(ndk_.data(), alpha_.data(), inv_nk_.data(), padded_, doc_.data());
    for (uint32_t i = b; i < e; ++i) {
      if (i + kAhead < e) {  // a coming token's row, a cache miss otherwise
        const int32_t* next = nwk.data() + words[i + kAhead] * stride;
        for (size_t o = 0; o < stride; o += 16) __builtin_prefetch(next + o);
      }
      const uint32_t s0 = dz[i];
      int32_t* row = nwk.data() + words[i] * stride;
      --row[s0], --ndk_[s0];  // the token's own counts out, n_k's too
      doc_[s0] = DocFactor(s0, inv_less_[s0]);
      const uint32_t s = Draw(row, rng.Uniform());
      ++row[s], ++ndk_[s];
      if (s != s0) {
        AddTotal(s0, -1);
        AddTotal(s, 1);
        doc_[s] = DocFactor(s, inv_nk_[s]);
        dz[i] = static_cast<Z>(s);
        wz[cross[i]] = static_cast<Z>(s);
      }
      doc_[s0] = DocFactor(s0, inv_nk_[s0]);
    }
    for (uint32_t i = layout.doc_begin(d); i < layout.doc_end(d); ++i) ndk_[dz[i]] = 0;
  }
}

}  // namespace parasol::apps::lda
