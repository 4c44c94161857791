#include "parasol/apps/lda/lda_trainer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "parasol/apps/lda/block_ring.h"
#include "parasol/apps/lda/dirichlet_fit.h"
#include "parasol/apps/lda/gibbs_sampler.h"
#include "parasol/apps/lda/inference.h"
#include "parasol/apps/lda/lda_checkpoint.h"
#include "parasol/apps/lda/loglik.h"
#include "parasol/apps/lda/mh_sampler.h"
#include "parasol/apps/lda/model_io.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/apps/lda/totals_exchange.h"
#include "parasol/apps/lda/word_topic.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/balance.h"
#include "parasol/core/clock.h"
#include "parasol/core/error.h"
#include "parasol/core/task_group.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::lda {

namespace {

// The ring's own counts: its seconds waiting for blocks and the bytes it sent (none: one process).
struct RingCounts {
  double waited = 0, sent = 0;
};

// Where a process's training time went (several processes): the sampling timed by the trainer, the
// waits for the other processes' topic totals, the waits for word blocks and the bytes sent by the
// ring.
// End() turns them into figures per iteration.
struct TimeSplit {
  double sampling = 0, totals_waiting = 0, waiting = 0, bytes = 0;
  // The ring's and the exchange's own counts before the first iteration.
  RingCounts ring_before;
  double totals_waited = 0;

  void Begin(const RingCounts& ring, const TotalsExchange* exchange) {
    ring_before = ring;
    if (exchange != nullptr) totals_waited = exchange->wait_seconds();
  }
  void End(const RingCounts& ring, const TotalsExchange* exchange, uint32_t iterations) {
    waiting = ring.waited - ring_before.waited;
    bytes = ring.sent - ring_before.sent;
    if (exchange != nullptr) totals_waiting = exchange->wait_seconds() - totals_waited;
    const double n = std::max(iterations, 1u);
    sampling /= n, totals_waiting /= n, waiting /= n, bytes /= n;
  }
};

class Trainer {
 public:
  Trainer(comm::Context& ctx, const Corpus& corpus, const LdaOptions& o);
  LdaResult Run(const std::function<void(const IterationStats&)>& on_iteration);

 private:
  void CheckOptions() const;
  void CheckSameEverywhere();
  void Layout();
  void AssignBlocks();
  uint32_t Start();
  void DrawFirstTopics();
  // Both passes over word block b (one process: the only block).
  void SampleBlock(uint32_t b, uint32_t iteration);
  // One round per thread: fn(thread, round) on every thread, topic totals merged after each;
  // the calling thread moves the ring's transfers on meanwhile.
  void Rounds(const std::function<void(size_t, uint32_t)>& fn);
  void PlaceBlocks();
  // Several processes: fn(ring), the ring of the layout's topic type.
  template <typename Fn>
  decltype(auto) WithRing(Fn&& fn) {
    return ring16_ ? fn(*ring16_) : fn(*ring32_);
  }
  // The word-ordered topics the passes use in place of the layout's own: the active block's (several
  // processes), or null (one).
  void* ActiveBlock() {
    if (!distributed_) return nullptr;
    return WithRing([](auto& ring) -> void* { return ring.active(); });
  }
  RingCounts CountRing() {
    if (!distributed_) return {};
    return WithRing([](auto& ring) {
      return RingCounts{ring.wait_seconds(), static_cast<double>(ring.bytes_sent())};
    });
  }
  // Several processes: the others' changes to the topic totals of the step before, and this
  // process's own of this step to them (totals_exchange.h).
  void ShareTotals();
  bool OptimizeDue(uint32_t done) const {
    return o_.optimize_interval > 0 && done > o_.optimize_burn_in && done % o_.optimize_interval == 0;
  }
  void Optimize();
  void UseParams();
  double Evaluate();
  double TestPerplexity();
  WordTopicTable CountWords() const;
  void WriteCheckpoint(uint32_t iteration);
  void Finish(double setup_seconds, LdaResult& result);
  IterationStats Stats(uint32_t done, double trained, double seconds, int64_t tokens, bool evaluated);
  // Collective: the slowest process's figures of `split` into `result`.
  void ReportSplit(const TimeSplit& split, LdaResult& result);
  Rng RoundRng(size_t thread, uint32_t iteration, uint32_t pass, uint32_t sub) const {
    return Rng(o_.seed, static_cast<uint64_t>(rank_), thread,
               (uint64_t{iteration} << 32) | (uint64_t{pass} << 31) | sub);
  }
  bool gibbs() const { return o_.params.sampler == SamplerKind::kGibbs; }
  // Time on the context's clock (the machine's, or one a test drives), as the ring's waits.
  Clock::TimePoint Now() { return ctx_.env().clock().Now(); }
  double Since(Clock::TimePoint t) { return std::chrono::duration<double>(Now() - t).count(); }

