// Topic coherence: how often a topic's top words appear in the same documents of a reference corpus
// (the training corpus), the figure topic modellers use to compare models and choose K.
//
// With D(w) the documents holding word w, D(w, w') those holding both, N the documents, and a topic's
// top words v_1 .. v_M from the most probable:
//   UMass (Mimno et al., 2011): the sum over m > l of log((D(v_m, v_l) + 1) / D(v_l)), at most 0.
//   NPMI (Bouma, 2009, with the document as the context, as Lau et al., 2014): the mean over pairs of
//     log(P(a, b) / (P(a) P(b))) / -log P(a, b), with P(a) = D(a) / N and P(a, b) = D(a, b) / N;
//     -1 for a pair never together, 1 for a pair in every document; in [-1, 1].
// A topic with fewer than two words has neither (NaN); the means leave it out.
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/apps/lda/corpus.h"

namespace parasol::apps::lda {

struct Coherence {
  std::vector<double> umass, npmi;  // per topic
  double mean_umass = 0, mean_npmi = 0;
};

// `top_words[k]`: topic k's words (ids of the corpus's vocabulary), the most probable first.
// Time: one pass over the corpus plus, per distinct pair of top words, a merge of the two words'
// document lists, or an AND of their bitsets (words in more than one document in 32).
Coherence TopicCoherence(const Corpus& corpus, const std::vector<std::vector<uint32_t>>& top_words);

}  // namespace parasol::apps::lda
