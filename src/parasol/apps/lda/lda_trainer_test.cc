// The trainer: threads, processes under SSP and word blocks reach the single-thread likelihood;
// checkpoints resume to the same state; folding in new documents finds their topics.
#include "parasol/apps/lda/lda_trainer.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/apps/lda/inference.h"
#include "parasol/apps/lda/lda_checkpoint.h"
#include "parasol/apps/lda/lda_testing.h"
#include "parasol/comm/testing.h"
#include "parasol/core/clock.h"
#include "parasol/core/env.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::lda {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const Corpus& Ap() {
  static const Corpus c = [] {
    Corpus ap = ReadCorpus(PARASOL_DATA_DIR "/ap/ap.dat", CorpusFormat::kLdac, {});
    Corpus part;
    part.vocab = ap.vocab;
    for (size_t d = 0; d < 800; ++d) part.AddDocument(ap.doc_names[d], ap.doc(d));
    return part;
  }();
  return c;
}

LdaOptions ApOptions() {
  LdaOptions o;
  o.params = {.topics = 20, .alpha = 50.0 / 20, .beta = 0.01, .mh_steps = 2};
  o.iterations = 60;
  o.eval_every = 0;
  o.seed = 5;
  return o;
}

// With `late_starter`, the last rank starts only once the others wait for a message (for it).
std::vector<LdaResult> TrainOnRanks(int ranks, const Corpus& c, const LdaOptions& o,
                                    bool late_starter = false) {
  comm::InProcessWorld world(ranks);
  std::vector<LdaResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    if (late_starter && ctx.rank() == ranks - 1) {
      comm::testing::WaitUntil([&] { return world.waiting() >= ranks - 1; }, "the other ranks waiting");
    }
    results[static_cast<size_t>(ctx.rank())] = TrainLda(ctx, c, o);
  });
  comm::testing::ExpectNoErrors(errors);
  return results;
}

// The first rank's error message ("" if every rank succeeded).
std::string ErrorOf(int ranks, const Corpus& c, const LdaOptions& o) {
  comm::InProcessWorld world(ranks);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainLda(ctx, c, o); });
  for (const auto& e : errors) {
    if (e) return comm::testing::Message(e);
  }
  return "";
}

double Final(const LdaResult& r) { return r.history.back().loglik_per_token; }

TEST(LdaTrainer, ThreadsAreDeterministicAndMatchOneThread) {
  LdaOptions o = ApOptions();
  double one = Final(TrainOnRanks(1, Ap(), o)[0]);
  o.threads = 2;
  LdaResult a = TrainOnRanks(1, Ap(), o)[0], b = TrainOnRanks(1, Ap(), o)[0];
  EXPECT_EQ(Final(a), Final(b));  // same seed and threads: the same chain
  EXPECT_EQ(a.doc_topics, b.doc_topics);
  EXPECT_LT(std::fabs(Final(a) - one), 0.01 * std::fabs(one)) << Final(a) << " vs " << one;
  EXPECT_TRUE(std::isnan(a.history.front().loglik));  // evaluated at the end only
}

// The collapsed Gibbs sampler on threads: the same seed and threads give the same chain, and every
// token is counted once (the tiles' rounds share the word rows and the topic totals).
TEST(LdaTrainer, GibbsOnThreadsIsDeterministic) {
  LdaOptions o = ApOptions();
  o.iterations = 10;
  o.params.sampler = SamplerKind::kGibbs;
  o.threads = 2;
  LdaResult a = TrainOnRanks(1, Ap(), o)[0], b = TrainOnRanks(1, Ap(), o)[0];
  EXPECT_EQ(Final(a), Final(b));
  EXPECT_EQ(a.doc_topics, b.doc_topics);
  int64_t tokens = 0;
  for (int64_t t : a.totals) tokens += t;
  EXPECT_EQ(tokens, static_cast<int64_t>(Ap().num_tokens()));
}