  comm::Context& ctx_;
  const Corpus& corpus_;
  LdaOptions o_;
  const int rank_, size_;
  const bool distributed_;
  const uint32_t threads_;
  std::vector<uint64_t> word_counts_;
  std::vector<uint32_t> word_sub_;
  // The corpus with the word ids blocks are made of (several processes renumber: AssignBlocks).
  Corpus renumbered_;
  const Corpus* work_ = nullptr;
  size_t work_first_doc_ = 0;                     // the corpus's document that is *work_'s first
  std::vector<uint32_t> external_;                // word id here -> the corpus's
  std::vector<size_t> block_cut_;                 // block b: words [block_cut_[b], block_cut_[b + 1])
  std::vector<uint32_t> in_block_;                // word w's first token in its block's topics
  std::vector<uint32_t> before_;                  // tokens of word w in the documents of lower ranks
  std::vector<std::vector<uint32_t>> sub_words_;  // per sub-block: the words this process has
  size_t d0_ = 0, d1_ = 0;
  TokenLayout layout_;
  ProposalTables proposals_;
  HugePageVector<int32_t> gibbs_counts_;  // GibbsSampler::CountWords
  // The word blocks' ring (several processes): of 16-bit topics where the layout's are, else 32-bit.
  std::unique_ptr<BlockRing<uint16_t>> ring16_;
  std::unique_ptr<BlockRing<uint32_t>> ring32_;
  std::vector<int64_t> totals_;
  std::unique_ptr<TotalsExchange> exchange_;
  std::vector<int64_t> unshared_;  // this process's changes to totals_ not yet sent to the others
  std::vector<std::unique_ptr<MhSampler>> samplers_;
  std::vector<std::unique_ptr<GibbsSampler>> gibbs_;
  ThreadPool pool_;
  LogLikelihood loglik_;
  Clock::TimePoint created_;
};

Trainer::Trainer(comm::Context& ctx, const Corpus& corpus, const LdaOptions& o)
    : ctx_(ctx),
      corpus_(corpus),
      o_(o),
      rank_(ctx.rank()),
      size_(ctx.size()),
      distributed_(ctx.size() > 1),
      threads_(std::max<uint32_t>(1, o.threads)),
      pool_(threads_),
      loglik_((o_.params.vocab_size = static_cast<uint32_t>(corpus.vocab.size()), o_.params)) {
  created_ = Now();
  CheckOptions();
  o_.params.sampler = ChooseSampler(o_.params.sampler, o_.params.topics, corpus.vocab.size(), size_);
  // One process holds no word-topic counts while training: nothing to cut into blocks.
  if (!distributed_) o_.blocks = 1;
  if (o_.blocks == 0) o_.blocks = 2 * static_cast<uint32_t>(size_);
  if (o_.dense_min_count == 0) o_.dense_min_count = std::max<uint64_t>(1, o_.params.topics / 4);
  CheckSameEverywhere();
  Layout();
}

void Trainer::CheckOptions() const {
  const LdaParams& p = o_.params;
  if (p.topics < 2) throw InvalidArgumentError(fmt::format("--topics {}: need at least 2", p.topics));
  if (!(p.alpha > 0) || !(p.beta > 0)) throw InvalidArgumentError("--alpha and --beta must be positive");
  if (p.mh_steps == 0) throw InvalidArgumentError("--mh-steps must be at least 1");
  if (distributed_ && o_.blocks % static_cast<uint32_t>(size_) != 0) {
    throw InvalidArgumentError(
        fmt::format("--blocks {}: must be a multiple of the {} processes", o_.blocks, size_));
  }
  if (corpus_.num_tokens() == 0) throw InvalidArgumentError("the corpus has no tokens");
  if (corpus_.num_tokens() >= (uint64_t{1} << 31))
    throw InvalidArgumentError("more than 2^31 tokens per corpus");
}

// Every process must train the same model on the same corpus: a process given other options
// would otherwise fail later with a less telling error, or not at all.
void Trainer::CheckSameEverywhere() {
  if (!distributed_) return;
  const LdaParams& p = o_.params;
  const std::vector<uint64_t> mine{p.topics,
                                   std::bit_cast<uint64_t>(p.alpha),
                                   std::bit_cast<uint64_t>(p.beta),
                                   p.mh_steps,
                                   corpus_.vocab.size(),
                                   corpus_.num_docs(),
                                   corpus_.num_tokens(),
                                   o_.blocks,
                                   o_.dense_min_count,
                                   o_.iterations,
                                   o_.optimize_interval,
                                   o_.optimize_burn_in};
  std::vector<uint64_t> all(mine.size() * static_cast<size_t>(size_));
  collective::Allgather(ctx_, mine.data(), all.data(), mine.size(), DType::kInt64);
  for (int r = 0; r < size_; ++r) {
    if (!std::equal(mine.begin(), mine.end(), all.begin() + static_cast<ptrdiff_t>(mine.size()) * r)) {
      throw MismatchError(
          fmt::format("rank {}: lda: rank {} was started with another configuration or corpus "
                      "(topics, alpha, beta, mh steps, vocabulary, documents, tokens, blocks, "
                      "dense rows, iterations or optimisation differ)",
                      rank_, r));
    }
  }
}

void Trainer::Layout() {
  AssignBlocks();
  const uint32_t subs = o_.blocks * threads_;
  std::vector<uint32_t> block(word_counts_.size());
  word_sub_.assign(word_counts_.size(), 0);
  for (uint32_t b = 0; b < o_.blocks; ++b) {
    std::vector<uint64_t> weights;
    for (size_t w = block_cut_[b]; w < block_cut_[b + 1]; ++w)
      block[w] = b, weights.push_back(word_counts_[w]);
    std::vector<uint32_t> sub = AssignToParts(weights, threads_);  // one sub-block per thread, by tokens
    for (size_t i = 0; i < weights.size(); ++i) word_sub_[block_cut_[b] + i] = b * threads_ + sub[i];
  }
  // This process's documents [d0_, d1_) of the corpus are [w0, w1) of the one it samples.
  const Corpus& corpus = *work_;
  const size_t w0 = d0_ - work_first_doc_, w1 = d1_ - work_first_doc_;
  std::vector<size_t> cut = CutEvenly(corpus.doc_offsets, w0, w1, threads_);
  for (size_t& c : cut) c -= w0;
  std::vector<uint64_t> local(word_counts_.size(), 0);
  for (uint64_t i = corpus.doc_offsets[w0]; i < corpus.doc_offsets[w1]; ++i) ++local[corpus.words[i]];
  for (uint32_t b = 0; b < o_.blocks; ++b) {
    uint64_t tokens = 0;
    for (size_t w = block_cut_[b]; w < block_cut_[b + 1]; ++w) tokens += word_counts_[w];
    if (tokens >= (uint64_t{1} << 32)) {
      throw InvalidArgumentError(
          fmt::format("word block {} holds {} tokens (at most 2^32 - 1): use more --blocks", b, tokens));
    }
  }
  // 16-bit topics where they fit (as the word blocks' are then).
  const bool narrow = o_.params.topics <= 65536;
  layout_ = TokenLayout(corpus, w0, w1, cut, word_sub_, subs, narrow ? TopicBits::k16 : TopicBits::k32);
  proposals_ = MakeProposalTables(layout_, o_.params);
  if (distributed_) PlaceBlocks();
  sub_words_.assign(subs, {});
  for (uint32_t w = 0; w < word_counts_.size(); ++w) {
    if (local[w] > 0) sub_words_[word_sub_[w]].push_back(w);
  }
  UseParams();
}

// The samplers, proposals and likelihood for o_.params (again after an optimisation).
void Trainer::UseParams() {
  gibbs_.clear();
  samplers_.clear();
  for (uint32_t t = 0; t < threads_; ++t) {
    if (gibbs()) {
      gibbs_.push_back(std::make_unique<GibbsSampler>(o_.params));
    } else {
      samplers_.push_back(std::make_unique<MhSampler>(o_.params));
    }
  }
  proposals_.SetSmoothing(o_.params);
  loglik_ = LogLikelihood(o_.params);
}

// Blocks are contiguous ranges of word ids, so that a block's table has rows for its own words
// only. Several processes: words are renumbered so that every block gets an equal share of
// frequent and rare words (dealt by frequency rank, back and forth), which balances both the
// sampling each step and the bytes each block holds; results are reported in the corpus's ids.
void Trainer::AssignBlocks() {
  std::vector<size_t> ranks =
      CutEvenly(corpus_.doc_offsets, 0, corpus_.num_docs(), static_cast<uint32_t>(size_));
  d0_ = ranks[static_cast<size_t>(rank_)];
  d1_ = ranks[static_cast<size_t>(rank_) + 1];
  std::vector<uint64_t> counts = corpus_.WordCounts();
  const auto vocab = static_cast<uint32_t>(counts.size());
  external_.resize(vocab);
  std::iota(external_.begin(), external_.end(), 0u);
  block_cut_ = {0, vocab};
  work_ = &corpus_;
  word_counts_ = counts;
  if (!distributed_) return;
  std::vector<uint32_t> by_count(external_);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [&](uint32_t a, uint32_t b) { return counts[a] > counts[b]; });
  const uint32_t blocks = o_.blocks;
  std::vector<std::vector<uint32_t>> dealt(blocks);
  for (uint32_t r = 0; r < vocab; ++r) {
    const uint32_t lap = r / blocks, seat = r % blocks;
    dealt[lap % 2 == 0 ? seat : blocks - 1 - seat].push_back(by_count[r]);
  }
  std::vector<uint32_t> internal(vocab);
  block_cut_.assign(1, 0);
  uint32_t next = 0;
  for (const auto& words : dealt) {
    for (uint32_t w : words) external_[next] = w, internal[w] = next++;
    block_cut_.push_back(next);
  }
  renumbered_.vocab.resize(vocab);
  for (uint32_t i = 0; i < vocab; ++i)
    renumbered_.vocab[i] = corpus_.vocab[external_[i]], word_counts_[i] = counts[external_[i]];
  // Only this process's documents are renumbered (a copy of the whole corpus's words was as large
  // as a process's share of the tokens' topics at two processes); the tokens of every word in
  // the documents before them place this process's tokens in the blocks.
  const uint64_t b = corpus_.doc_offsets[d0_], e = corpus_.doc_offsets[d1_];
  before_.assign(vocab, 0);
  for (uint64_t i = 0; i < b; ++i) ++before_[internal[corpus_.words[i]]];
  renumbered_.doc_offsets.clear();
  for (size_t d = d0_; d <= d1_; ++d) renumbered_.doc_offsets.push_back(corpus_.doc_offsets[d] - b);
  renumbered_.words.resize(e - b);
  for (uint64_t i = b; i < e; ++i) renumbered_.words[i - b] = internal[corpus_.words[i]];
  work_ = &renumbered_;
  work_first_doc_ = d0_;
}

