// Trains LDA on a corpus: threads within a process, documents split over processes, and the
// word-topic counts in word blocks that rotate around the processes (block_ring.h).
//
// An iteration is a document pass and a word pass of the sampler (mh_sampler.h) over the
// process's TokenLayout, one word block at a time. Threads: the process's documents are cut into
// one group per thread and each word block into one sub-block per thread; word group h of a block
// is its sub-block h. Each pass over a block runs one round per thread: in round r thread i
// samples the tile (document group i, sub-block (i + r) mod threads), so threads never share a
// document, a word or a token; topic totals are merged between rounds. Processes: at each step a
// process samples its documents' tokens of the block it holds, whose counts no other process
// changes meanwhile; the topic totals are summed over processes after every step. One process
// needs no word-topic counts at all while it trains (the layout holds the topics).
//
// Determinism: one process gives the same topics for the same seed and thread count, also across
// a checkpoint and --resume (random numbers are drawn per (seed, rank, thread, iteration, pass,
// sub-block)).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/word_topic.h"
#include "parasol/comm/context.h"

namespace parasol::apps::lda {

struct LdaOptions {
  LdaParams params;           // vocab_size is set from the corpus
  uint32_t iterations = 100;  // the iteration to train to (from 0, or from the checkpoint's)
  uint32_t threads = 1;
  // Several processes: word blocks, a multiple of the process count (each process holds
  // blocks / processes at a time); 0: two per process, so that handing a block on overlaps
  // sampling the next. One process: ignored.
  uint32_t blocks = 0;
  uint64_t seed = 1;
  uint32_t eval_every = 1;       // log-likelihood every this many iterations (and the last); 0: last only
  uint64_t dense_min_count = 0;  // words with at least this many tokens get dense rows (0: K / 4)
  std::string checkpoint_dir;    // write a checkpoint here every checkpoint_every iterations
  uint32_t checkpoint_every = 0;
  std::string resume_dir;
  // Held-out documents (in the corpus's word ids): their perplexity by document completion
  // (inference.h) at every evaluation, on rank 0.
  const Corpus* test_corpus = nullptr;
  uint32_t test_iterations = 20;  // fold-in sweeps per evaluation
  // Hyperparameter optimisation (dirichlet_fit.h), as Mallet's --optimize-interval: every this many
  // iterations after the first `optimize_burn_in`, an asymmetric alpha and a symmetric beta are fitted
  // to the current topics (0: never; the prior stays params.alpha, params.beta).
  uint32_t optimize_interval = 0;
  uint32_t optimize_burn_in = 50;
  std::chrono::milliseconds timeout_ms{300000};
  // LdaResult::doc_topics filled. A command that writes no document-topic output leaves them out:
  // at 200 M tokens and K = 10,000 they are 1.6 GB of pairs, made and sorted in 3 s.
  bool doc_topics = true;
};

struct IterationStats {
  uint32_t iteration = 0;     // iterations done
  double seconds = 0;         // training time so far (evaluation and checkpoints excluded)
  double tokens_per_sec = 0;  // this iteration, over all processes
  double loglik = 0;          // NaN when not evaluated this iteration
  double loglik_per_token = 0;
  double test_perplexity = 0;  // NaN when not evaluated (or no test corpus)
  double alpha_sum = 0;        // the hyperparameters in use at the end of this iteration
  double beta = 0;
  bool evaluated = false;
};

struct LdaResult {
  std::vector<IterationStats> history;  // every rank
  uint32_t first_iteration = 0;
  uint64_t tokens = 0;     // over all processes
  LdaParams params;        // the final hyperparameters (fitted ones with optimize_interval)
  double model_bytes = 0;  // rank 0: the final word-topic table (hybrid storage)
  double token_bytes = 0;  // the tokens' two orders, largest process
  double block_bytes = 0;  // several processes: word blocks held at once, largest process
  // Several processes, per iteration trained, each the slowest process's: seconds sampling, blocked
  // waiting for a word block (a transfer the sampling did not hide), and waiting for the other
  // processes' changes to the topic totals (totals_exchange.h);
  // and the bytes of word blocks a process handed on (each token's topic once, but the receiving
  // neighbour's own tokens' where their runs are long (block_ring.h): 2 bytes a token up to
  // K = 65,536, else 4).
  double sample_seconds = 0, block_wait_seconds = 0, totals_seconds = 0;
  double block_bytes_sent = 0;
  // The slowest process's seconds before the first iteration (laying the tokens out, their first
  // topics drawn or read from the checkpoint, the word blocks placed) and after the last (the
  // document-topic counts, the model gathered at rank 0): with the iterations' wall time and the
  // corpus's reading, where a whole command's time goes.
  double setup_seconds = 0, finish_seconds = 0;
  // Rank 0: the whole word-topic table and topic totals at the end (every rank: the totals).
  WordTopicTable model;
  std::vector<int64_t> totals;
  // This rank's documents [doc_begin, doc_end) of the corpus and (LdaOptions::doc_topics) their
  // topic counts, sparse.
  size_t doc_begin = 0, doc_end = 0;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> doc_topics;
};

// The sampler `asked` means for a model of `topics` topics over `vocab_size` words trained by
// `processes` processes. kAuto: collapsed Gibbs for one process at K <= kGibbsMostTopics whose dense
// counts take at most kGibbsMostBytes (there its sweep costs about what an MH sweep does and mixes
// more: docs/lda.md), MH otherwise. Throws InvalidArgumentError for Gibbs under several processes or
// with counts over kGibbsMostBytes x 4.
inline constexpr uint32_t kGibbsMostTopics = 256;
inline constexpr uint64_t kGibbsMostBytes = uint64_t{1} << 30;
SamplerKind ChooseSampler(SamplerKind asked, uint32_t topics, size_t vocab_size, int processes);

// Collective over ctx: every process passes the same corpus and options. `on_iteration` runs on
// rank 0 after each iteration. Throws InvalidArgumentError for bad options, ParseError/IoError
// for a bad checkpoint, MismatchError when processes were given different corpora or options,
// and an error naming rank and peer when a process fails or stops answering.
LdaResult TrainLda(comm::Context& ctx, const Corpus& corpus, const LdaOptions& options,
                   const std::function<void(const IterationStats&)>& on_iteration = {});

}  // namespace parasol::apps::lda
