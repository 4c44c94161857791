// Folding in: topic proportions of new documents under a trained model, by the MH sampler with
// the model's word-topic counts held fixed (only the documents' own counts change).
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/model_io.h"

namespace parasol::apps::lda {

struct InferOptions {
  uint32_t iterations = 50;
  uint32_t mh_steps = 2;
  uint32_t threads = 1;
  uint64_t seed = 1;
};

// `docs` must use the model's word ids (ReadText with fixed_vocab, or MapToVocabulary).
std::vector<DocTopics> FoldIn(const LdaModel& model, const Corpus& docs, const InferOptions& options);

struct HeldOut {
  double log_likelihood = 0;  // natural log, of the held-out tokens
  uint64_t tokens = 0;        // held-out tokens scored
  double perplexity() const;  // exp(-log_likelihood / tokens)
};
// Held-out perplexity by document completion (Wallach et al., 2009): each document's tokens at
// even positions are folded in (options.iterations sweeps), giving theta_d = (n_dk + alpha_k) /
// (N_d + sum alpha); its tokens at odd positions are then scored by log sum_k theta_dk phi_kw, phi
// the model's (n_wk + beta) / (n_k + V beta). Documents with fewer than two tokens are skipped.
HeldOut DocumentCompletion(const LdaModel& model, const Corpus& docs, const InferOptions& options);

}  // namespace parasol::apps::lda
