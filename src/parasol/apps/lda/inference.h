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

}  // namespace parasol::apps::lda