// After the same iterations, two threads end within 1% of one, and one within 1% of the MH
// sampler (both sample one posterior).
TEST(LdaTrainer, GibbsMatchesOneThreadAndTheMhSampler) {
  LdaOptions o = ApOptions();
  const double mh = Final(TrainOnRanks(1, Ap(), o)[0]);
  o.params.sampler = SamplerKind::kGibbs;
  const double one = Final(TrainOnRanks(1, Ap(), o)[0]);
  o.threads = 2;
  const double two = Final(TrainOnRanks(1, Ap(), o)[0]);
  EXPECT_LT(std::fabs(two - one), 0.01 * std::fabs(one)) << two << " vs " << one;
  EXPECT_LT(std::fabs(one - mh), 0.01 * std::fabs(mh)) << "Gibbs " << one << " against MH " << mh;
}

TEST(ChooseSampler, AutoTakesGibbsForOneProcessAtSmallKOnly) {
  using enum SamplerKind;
  EXPECT_EQ(ChooseSampler(kAuto, 100, 50000, 1), kGibbs);
  EXPECT_EQ(ChooseSampler(kAuto, kGibbsMostTopics, 50000, 1), kGibbs);
  EXPECT_EQ(ChooseSampler(kAuto, kGibbsMostTopics + 1, 50000, 1), kMh);
  EXPECT_EQ(ChooseSampler(kAuto, 100, 50000, 2), kMh);
  EXPECT_EQ(ChooseSampler(kAuto, 100, 5000000, 1), kMh);  // 5 M words x 104 counts: 2 GB
  EXPECT_EQ(ChooseSampler(kMh, 100, 50000, 1), kMh);
  EXPECT_EQ(ChooseSampler(kGibbs, 1000, 50000, 1), kGibbs);
  EXPECT_THAT([] { ChooseSampler(kGibbs, 100, 50000, 2); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("one process")));
  EXPECT_THAT([] { ChooseSampler(kGibbs, 1u << 20, 50000, 1); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("use mh")));
}

// The bytes of word blocks the busiest rank sends an iteration at K < 65,536 (2 bytes a topic)
// when blocks travel without their receivers' tokens: each block is handed on once, without the
// receiving left neighbour's tokens, so rank p sends every token but rank p - 1's.
double SentWithoutReceivers(const Corpus& c, const std::vector<LdaResult>& ranks) {
  uint64_t fewest = c.num_tokens();
  for (const LdaResult& r : ranks)
    fewest = std::min(fewest, c.doc_offsets[r.doc_end] - c.doc_offsets[r.doc_begin]);
  return 2.0 * static_cast<double>(c.num_tokens() - fewest);
}

// 2 and 4 processes (in-process ranks, one starting late), word blocks rotating around them, end
// within 1% of one process after the same iterations; so do 3 blocks per process with 2 threads
// each. Every rank reports the global figure, and the gathered model holds every token.
TEST(LdaTrainer, ProcessesMatchOneProcess) {
  LdaOptions o = ApOptions();
  o.iterations = 100;
  double one = Final(TrainOnRanks(1, Ap(), o)[0]);
  for (int ranks : {2, 4}) {
    auto rs = TrainOnRanks(ranks, Ap(), o, /*late_starter=*/true);
    double many = Final(rs[0]);
    std::cout << ranks << " ranks: " << many << " vs " << one << " in one process\n";
    EXPECT_LT(std::fabs(many - one), 0.01 * std::fabs(one)) << ranks << " ranks: " << many << " vs " << one;
    for (const auto& r : rs) EXPECT_EQ(Final(r), many);  // every rank reports the global figure
    int64_t tokens = 0;
    for (int64_t t : rs[0].totals) tokens += t;
    EXPECT_EQ(tokens, static_cast<int64_t>(Ap().num_tokens()));
  }
  o.blocks = 6;
  o.threads = 2;
  auto rs = TrainOnRanks(2, Ap(), o);
  EXPECT_LT(std::fabs(Final(rs[0]) - one), 0.01 * std::fabs(one))
      << "blocks: " << Final(rs[0]) << " vs " << one;
  // Four processes with two blocks each hold at most three of the eight blocks at a time (a
  // block: 4 bytes per token of its words).
  o = ApOptions();
  o.iterations = 2;
  const double all_blocks = 4.0 * static_cast<double>(Ap().num_tokens());
  const double all_packed = 2.0 * static_cast<double>(Ap().num_tokens());  // K < 65,536: 2 bytes a topic
  const std::vector<LdaResult> fours = TrainOnRanks(4, Ap(), o);
  const LdaResult& four = fours[0];
  EXPECT_GT(four.block_bytes, 0.2 * all_blocks);
  EXPECT_LT(four.block_bytes, 0.45 * all_blocks);
  // An iteration hands every block on once from every process: all the corpus's topics. (A
  // word's tokens at a rank are a few here, too few to leave out of a hand-over: the test below.)
  EXPECT_EQ(four.block_bytes_sent, all_packed);
  EXPECT_GT(four.sample_seconds, 0.0);
  EXPECT_EQ(TrainOnRanks(1, Ap(), o)[0].block_bytes_sent, 0.0);
}