// Several processes: where each word's tokens sit in its block (every process's, by rank), and
// the word proposals that draw from them.
void Trainer::PlaceBlocks() {
  const auto vocab = static_cast<uint32_t>(word_counts_.size());
  in_block_.assign(vocab, 0);
  std::vector<uint32_t> sizes(o_.blocks, 0);
  std::vector<std::vector<BlockRun>> runs(o_.blocks);
  for (uint32_t b = 0; b < o_.blocks; ++b) {
    for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
      in_block_[w] = sizes[b];
      sizes[b] += static_cast<uint32_t>(word_counts_[w]);
      // This process's token j of w (layout position) sits at j + shift (mod 2^32) in the block.
      const uint32_t shift = in_block_[w] + before_[w] - layout_.word_begin(w);
      proposals_.SetWord(w, in_block_[w], static_cast<uint32_t>(word_counts_[w]), shift);
      const uint32_t mine = layout_.word_end(w) - layout_.word_begin(w);
      if (mine > 0) runs[b].push_back({in_block_[w] + before_[w], mine});
    }
  }
  // While a block is away, this process's tokens of it are kept in the layout's word order (which
  // the samplers do not use with several processes): a block's words are consecutive there.
  layout_.WithTopics([&](auto*, auto* wz) {
    using Z = std::remove_pointer_t<decltype(wz)>;
    std::vector<OwnTokens<Z>> own(o_.blocks);
    for (uint32_t b = 0; b < o_.blocks; ++b) {
      own[b].store = wz + layout_.word_begin(static_cast<uint32_t>(block_cut_[b]));
      own[b].runs = std::move(runs[b]);
    }
    auto ring = std::make_unique<BlockRing<Z>>(ctx_, std::move(sizes), o_.params.topics, o_.timeout_ms,
                                               std::move(own));
    if constexpr (sizeof(Z) == 2) {
      ring16_ = std::move(ring);
    } else {
      ring32_ = std::move(ring);
    }
  });
  exchange_ = std::make_unique<TotalsExchange>(ctx_, o_.params.topics, o_.timeout_ms);
}

