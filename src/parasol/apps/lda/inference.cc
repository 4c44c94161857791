#include "parasol/apps/lda/inference.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "parasol/apps/lda/fold_in_sampler.h"
#include "parasol/core/error.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::lda {

std::vector<DocTopics> FoldIn(const LdaModel& model, const Corpus& docs, const InferOptions& o) {
  if (docs.vocab.size() != model.vocab.size()) {
    throw InvalidArgumentError(fmt::format("documents use {} words, the model {}", docs.vocab.size(), model.vocab.size()));
  }
  LdaParams p{.topics = model.topics, .alpha = model.alpha, .beta = model.beta,
              .vocab_size = static_cast<uint32_t>(model.vocab.size()), .mh_steps = o.mh_steps};
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

}  // namespace parasol::apps::lda