// 200 words, each with about 100 tokens at each of two ranks (66 at three): long enough runs for a
// block to travel without its receiver's tokens, which the receiver kept and puts back. The
// word-topic counts gathered from the blocks then agree with the documents' (a token put back
// wrong would disagree for as long as it does not move), and the busiest rank sends every token but
// its left neighbour's: on 2 and 3 ranks, on 2 ranks of 2 threads with 3 blocks each, and resumed
// from a checkpoint (the blocks' round that brings every rank's tokens into them), which gives the
// straight run's state.
TEST(LdaTrainer, BlocksTravelWithoutTheReceiversTokensWhereTheirRunsAreLong) {
  const testing::SyntheticLda s = testing::GenerateLda(10, 200, 400, 100, 0.5, 3);
  LdaOptions o;
  o.params = {.topics = 10, .alpha = 0.5, .beta = 0.01, .mh_steps = 2};
  o.iterations = 20;
  o.eval_every = 0;
  o.seed = 5;
  o.doc_topics = true;
  const std::vector<uint64_t> words = s.corpus.WordCounts();
  auto check = [&](const std::vector<LdaResult>& rs, const std::string& what) {
    std::vector<int64_t> by_doc(10, 0), by_word(10, 0);
    for (const LdaResult& r : rs)
      for (const auto& doc : r.doc_topics)
        for (const auto& [k, n] : doc) by_doc[k] += n;
    for (uint32_t w = 0; w < rs[0].model.num_words(); ++w) {
      int64_t row = 0;
      rs[0].model.ForEachNonzero(w, [&](uint32_t k, int32_t n) { by_word[k] += n, row += n; });
      ASSERT_EQ(row, static_cast<int64_t>(words[w])) << what << ", word " << w;
    }
    EXPECT_EQ(by_word, by_doc) << what;
    EXPECT_EQ(by_doc, rs[0].totals) << what;
    EXPECT_EQ(rs[0].block_bytes_sent, SentWithoutReceivers(s.corpus, rs)) << what;
  };
  for (int ranks : {2, 3}) check(TrainOnRanks(ranks, s.corpus, o), std::to_string(ranks) + " ranks");
  LdaOptions threads = o;
  threads.threads = 2;
  threads.blocks = 6;
  check(TrainOnRanks(2, s.corpus, threads), "2 threads, 6 blocks");

  const TestDir dir("lda_ckpt_runs");
  const std::vector<LdaResult> straight = TrainOnRanks(2, s.corpus, o);
  o.iterations = 10;
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 10;
  TrainOnRanks(2, s.corpus, o);
  o.checkpoint_dir.clear();
  o.resume_dir = dir.string();
  o.iterations = 20;
  const std::vector<LdaResult> resumed = TrainOnRanks(2, s.corpus, o);
  check(resumed, "resumed");
  for (size_t r = 0; r < 2; ++r) EXPECT_EQ(resumed[r].doc_topics, straight[r].doc_topics) << "rank " << r;
  EXPECT_EQ(Final(resumed[0]), Final(straight[0]));
}