// Sets every token's topic (random, or from the checkpoint) and the counts from them; returns the
// iteration to start from.
uint32_t Trainer::Start() {
  uint32_t first = 0;
  if (!o_.resume_dir.empty()) {
    CheckpointMeta m = ReadMeta(o_.resume_dir);
    if (m.topics != o_.params.topics || m.vocab != corpus_.vocab.size() || m.docs != corpus_.num_docs() ||
        m.tokens != corpus_.num_tokens()) {
      throw InvalidArgumentError(fmt::format(
          "{}: checkpoint of {} topics, {} words, {} documents, {} tokens; this run has {}, {}, {}, {}",
          o_.resume_dir, m.topics, m.vocab, m.docs, m.tokens, o_.params.topics, corpus_.vocab.size(),
          corpus_.num_docs(), corpus_.num_tokens()));
    }
    std::vector<uint32_t> all = ReadAllTopics(o_.resume_dir, m);
    const uint64_t b = corpus_.doc_offsets[d0_], e = corpus_.doc_offsets[d1_];
    layout_.SetCorpusOrderTopics(*work_, std::span<const uint32_t>(all).subspan(b, e - b));
    first = m.iteration;
    if (!m.topic_alpha.empty()) {  // hyperparameters fitted before the checkpoint: go on from them
      o_.params.topic_alpha = m.topic_alpha;
      o_.params.beta = m.beta;
      UseParams();
    }
  }
  const bool fresh = o_.resume_dir.empty();
  if (fresh && distributed_) DrawFirstTopics();
  if (fresh && !distributed_) {
    Rng init(o_.seed, static_cast<uint64_t>(rank_), 0xffffffff, 0);
    layout_.DrawTopics(*work_, o_.params.topics, init);
  }
  totals_.assign(o_.params.topics, 0);
  layout_.WithTopics([&](const auto* dz, const auto*) {
    for (uint64_t i = 0; i < layout_.num_tokens(); ++i) ++totals_[dz[i]];
  });
  if (gibbs()) gibbs_counts_ = GibbsSampler::CountWords(layout_, o_.params.topics);
  if (!distributed_) return first;
  // Resumed: each block makes one round, every process writing its tokens' topics into it.
  WithRing([&](auto& ring) {
    const auto* wz = layout_.word_topics<std::remove_pointer_t<decltype(ring.active())>>();
    for (uint32_t step = 0; !fresh && step < o_.blocks; ++step) {
      const uint32_t b = ring.active_id();
      auto* block = ring.active();
      for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
        const uint32_t shift = proposals_.by_word[w].shift;
        for (uint32_t j = layout_.word_begin(w); j < layout_.word_end(w); ++j) block[j + shift] = wz[j];
      }
      ring.Rotate();
    }
    ring.Settle();
  });
  unshared_ = totals_;  // this process's tokens' counts: every process's, summed
  ShareTotals();
  exchange_->Collect(totals_);
  return first;
}

