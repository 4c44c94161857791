// Folding in and held-out perplexity: a model trained on documents from known topics finds the
// topics of new ones, and predicts held-out halves of new documents better than word frequencies
// alone and far better than an untrained model; model files keep a fitted alpha.
#include "parasol/apps/lda/inference.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/apps/lda/model_io.h"
#include "parasol/core/error.h"

#include "parasol/apps/lda/lda_testing.h"
#include "parasol/apps/lda/lda_trainer.h"
#include "parasol/comm/testing.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::lda {
namespace {

LdaResult Train(const Corpus& c, LdaOptions o) {
  comm::InProcessWorld world(1);
  LdaResult r;
  comm::testing::ExpectNoErrors(
      comm::testing::RunRanks(world, [&](comm::Context& ctx) { r = TrainLda(ctx, c, o); }));
  return r;
}

// exp(-mean log p(w)) of the held-out (odd-position) tokens under the training corpus's word
// frequencies (add-one smoothed): what a model without topics achieves.
double UnigramPerplexity(const Corpus& train, const Corpus& test) {
  std::vector<double> count(train.vocab.size(), 1.0);
  for (uint32_t w : train.words) count[w] += 1;
  const double total = static_cast<double>(train.num_tokens() + train.vocab.size());
  double ll = 0;
  uint64_t n = 0;
  for (size_t d = 0; d < test.num_docs(); ++d) {
    auto words = test.doc(d);
    for (size_t i = 1; i < words.size(); i += 2) ll += std::log(count[words[i]] / total), ++n;
  }
  return std::exp(-ll / static_cast<double>(n));
}

// Documents drawn from 5 topics (testing::GenerateLda with `seed`), the first `trained` to train
// on and the rest held out, sharing one vocabulary.
struct TrainAndTest {
  Corpus train, test;
};
TrainAndTest DrawnAndHeldOut(size_t docs, size_t trained, uint64_t seed) {
  auto all = testing::GenerateLda(5, 50, docs, 60, 0.1, seed);
  Corpus train, test;
  train.vocab = test.vocab = all.corpus.vocab;
  for (size_t d = 0; d < all.corpus.num_docs(); ++d)
    (d < trained ? train : test).AddDocument(all.corpus.doc_names[d], all.corpus.doc(d));
  return {std::move(train), std::move(test)};
}

// Training options for those documents: their 5 topics, alpha 0.1, beta 0.01.
LdaOptions FiveTopics(uint32_t iterations, uint32_t eval_every) {
  LdaOptions o;
  o.params = {.topics = 5, .alpha = 0.1, .beta = 0.01};
  o.iterations = iterations;
  o.eval_every = eval_every;
  return o;
}

TEST(DocumentCompletion, TrainedBeatsWordFrequenciesAndAnUntrainedModel) {
  // Training and test documents from the same 5 topics (the same seed gives the same topics;
  // the test documents are the last 100 of a larger draw).
  const TrainAndTest drawn = DrawnAndHeldOut(500, 400, 8);
  const Corpus &train = drawn.train, &test = drawn.test;
  LdaOptions o = FiveTopics(100, 0);
  auto model_after = [&](uint32_t iterations) {
    o.iterations = iterations;
    LdaResult r = Train(train, o);
    return LdaModel{5, 0.1, 0.01, train.vocab, std::move(r.model), r.totals};
  };
  const InferOptions fold{.iterations = 30, .threads = 2};
  const HeldOut trained = DocumentCompletion(model_after(100), test, fold);
  const HeldOut untrained = DocumentCompletion(model_after(0), test, fold);  // random topics
  const double unigram = UnigramPerplexity(train, test);
  std::cout << "held-out perplexity: trained " << trained.perplexity() << ", untrained "
            << untrained.perplexity() << ", word frequencies " << unigram << "\n";
  EXPECT_EQ(trained.tokens, 100u * 30);  // the odd positions of 100 documents of 60 tokens
  EXPECT_LT(trained.perplexity(), 0.7 * unigram);
  EXPECT_LT(trained.perplexity(), 0.6 * untrained.perplexity());
}

// --test during training: a perplexity at every evaluation, falling as the model learns.
TEST(DocumentCompletion, ReportedDuringTraining) {
  const TrainAndTest drawn = DrawnAndHeldOut(300, 250, 9);
  const Corpus &train = drawn.train, &test = drawn.test;
  LdaOptions o = FiveTopics(40, 20);
  o.test_corpus = &test;
  LdaResult r = Train(train, o);
  ASSERT_EQ(r.history.size(), 40u);
  EXPECT_TRUE(std::isnan(r.history[0].test_perplexity));
  const double early = r.history[19].test_perplexity, late = r.history[39].test_perplexity;
  EXPECT_GT(early, 1.0);
  EXPECT_LT(late, early * 1.02);
}

// Two processes: the model rank 0 gathers for --test at an iteration's end, with the blocks part
// of the way round their ring, scores exactly as the finished model does (every block under its
// own word ids).
TEST(DocumentCompletion, ReportedDuringTrainingOnTwoProcesses) {
  const TrainAndTest drawn = DrawnAndHeldOut(300, 250, 9);
  const Corpus &train = drawn.train, &test = drawn.test;
  LdaOptions o = FiveTopics(3, 0);  // the last iteration only
  o.test_corpus = &test;
  comm::InProcessWorld world(2);
  std::vector<LdaResult> results(2);
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = TrainLda(ctx, train, o); });
  comm::testing::ExpectNoErrors(errors);
  const LdaResult& r = results[0];
  LdaModel model{r.params.topics, r.params.alpha, r.params.beta, train.vocab, r.model, r.totals, {}};
  const InferOptions fold{
      .iterations = o.test_iterations, .mh_steps = r.params.mh_steps, .threads = 1, .seed = o.seed};
  EXPECT_EQ(r.history.back().test_perplexity, DocumentCompletion(model, test, fold).perplexity());
}

// A model with a fitted alpha is written as version 2 and reads back with every value; a version 2
// file with the wrong number of alphas is refused at its line.
TEST(LdaModelFile, KeepsAFittedAlpha) {
  const TestDir dir("lda_model_v2");
  LdaModel m{3, 0.5, 0.02, {"a", "b"}, WordTopicTable(3, std::vector<uint64_t>{3, 1}, 1), {2, 1, 1}};
  m.table.Add(0, 0, 2), m.table.Add(0, 2, 1), m.table.Add(1, 1, 1);
  m.topic_alpha = {0.1, 1.0 / 3, 2.5};
  SaveModel(dir.string(), m);
  const LdaModel back = LoadModel(dir.string());
  EXPECT_EQ(back.topic_alpha, m.topic_alpha);  // exactly: written with 17 digits
  EXPECT_EQ(back.beta, 0.02);
  EXPECT_EQ(back.totals, m.totals);
  EXPECT_NEAR(back.Params().AlphaSum(), 0.1 + 1.0 / 3 + 2.5, 1e-15);
  std::ofstream((dir / "model.txt").string()) << "parasol-lda-model 2 3 2 0.5 0.02\nalpha 0.1 0.2\n0 0:2\n";
  try {
    LoadModel(dir.string());
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("model.txt:2: 2 alpha values for 3 topics"));
  }
}

}  // namespace
}  // namespace parasol::apps::lda