// A fresh run on several processes draws every token's first topic where its block and its document
// both find it (DrawFirstTopics): the word-topic counts gathered from the blocks match the topic
// totals counted from the documents, and every word's row holds all its tokens. A block that
// disagreed with a document's copy would keep disagreeing on the tokens that never move.
TEST(LdaTrainer, ProcessesStartWithBlocksThatAgreeWithTheDocuments) {
  LdaOptions o = ApOptions();
  o.iterations = 1;
  o.eval_every = 0;
  const std::vector<uint64_t> words = Ap().WordCounts();
  for (int ranks : {2, 4}) {
    const LdaResult r = TrainOnRanks(ranks, Ap(), o)[0];
    std::vector<int64_t> by_topic(r.totals.size(), 0);
    for (uint32_t w = 0; w < r.model.num_words(); ++w) {
      int64_t row = 0;
      r.model.ForEachNonzero(w, [&](uint32_t k, int32_t n) { by_topic[k] += n, row += n; });
      ASSERT_EQ(row, static_cast<int64_t>(words[w])) << ranks << " ranks, word " << w;
    }
    EXPECT_EQ(by_topic, r.totals) << ranks << " ranks";
  }
}

// Several processes wait for an iteration's last hand-over only before what reads every held block
// (an evaluation, a fit, a checkpoint): the chain must not depend on where they wait.
TEST(LdaTrainer, ProcessesGiveTheSameChainWhereverTheyWaitForTheLastBlock) {
  LdaOptions o = ApOptions();
  o.iterations = 6;
  o.blocks = 6;
  o.eval_every = 1;  // settled after every iteration
  const std::vector<LdaResult> each = TrainOnRanks(2, Ap(), o);
  o.eval_every = 0;  // only after the last one
  const std::vector<LdaResult> last = TrainOnRanks(2, Ap(), o);
  EXPECT_EQ(Final(each[0]), Final(last[0]));
  for (size_t r = 0; r < 2; ++r) EXPECT_EQ(each[r].doc_topics, last[r].doc_topics) << "rank " << r;
  EXPECT_EQ(each[0].totals, last[0].totals);
}

// The iterations' seconds and where they went are read on the context's clock, as the ring's waits:
// one a test holds still gives zeros, whatever the machine took.
TEST(LdaTrainer, TimesAreReadOnTheContextsClock) {
  ManualClock clock;
  comm::InProcessWorld world(2);
  const comm::ContextOptions options{.env = Env(nullptr, &clock)};
  LdaOptions o = ApOptions();
  o.iterations = 2;
  std::vector<LdaResult> results(2);
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = TrainLda(ctx, Ap(), o); },
      options);
  comm::testing::ExpectNoErrors(errors);
  EXPECT_EQ(results[0].history.back().seconds, 0.0);
  EXPECT_EQ(results[0].sample_seconds, 0.0);
  EXPECT_EQ(results[0].totals_seconds, 0.0);
  EXPECT_EQ(results[0].block_wait_seconds, 0.0);
  EXPECT_EQ(results[0].setup_seconds, 0.0);
  EXPECT_EQ(results[0].finish_seconds, 0.0);
  EXPECT_EQ(results[0].block_bytes_sent, 2.0 * static_cast<double>(Ap().num_tokens()));  // packed
}

// A run that is not asked for the documents' topic counts trains the same chain and leaves them
// out; on the machine's clock its set-up and its end take time, and are told apart from the
// iterations'.
TEST(LdaTrainer, DocumentTopicsAreMadeOnlyWhenAsked) {
  for (int ranks : {1, 2}) {
    LdaOptions o = ApOptions();
    o.iterations = 3;
    const std::vector<LdaResult> with = TrainOnRanks(ranks, Ap(), o);
    o.doc_topics = false;
    const std::vector<LdaResult> without = TrainOnRanks(ranks, Ap(), o);
    for (int r = 0; r < ranks; ++r) {
      const LdaResult &a = with[static_cast<size_t>(r)], &b = without[static_cast<size_t>(r)];
      EXPECT_EQ(a.doc_topics.size(), a.doc_end - a.doc_begin) << "rank " << r;
      EXPECT_TRUE(b.doc_topics.empty()) << "rank " << r;
      EXPECT_EQ(Final(a), Final(b)) << "rank " << r;
      EXPECT_EQ(a.totals, b.totals) << "rank " << r;
      EXPECT_GT(b.setup_seconds, 0.0);
      EXPECT_GT(b.finish_seconds, 0.0);
    }
    const WordTopicTable &a = with[0].model, &b = without[0].model;  // rank 0's, gathered
    ASSERT_EQ(a.num_words(), b.num_words());
    for (uint32_t w = 0; w < a.num_words(); ++w) {
      for (uint32_t k = 0; k < a.num_topics(); ++k) ASSERT_EQ(a.Get(w, k), b.Get(w, k)) << w << " " << k;
    }
  }
}