// Several processes, a fresh run: token i of word w (counting every process's tokens of w, by rank)
// starts at the i-th draw of the stream (seed, w), so a process can set the topics of the blocks it
// holds, every process's tokens, as well as its own: no round of the blocks over the link before
// the first iteration (at 1 Gbit/s, 200 M tokens and two processes it took 6.4 s).
void Trainer::DrawFirstTopics() {
  constexpr uint64_t kFirstTopics = 0xfffffffe;  // RoundRng's threads never reach it
  const uint32_t topics = o_.params.topics;
  const uint32_t* cross = layout_.word_cross();
  std::vector<bool> set(layout_.num_words(), false);
  WithRing([&](auto& ring) {
    using Z = std::remove_pointer_t<decltype(ring.active())>;
    Z* wz = layout_.word_topics<Z>();
    Z* dz = layout_.doc_topics<Z>();
    // The words of the blocks held: every process's tokens drawn into the block, this process's
    // read back from it.
    ring.FillHeld([&](uint32_t b, Z* block) {
      for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
        Rng rng(o_.seed, kFirstTopics, w, 0);
        for (uint64_t i = 0; i < word_counts_[w]; ++i)
          block[in_block_[w] + i] = static_cast<Z>(rng.Below(topics));
        const uint32_t shift = proposals_.by_word[w].shift;
        for (uint32_t j = layout_.word_begin(w); j < layout_.word_end(w); ++j)
          dz[cross[j]] = wz[j] = block[j + shift];
        set[w] = true;
      }
    });
    for (uint32_t w = 0; w < layout_.num_words(); ++w) {
      if (set[w] || layout_.word_begin(w) == layout_.word_end(w)) continue;
      Rng rng(o_.seed, kFirstTopics, w, 0);
      for (uint32_t i = 0; i < before_[w]; ++i) rng.Next();  // the lower ranks' tokens of w
      for (uint32_t j = layout_.word_begin(w); j < layout_.word_end(w); ++j)
        dz[cross[j]] = wz[j] = static_cast<Z>(rng.Below(topics));
    }
  });
}

void Trainer::Rounds(const std::function<void(size_t, uint32_t)>& fn) {
  for (uint32_t r = 0; r < threads_; ++r) {
    TaskGroup round(&pool_);
    for (size_t i = 0; i < threads_; ++i) round.Run([&fn, i, r] { fn(i, r); });
    // The ring's messages move only while this thread drives them. A poll is a system call a
    // socket and wakes this thread beside the samplers: every 200 us it took 7% of the sampling on
    // two hosts (1 Gbit/s, 100 MB blocks); every 2 ms keeps the link as busy (the sockets' buffers
    // hold more than 2 ms of it) and the waits for blocks did not grow.
    constexpr std::chrono::milliseconds kRingPoll(2);
    std::function<void()> poll;
    if (distributed_) {
      poll = [this] {
        WithRing([](auto& ring) { ring.Poll(); });
        exchange_->Poll();
      };
    }
    round.Wait(poll, kRingPoll);
    for (uint32_t i = 0; i < threads_; ++i) {
      std::vector<int64_t> d = gibbs() ? gibbs_[i]->TotalsDelta() : samplers_[i]->TotalsDelta();
      for (size_t k = 0; k < d.size(); ++k) totals_[k] += d[k];
      if (distributed_) {
        for (size_t k = 0; k < d.size(); ++k) unshared_[k] += d[k];
      }
    }
  }
}

void Trainer::SampleBlock(uint32_t b, uint32_t iteration) {
  void* block = ActiveBlock();
  Rounds([&](size_t i, uint32_t r) {
    const uint32_t sub = b * threads_ + static_cast<uint32_t>((i + r) % threads_);
    Rng rng = RoundRng(i, iteration, 0, sub);
    if (gibbs()) {
      gibbs_[i]->BeginRound(totals_);
      gibbs_[i]->DocPass(layout_, static_cast<uint32_t>(i), sub, gibbs_counts_, rng);
    } else {
      samplers_[i]->BeginRound(totals_);
      samplers_[i]->DocPass(layout_, proposals_, static_cast<uint32_t>(i), sub, rng, block);
    }
  });
  if (gibbs()) return;
  Rounds([&](size_t i, uint32_t r) {
    const uint32_t sub = b * threads_ + static_cast<uint32_t>((i + r) % threads_);
    Rng rng = RoundRng(i, iteration, 1, sub);
    samplers_[i]->BeginRound(totals_);
    samplers_[i]->WordPass(layout_, proposals_, sub_words_[sub], static_cast<uint32_t>(i), rng, block);
  });
}

void Trainer::ShareTotals() {
  exchange_->Collect(totals_);
  exchange_->Post(unshared_);
  std::fill(unshared_.begin(), unshared_.end(), 0);
}

