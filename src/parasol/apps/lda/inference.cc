#include "parasol/apps/lda/inference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "parasol/apps/lda/fold_in_sampler.h"
#include "parasol/core/error.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::lda {

std::vector<DocTopics> FoldIn(const LdaModel& model, const Corpus& docs, const InferOptions& o) {
  if (docs.vocab.size() != model.vocab.size()) {
    throw InvalidArgumentError(
        fmt::format("documents use {} words, the model {}", docs.vocab.size(), model.vocab.size()));
  }
  const LdaParams p = model.Params(o.mh_steps);
  Rng init(o.seed, 0, 0xffffffff, 0);
  TokenStore ts = TokenStore::Build(docs, p.topics, init);
  std::vector<bool> present(model.vocab.size(), false);
  std::vector<uint32_t> words;
  for (uint32_t w : ts.words) {
    if (!present[w] && model.table.resident(w)) present[w] = true, words.push_back(w);
  }
  const uint32_t threads = std::max<uint32_t>(1, o.threads);
  ThreadPool pool(threads);
  std::vector<size_t> cut;
  for (uint32_t t = 0; t <= threads; ++t) cut.push_back(ts.num_docs() * t / threads);
  // The model is only read, so threads share it; each has its own alias tables.
  pool.ParallelFor(0, threads, [&](size_t i) {
    FoldInSampler s(p, model.table, model.totals, words);
    for (uint32_t it = 0; it < o.iterations; ++it) {
      Rng rng(o.seed, 0, i, it);
      s.Sample(ts, cut[i], cut[i + 1], model.table, rng);
    }
  });
  std::vector<DocTopics> out(ts.num_docs());
  std::vector<uint32_t> scratch(p.topics, 0);
  for (size_t d = 0; d < ts.num_docs(); ++d) out[d] = ts.TopicCounts(d, scratch);
  return out;
}

double HeldOut::perplexity() const {
  return tokens == 0 ? std::numeric_limits<double>::quiet_NaN()
                     : std::exp(-log_likelihood / static_cast<double>(tokens));
}

HeldOut DocumentCompletion(const LdaModel& model, const Corpus& docs, const InferOptions& o) {
  Corpus observed;
  observed.vocab = docs.vocab;
  std::vector<std::vector<uint32_t>> held(docs.num_docs());
  std::vector<uint32_t> half;
  for (size_t d = 0; d < docs.num_docs(); ++d) {
    auto words = docs.doc(d);
    half.clear();
    if (words.size() >= 2) {
      for (size_t i = 0; i < words.size(); ++i) (i % 2 == 0 ? half : held[d]).push_back(words[i]);
    }
    observed.AddDocument(docs.doc_names[d], half);
  }
  const std::vector<DocTopics> theta = FoldIn(model, observed, o);
  const uint32_t k = model.topics;
  const double vbeta = model.beta * static_cast<double>(model.vocab.size());
  const std::vector<double> alpha = model.Params().Alphas();
  std::vector<double> inv(k);  // 1 / (n_k + V beta)
  double smooth = 0;           // sum_k alpha_k beta / (n_k + V beta)
  for (uint32_t t = 0; t < k; ++t) {
    inv[t] = 1.0 / (static_cast<double>(model.totals[t]) + vbeta);
    smooth += alpha[t] * model.beta * inv[t];
  }
  const double alpha_sum = model.Params().AlphaSum();
  HeldOut out;
  for (size_t d = 0; d < docs.num_docs(); ++d) {
    if (held[d].empty()) continue;
    uint64_t n = 0;
    for (auto [t, c] : theta[d]) n += c;
    const double denom = static_cast<double>(n) + alpha_sum;
    for (uint32_t w : held[d]) {
      // sum_k (n_dk + alpha_k) phi_kw: alpha_k phi_kw over every topic, n_dk phi_kw over the
      // document's own.
      double p = smooth;
      if (model.table.resident(w))
        model.table.ForEachNonzero(w, [&](uint32_t t, int32_t c) { p += alpha[t] * c * inv[t]; });
      for (auto [t, c] : theta[d])
        p += c * (model.table.resident(w) ? model.table.Get(w, t) + model.beta : model.beta) * inv[t];
      out.log_likelihood += std::log(p / denom);
      ++out.tokens;
    }
  }
  return out;
}

}  // namespace parasol::apps::lda