TEST(LdaTrainer, ResumeGivesTheSameStateAsAStraightRun) {
  const TestDir dir("lda_ckpt");
  LdaOptions o = ApOptions();
  o.iterations = 20;
  o.threads = 2;
  LdaResult straight = TrainOnRanks(1, Ap(), o)[0];
  o.iterations = 8;
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 4;
  TrainOnRanks(1, Ap(), o);
  EXPECT_EQ(ReadMeta(dir.string()).iteration, 8u);
  o.checkpoint_dir.clear();
  o.resume_dir = dir.string();
  o.iterations = 20;
  LdaResult resumed = TrainOnRanks(1, Ap(), o)[0];
  EXPECT_EQ(resumed.first_iteration, 8u);
  EXPECT_EQ(resumed.doc_topics, straight.doc_topics);
  EXPECT_EQ(Final(resumed), Final(straight));

  // A checkpoint written by 2 processes resumes on 1.
  o.resume_dir.clear();
  o.checkpoint_dir = (dir / "two").string();
  o.iterations = 4;
  TrainOnRanks(2, Ap(), o);
  o.checkpoint_dir.clear();
  o.resume_dir = (dir / "two").string();
  o.iterations = 6;
  EXPECT_EQ(TrainOnRanks(1, Ap(), o)[0].first_iteration, 4u);

  // Corrupt, foreign and incomplete checkpoints are refused with the file named.
  fs::path part = dir / "topics.0-of-1.bin";
  {
    std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  o.resume_dir = dir.string();
  o.iterations = 12;
  std::string corrupt = ErrorOf(1, Ap(), o);
  EXPECT_THAT(corrupt, HasSubstr("topics.0-of-1.bin"));
  EXPECT_THAT(corrupt, HasSubstr("checksum"));
  LdaOptions other = o;
  other.params.topics = 30;
  other.resume_dir = (dir / "two").string();
  EXPECT_THAT(ErrorOf(1, Ap(), other), HasSubstr("checkpoint of 20 topics"));
  fs::remove(dir / "two" / "meta.txt");
  o.resume_dir = (dir / "two").string();
  EXPECT_THAT(ErrorOf(1, Ap(), o), HasSubstr("meta.txt: cannot open"));
}

// The fitted alpha of each true topic: that of the learned topic nearest it (total variation).
std::vector<double> FittedByTrueTopic(const LdaResult& r, const std::vector<std::vector<double>>& truth) {
  const auto v = static_cast<uint32_t>(truth[0].size());
  std::vector<double> by_truth(truth.size(), 0);
  for (size_t t = 0; t < truth.size(); ++t) {
    double best = 3;
    for (uint32_t learned = 0; learned < truth.size(); ++learned) {
      double tv = 0;
      for (uint32_t w = 0; w < v; ++w)
        tv += std::fabs(r.model.Get(w, learned) / static_cast<double>(r.totals[learned]) - truth[t][w]) / 2;
      if (tv < best) best = tv, by_truth[t] = r.params.topic_alpha[learned];
    }
  }
  return by_truth;
}

// A corpus drawn from LDA's generative model with a known asymmetric alpha (three topics, the
// largest 9 times the smallest; 300,000 tokens): the fitted alpha recovers it (within 15%, the
// issue's bar; within 10% for six seeds tried), in one process and in two processes of two
// threads, which agree on every value. (With five topics, 0.05 to 0.8, the fit is as close when
// the sampler finds the five topics, but on some seeds it splits one and merges two rare ones, a
// local optimum of the sampler, not of the fit.)
TEST(LdaTrainer, OptimisedAlphaRecoversTheAlphaTheCorpusWasDrawnWith) {
  const std::vector<double> truth{0.1, 0.3, 0.9};
  const testing::SyntheticLda s = testing::DrawLda(truth, 0.02, 500, 3000, 100, 17);
  LdaOptions o;
  o.params = {.topics = 3, .alpha = 0.5, .beta = 0.1, .mh_steps = 2};
  o.iterations = 200;
  o.eval_every = 0;
  o.optimize_interval = 10;
  o.optimize_burn_in = 20;
  const LdaResult one = TrainOnRanks(1, s.corpus, o)[0];
  EXPECT_LT(one.params.beta, 0.05);  // fitted too (the corpus's is 0.02)
  o.threads = 2;
  const std::vector<LdaResult> two = TrainOnRanks(2, s.corpus, o);
  EXPECT_EQ(two[0].params.topic_alpha, two[1].params.topic_alpha);
  EXPECT_EQ(two[0].params.beta, two[1].params.beta);
  for (const LdaResult* r : {&one, &two[0]}) {
    const std::vector<double> fit = FittedByTrueTopic(*r, s.topics);
    for (size_t t = 0; t < truth.size(); ++t) EXPECT_NEAR(fit[t], truth[t], 0.15 * truth[t]) << t;
  }
}

// A million topics on 800 AP documents (147,000 tokens): the word-topic table in hybrid storage
// takes what it takes at K = 1,000, within 10%, and the tokens and the word blocks two processes
// pass round what they take at K = 100,000 (from 65,537 topics on, topics take 4 bytes rather than
// 2, in the tokens' arrays and the blocks): bounded by the tokens, not by K. (What does grow with K is
// a handful of K-sized arrays: the topic totals and each thread's counts, 8 MB each at a million.)
TEST(LdaTrainer, AMillionTopicsTakeTheMemoryOfTheirTokens) {
  LdaOptions o = ApOptions();
  o.iterations = 2;
  o.params.topics = 1000;
  o.params.alpha = 0.01;
  const std::vector<LdaResult> small = TrainOnRanks(2, Ap(), o);
  o.params.topics = 100000;
  const std::vector<LdaResult> unpacked = TrainOnRanks(2, Ap(), o);
  o.params.topics = 1000000;
  const std::vector<LdaResult> large = TrainOnRanks(2, Ap(), o);
  EXPECT_EQ(large[0].model.num_topics(), 1000000u);
  EXPECT_TRUE(std::isfinite(large[0].history.back().loglik));
  EXPECT_LT(large[0].model_bytes, 1.1 * small[0].model_bytes);
  EXPECT_LT(large[0].token_bytes, 1.1 * unpacked[0].token_bytes);
  EXPECT_LT(small[0].token_bytes, unpacked[0].token_bytes);  // 16-bit topics
  EXPECT_LT(large[0].block_bytes, 1.1 * unpacked[0].block_bytes);
  EXPECT_LT(large[0].model_bytes, 64.0 * static_cast<double>(large[0].tokens));
}

TEST(LdaTrainer, ResumeGoesOnWithTheFittedHyperparameters) {
  const TestDir dir("lda_ckpt_fit");
  LdaOptions o = ApOptions();
  o.iterations = 16;
  o.optimize_interval = 4;
  o.optimize_burn_in = 4;
  const LdaResult straight = TrainOnRanks(1, Ap(), o)[0];
  o.iterations = 12;
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 6;  // after the fit at 4, before the one at 8
  TrainOnRanks(1, Ap(), o);
  o.checkpoint_dir.clear();
  o.resume_dir = dir.string();
  o.iterations = 16;
  const LdaResult resumed = TrainOnRanks(1, Ap(), o)[0];
  EXPECT_EQ(resumed.first_iteration, 12u);
  EXPECT_EQ(resumed.params.topic_alpha, straight.params.topic_alpha);
  EXPECT_EQ(resumed.params.beta, straight.params.beta);
  EXPECT_EQ(resumed.doc_topics, straight.doc_topics);
}

// A checkpoint that cannot be written (a failed write, a full disk, a crash half-way through the
// topics file) ends the run with an error naming the file, and leaves the previous checkpoint,
// which a resumed run takes up.
TEST(LdaTrainer, AFailedCheckpointLeavesThePreviousOne) {
  const TestDir dir("lda_faulty");
  LdaOptions o = ApOptions();
  o.iterations = 4;
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 4;
  TrainOnRanks(1, Ap(), o);
  o.resume_dir = dir.string();
  o.iterations = 8;
  LdaOptions resume = o;
  resume.checkpoint_dir.clear();
  comm::testing::ForEachCheckpointFault(
      "topics.0-of-1.bin", 1000, [&](comm::Context& ctx) { TrainLda(ctx, Ap(), o); },
      [&] {
        EXPECT_EQ(ReadMeta(dir.string()).iteration, 4u) << "the previous checkpoint";
        EXPECT_EQ(TrainOnRanks(1, Ap(), resume)[0].first_iteration, 4u);
      });
}

// A process that dies mid-training ends the others' runs with an error naming it, by the
// deadline; ranks given different options fail at once, naming the difference.
TEST(LdaTrainer, DeadOrMismatchedProcessIsAnErrorNotAHang) {
  LdaOptions o = ApOptions();
  o.iterations = 100000;  // far longer than the test: only the failure ends it
  o.timeout_ms = std::chrono::milliseconds(500);
  comm::InProcessWorld world(2);
  // Rank 1 dies as it sends its 200th message: some iterations in, in the middle of one.
  world.AddFault({.action = comm::MessageFault::Action::kKillSender, .src = 1, .skip = 199, .count = 1});
  const auto start = std::chrono::steady_clock::now();
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainLda(ctx, Ap(), o); });
  ASSERT_NE(errors[0], nullptr);
  std::cout << "error on the surviving rank: " << comm::testing::Message(errors[0]) << "\n";
  EXPECT_THAT(comm::testing::Message(errors[0]), ::testing::ContainsRegex("shard 1|rank 1|peer 1"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));

  comm::InProcessWorld world2(2);
  auto mismatch = comm::testing::RunRanks(world2, [&](comm::Context& ctx) {
    LdaOptions mine = ApOptions();
    if (ctx.rank() == 1) mine.params.topics = 30;
    TrainLda(ctx, Ap(), mine);
  });
  ASSERT_NE(mismatch[0], nullptr);
  EXPECT_THAT(comm::testing::Message(mismatch[0]), HasSubstr("another configuration"));
}