// Collective: alpha and beta fitted to the current topics. Each process tallies its documents'
// topic counts and the word-topic counts of the word blocks it holds; the fit's sums are summed
// over processes, and rank 0's result is every process's (bit for bit).
void Trainer::Optimize() {
  const uint32_t k = o_.params.topics;
  std::vector<int32_t> scratch(k, 0);
  std::vector<CountTally> by_topic(k);
  CountTally lengths, words;
  layout_.WithTopics([&](const auto* dz, const auto*) {
    for (size_t d = 0; d < layout_.num_docs(); ++d) {
      const uint32_t b = layout_.doc_begin(d), e = layout_.doc_end(d);
      ForEachTopicCount(dz, b, e, scratch,
                        [&](uint32_t t, int32_t c) { by_topic[t].Add(static_cast<uint32_t>(c)); });
      lengths.Add(e - b);
    }
  });
  auto tally_word = [&](const auto* z, uint32_t b, uint32_t e) {
    ForEachTopicCount(z, b, e, scratch, [&](uint32_t, int32_t c) { words.Add(static_cast<uint32_t>(c)); });
  };
  if (distributed_) {
    WithRing([&](auto& ring) {
      ring.ForEachHeld([&](uint32_t b, const auto* topics) {
        for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w)
          tally_word(topics, in_block_[w], in_block_[w] + static_cast<uint32_t>(word_counts_[w]));
      });
    });
  } else {
    layout_.WithTopics([&](const auto*, const auto* wz) {
      for (uint32_t w = 0; w < layout_.num_words(); ++w)
        tally_word(wz, layout_.word_begin(w), layout_.word_end(w));
    });
  }
  std::vector<CountHistogram> topic_counts;
  for (const CountTally& t : by_topic) topic_counts.push_back(t.Histogram());
  SumAcross sum;
  if (distributed_) {
    sum = [this](std::span<double> parts) {
      std::vector<double> total(parts.size());
      collective::Allreduce(ctx_, parts.data(), total.data(), parts.size(), DType::kFloat64);
      std::copy(total.begin(), total.end(), parts.begin());
    };
  }
  std::vector<double> fit = FitAsymmetricAlpha(topic_counts, lengths.Histogram(), o_.params.Alphas(), sum);
  fit.push_back(FitSymmetricBeta(words.Histogram(), totals_, static_cast<uint32_t>(word_counts_.size()),
                                 o_.params.beta, sum));
  if (distributed_) collective::Broadcast(ctx_, fit.data(), fit.size(), DType::kFloat64);
  o_.params.beta = fit.back();
  fit.pop_back();
  o_.params.topic_alpha = std::move(fit);
  UseParams();
}

// Collective: log p(w, z) of the current state.
double Trainer::Evaluate() {
  std::vector<std::vector<int32_t>> scratch(threads_, std::vector<int32_t>(o_.params.topics, 0));
  std::vector<double> parts(threads_, 0);
  const auto vocab = static_cast<uint32_t>(word_counts_.size());
  pool_.ParallelFor(0, threads_, [&](size_t i) {
    parts[i] = loglik_.DocPart(layout_, layout_.group_doc_begin(static_cast<uint32_t>(i)),
                               layout_.group_doc_end(static_cast<uint32_t>(i)), scratch[i]);
    if (!distributed_) {
      const auto w0 = static_cast<uint32_t>(uint64_t{vocab} * i / threads_);
      const auto w1 = static_cast<uint32_t>(uint64_t{vocab} * (i + 1) / threads_);
      parts[i] += loglik_.WordsPart(layout_, w0, w1, scratch[i]);
    }
  });
  double sum = std::accumulate(parts.begin(), parts.end(), 0.0);
  if (!distributed_) return sum + loglik_.TotalsPart(totals_);
  auto block_part = [&](uint32_t b, const auto& topics) {
    for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
      sum += loglik_.WordPart(topics, in_block_[w], in_block_[w] + static_cast<uint32_t>(word_counts_[w]),
                              scratch[0]);
    }
  };
  WithRing([&](auto& ring) { ring.ForEachReadable(block_part); });
  if (rank_ == 0) sum += loglik_.TotalsPart(totals_);
  double total = 0;
  collective::Allreduce(ctx_, &sum, &total, 1, DType::kFloat64);
  return total;
}

// Collective: the test corpus's perplexity under the current model, on rank 0 (NaN elsewhere).
double Trainer::TestPerplexity() {
  LdaModel model{o_.params.topics, o_.params.alpha,      o_.params.beta, corpus_.vocab, {},
                 totals_,          o_.params.topic_alpha};
  if (distributed_) {
    if (rank_ == 0) model.table = WordTopicTable(o_.params.topics, corpus_.WordCounts(), o_.dense_min_count);
    WithRing([&](auto& ring) {
      ring.ForEachAtRoot([&](uint32_t b, const auto* topics) {
        for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
          for (uint32_t i = in_block_[w]; i < in_block_[w] + word_counts_[w]; ++i)
            model.table.Inc(external_[w], topics[i]);
        }
      });
    });
    if (rank_ != 0) return std::numeric_limits<double>::quiet_NaN();
  } else {
    model.table = CountWords();
  }
  const InferOptions fold{
      .iterations = o_.test_iterations, .mh_steps = o_.params.mh_steps, .threads = threads_, .seed = o_.seed};
  return DocumentCompletion(model, *o_.test_corpus, fold).perplexity();
}

// One process: the word-topic counts of its tokens, in hybrid storage.
WordTopicTable Trainer::CountWords() const {
  WordTopicTable table(o_.params.topics, word_counts_, o_.dense_min_count);
  layout_.WithTopics([&](const auto*, const auto* wz) {
    for (uint32_t w = 0; w < layout_.num_words(); ++w) {
      for (uint32_t j = layout_.word_begin(w); j < layout_.word_end(w); ++j) table.Inc(w, wz[j]);
    }
  });
  return table;
}

