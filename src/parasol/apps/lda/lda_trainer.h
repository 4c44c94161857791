// Trains LDA on a corpus: threads within a process, data parallelism over documents across
// processes with the word-topic counts on the parameter server under SSP, and word blocks.
//
// Parallel layout. The vocabulary is cut into `blocks` blocks (balanced by tokens), each block
// into one sub-block per thread. An iteration visits the blocks in turn; for block b a process
// loads only b's rows (so the resident model is a block, not the whole table), then runs one
// round per thread: in round r thread i samples its documents' tokens whose words lie in
// sub-block (i + r) mod threads of b. Threads never share a word row or a document; topic totals
// are merged between rounds. Across processes each block ends with the process's changes sent to
// the parameter server and a clock, so reads of a block see every other process's changes up to
// `staleness` clocks old.
//
// Determinism: one process gives the same topics for the same seed and thread count, also across
// a checkpoint and --resume (random numbers are drawn per (seed, rank, thread, iteration)).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/sampler.h"
#include "parasol/apps/lda/word_topic.h"
#include "parasol/comm/context.h"

namespace parasol::apps::lda {

struct LdaOptions {
  LdaParams params;           // vocab_size is set from the corpus
  uint32_t iterations = 100;  // the iteration to train to (from 0, or from the checkpoint's)
  uint32_t threads = 1;
  // Vocabulary blocks (model slices) per iteration; 0: one per process, so that at each step
  // every process holds a different block (the rotation of model-parallel LDA).
  uint32_t blocks = 0;
  uint32_t staleness = 1;     // SSP bound of the word-topic table across processes
  uint64_t seed = 1;
  uint32_t eval_every = 1;    // log-likelihood every this many iterations (and the last); 0: last only
  uint64_t dense_min_count = 0;  // words with at least this many tokens get dense rows (0: K / 4)
  std::string checkpoint_dir;    // write a checkpoint here every checkpoint_every iterations
  uint32_t checkpoint_every = 0;
  std::string resume_dir;
  std::chrono::milliseconds timeout_ms{300000};
};

struct IterationStats {
  uint32_t iteration = 0;        // iterations done
  double seconds = 0;            // training time so far (evaluation and checkpoints excluded)
  double tokens_per_sec = 0;     // this iteration, over all processes
  double loglik = 0;             // NaN when not evaluated this iteration
  double loglik_per_token = 0;
  bool evaluated = false;
};

struct LdaResult {
  std::vector<IterationStats> history;  // every rank
  uint32_t first_iteration = 0;
  uint64_t tokens = 0;                  // over all processes
  double model_bytes = 0;               // resident word-topic storage, largest process
  // Rank 0: the whole word-topic table and topic totals at the end.
  WordTopicTable model;
  std::vector<int64_t> totals;
  // This rank's documents [doc_begin, doc_end) of the corpus and their topic counts, sparse.
  size_t doc_begin = 0, doc_end = 0;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> doc_topics;
};

// Collective over ctx: every process passes the same corpus and options. `on_iteration` runs on
// rank 0 after each iteration. Throws InvalidArgumentError for bad options, ParseError/IoError
// for a bad checkpoint, and the parameter server's errors (naming rank and peer) if a process
// fails or stops answering.
LdaResult TrainLda(comm::Context& ctx, const Corpus& corpus, const LdaOptions& options,
                   const std::function<void(const IterationStats&)>& on_iteration = {});

}  // namespace parasol::apps::lda