TEST(LdaTrainer, RejectsBadOptions) {
  LdaOptions o = ApOptions();
  o.params.topics = 1;
  EXPECT_THAT(ErrorOf(1, Ap(), o), HasSubstr("--topics 1"));
  o = ApOptions();
  o.params.alpha = 0;
  EXPECT_THAT(ErrorOf(2, Ap(), o), HasSubstr("--alpha"));
  o = ApOptions();
  o.params.mh_steps = 0;
  EXPECT_THAT(ErrorOf(1, Ap(), o), HasSubstr("--mh-steps"));
}

// New documents drawn from known topics get those topics' proportions under the trained model.
TEST(LdaInference, FoldsInNewDocuments) {
  auto s = testing::GenerateLda(5, 50, 400, 80, 0.1, 8);
  LdaOptions o;
  o.params = {.topics = 5, .alpha = 0.1, .beta = 0.01};
  o.iterations = 100;
  o.eval_every = 0;
  LdaResult r = TrainOnRanks(1, s.corpus, o)[0];
  LdaModel model{5, 0.1, 0.01, s.corpus.vocab, std::move(r.model), r.totals};
  // A document made of topic 0's own words only, and one of topic 3's.
  Corpus docs;
  docs.vocab = s.corpus.vocab;
  std::vector<uint32_t> d0, d3;
  for (uint32_t i = 0; i < 40; ++i) d0.push_back(i % 10), d3.push_back(30 + i % 10);
  docs.AddDocument("zero", d0);
  docs.AddDocument("three", d3);
  auto topics = FoldIn(model, docs, {.iterations = 30, .threads = 2});
  ASSERT_EQ(topics.size(), 2u);
  auto dominant = [](const DocTopics& d) {
    return std::max_element(d.begin(), d.end(), [](auto a, auto b) { return a.second < b.second; });
  };
  auto z0 = dominant(topics[0]), z3 = dominant(topics[1]);
  EXPECT_GE(z0->second, 36u);  // nearly every token on one topic
  EXPECT_GE(z3->second, 36u);
  EXPECT_NE(z0->first, z3->first);
  // The learned topic holding word 0 most is the one document "zero" was given.
  uint32_t best = 0;
  for (uint32_t k = 1; k < 5; ++k) best = model.table.Get(0, k) > model.table.Get(0, best) ? k : best;
  EXPECT_EQ(z0->first, best);
}

}  // namespace
}  // namespace parasol::apps::lda