void Trainer::WriteCheckpoint(uint32_t iteration) {
  CheckpointMeta m{iteration,
                   o_.params.topics,
                   corpus_.vocab.size(),
                   corpus_.num_docs(),
                   corpus_.num_tokens(),
                   static_cast<uint32_t>(size_),
                   o_.params.alpha,
                   o_.params.beta,
                   o_.params.topic_alpha,
                   o_.seed};
  int64_t ok = 1, all = 0;
  std::string why;
  try {
    WriteTopicsPart(ctx_.env().files(), o_.checkpoint_dir, rank_, m, d0_, d1_,
                    layout_.CorpusOrderTopics(*work_));
  } catch (const Error& e) {
    ok = 0, why = e.what();
  }
  collective::Allreduce(ctx_, &ok, &all, 1, DType::kInt64);  // every part is written
  if (!ok) throw IoError(why);
  if (all != size_)
    throw IoError(fmt::format("checkpoint {}: another rank failed to write its part", o_.checkpoint_dir));
  if (rank_ == 0) WriteMeta(ctx_.env().files(), o_.checkpoint_dir, m);
}

LdaResult Trainer::Run(const std::function<void(const IterationStats&)>& on_iteration) {
  LdaResult result;
  result.first_iteration = Start();
  const double setup_seconds = Since(created_);  // from construction to the first iteration
  int64_t local_tokens = static_cast<int64_t>(layout_.num_tokens()), tokens = 0;
  collective::Allreduce(ctx_, &local_tokens, &tokens, 1, DType::kInt64);
  result.tokens = static_cast<uint64_t>(tokens);
  double trained = 0;
  double carried = 0;  // the last hand-over's start (packing the block), made after the iteration's end
  TimeSplit split;
  split.Begin(CountRing(), exchange_.get());
  for (uint32_t it = result.first_iteration; it < o_.iterations; ++it) {
    const auto start = Now();
    for (uint32_t step = 0; step < o_.blocks; ++step) {
      auto mark = Now();
      SampleBlock(distributed_ ? WithRing([](auto& ring) { return ring.active_id(); }) : 0, it);
      split.sampling += Since(mark);
      if (!distributed_) continue;
      ShareTotals();
      // The iteration's last hand-over waits for its end (below): a message sent after the block
      // (the iteration's seconds, the log-likelihood's sum) queued behind it on the link, with the
      // samplers idle (0.9 s an iteration over 1 Gbit/s, 100 MB blocks). The next iteration's
      // first step does not need it.
      if (step + 1 < o_.blocks) WithRing([](auto& ring) { ring.Rotate(); });
    }
    // Every process's changes of the iteration: the totals are exact again, and the same everywhere.
    if (exchange_) exchange_->Collect(totals_);
    const bool evaluated = it + 1 == o_.iterations || (o_.eval_every > 0 && (it + 1) % o_.eval_every == 0);
    const bool checkpoint =
        !o_.checkpoint_dir.empty() && o_.checkpoint_every > 0 && (it + 1) % o_.checkpoint_every == 0;
    const bool optimize = OptimizeDue(it + 1);
    // The hand-over in flight (the second last step's) is waited for only when this iteration
    // ends with something that needs every block at its holder. (The log-likelihood does not:
    // a block in flight is read at its sender. Waiting for it made the evaluated iteration 1.9 s
    // longer on two hosts over 1 Gbit/s, 200 MB blocks.)
    if (distributed_ && (checkpoint || optimize)) WithRing([](auto& ring) { ring.Settle(); });
    if (optimize) Optimize();
    double seconds = Since(start) + carried, slowest = 0;
    collective::AllreduceOptions max;
    max.op = ReduceOp::kMax;
    collective::Allreduce(ctx_, &seconds, &slowest, 1, DType::kFloat64, max);
    trained += slowest;
    const IterationStats st = Stats(it + 1, trained, slowest, tokens, evaluated);
    result.history.push_back(st);
    if (rank_ == 0 && on_iteration) on_iteration(st);
    if (checkpoint) WriteCheckpoint(it + 1);
    if (!distributed_) continue;
    const auto mark = Now();
    WithRing([](auto& ring) { ring.Rotate(); });
    carried = Since(mark);  // counted in the next iteration's seconds
  }
  split.End(CountRing(), exchange_.get(), o_.iterations - result.first_iteration);
  ReportSplit(split, result);
  Finish(setup_seconds, result);
  return result;
}

// Collective: iteration `done`'s figures, evaluated if `evaluated`.
IterationStats Trainer::Stats(uint32_t done, double trained, double seconds, int64_t tokens, bool evaluated) {
  IterationStats st;
  st.iteration = done;
  st.seconds = trained;
  st.tokens_per_sec = static_cast<double>(tokens) / seconds;
  st.alpha_sum = o_.params.AlphaSum();
  st.beta = o_.params.beta;
  st.evaluated = evaluated;
  st.loglik = st.evaluated ? Evaluate() : std::numeric_limits<double>::quiet_NaN();
  st.loglik_per_token = st.loglik / static_cast<double>(tokens);
  st.test_perplexity =
      st.evaluated && o_.test_corpus ? TestPerplexity() : std::numeric_limits<double>::quiet_NaN();
  // Rank 0 computes the perplexity alone: the others wait for it here, not in the next
  // iteration's first hand-over, where the wait would count as that iteration's training time.
  if (st.evaluated && o_.test_corpus && distributed_) collective::Barrier(ctx_);
  return st;
}

void Trainer::ReportSplit(const TimeSplit& split, LdaResult& result) {
  if (!distributed_) return;
  std::vector<double> mine{split.sampling, split.waiting, split.totals_waiting, split.bytes}, slowest(4);
  collective::AllreduceOptions max;
  max.op = ReduceOp::kMax;
  collective::Allreduce(ctx_, mine.data(), slowest.data(), mine.size(), DType::kFloat64, max);
  result.sample_seconds = slowest[0];
  result.block_wait_seconds = slowest[1];
  result.totals_seconds = slowest[2];
  result.block_bytes_sent = slowest[3];
}

// The final model to rank 0, and every rank's document-topic counts.
void Trainer::Finish(double setup_seconds, LdaResult& result) {
  const auto start = Now();
  result.doc_begin = d0_;
  result.doc_end = d1_;
  if (o_.doc_topics) result.doc_topics.resize(layout_.num_docs());
  std::vector<uint32_t> scratch(o_.params.topics, 0);
  layout_.WithTopics([&](const auto* z, const auto*) {
    for (size_t d = 0; d < result.doc_topics.size(); ++d) {
      auto& out = result.doc_topics[d];
      for (uint32_t i = layout_.doc_begin(d); i < layout_.doc_end(d); ++i) ++scratch[z[i]];
      for (uint32_t i = layout_.doc_begin(d); i < layout_.doc_end(d); ++i) {
        if (scratch[z[i]] != 0) out.emplace_back(z[i], scratch[z[i]]), scratch[z[i]] = 0;
      }
      std::sort(out.begin(), out.end());
    }
  });
  result.totals = totals_;
  result.params = o_.params;
  const double token_bytes = static_cast<double>(layout_.bytes());
  if (distributed_) {
    // The tokens' arrays are not needed any more: freed before rank 0 gathers the whole model,
    // so that a process's peak is its training's (rank 0's grew by the model: 1 GB at K = 10,000
    // on 200 M tokens, on top of 2.4 GB of tokens). The ring keeps this process's tokens of a
    // block that is away in the layout's word order: it takes them back first, and rank 0 keeps
    // that array (0.4 GB there) for the gather, which leaves its tokens out.
    WithRing([&](auto& ring) {
      using Z = std::remove_pointer_t<decltype(ring.active())>;
      ring.Settle();
      HugePageVector<Z> kept;
      if (rank_ == 0) kept = layout_.TakeWordTopics<Z>();
      layout_ = TokenLayout();
      proposals_ = ProposalTables();
      renumbered_ = Corpus();
      if (rank_ == 0)
        result.model = WordTopicTable(o_.params.topics, corpus_.WordCounts(), o_.dense_min_count);
      ring.ForEachAtRoot([&](uint32_t b, const Z* topics) {
        for (auto w = static_cast<uint32_t>(block_cut_[b]); w < block_cut_[b + 1]; ++w) {
          for (uint32_t i = in_block_[w]; i < in_block_[w] + word_counts_[w]; ++i)
            result.model.Inc(external_[w], topics[i]);
        }
      });
    });
  } else {
    result.model = CountWords();
  }
  result.model_bytes = static_cast<double>(result.model.bytes());
  collective::AllreduceOptions max;
  max.op = ReduceOp::kMax;
  const double blocks =
      distributed_ ? WithRing([](auto& ring) { return static_cast<double>(ring.peak_bytes()); }) : 0;
  std::vector<double> mine{token_bytes, blocks, setup_seconds, Since(start)}, largest(mine.size());
  collective::Allreduce(ctx_, mine.data(), largest.data(), mine.size(), DType::kFloat64, max);
  result.token_bytes = largest[0];
  result.block_bytes = largest[1];
  result.setup_seconds = largest[2];
  result.finish_seconds = largest[3];
}

}  // namespace

SamplerKind ChooseSampler(SamplerKind asked, uint32_t topics, size_t vocab_size, int processes) {
  const uint64_t bytes = vocab_size * GibbsSampler::Stride(topics) * sizeof(int32_t);
  if (asked == SamplerKind::kAuto) {
    const bool gibbs = processes == 1 && topics <= kGibbsMostTopics && bytes <= kGibbsMostBytes;
    return gibbs ? SamplerKind::kGibbs : SamplerKind::kMh;
  }
  if (asked == SamplerKind::kGibbs && processes > 1)
    throw InvalidArgumentError("--sampler gibbs runs in one process; use mh (or auto) under mpirun");
  if (asked == SamplerKind::kGibbs && bytes > 4 * kGibbsMostBytes) {
    throw InvalidArgumentError(
        fmt::format("--sampler gibbs keeps {} words x {} topics of counts ({} MB): use mh", vocab_size,
                    topics, bytes >> 20));
  }
  return asked;
}

LdaResult TrainLda(comm::Context& ctx, const Corpus& corpus, const LdaOptions& options,
                   const std::function<void(const IterationStats&)>& on_iteration) {
  Trainer trainer(ctx, corpus, options);
  return trainer.Run(on_iteration);
}

}  // namespace parasol::apps::lda
