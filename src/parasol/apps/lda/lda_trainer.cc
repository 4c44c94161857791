#include "parasol/apps/lda/lda_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>

#include <fmt/format.h>

#include "parasol/apps/lda/lda_checkpoint.h"
#include "parasol/apps/lda/loglik.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/core/thread_pool.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::apps::lda {

namespace {

constexpr uint32_t kWordTable = 1;
constexpr uint32_t kTotalsTable = 2;
constexpr size_t kReadChunk = 4096;  // rows per ReadLatest when evaluating

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Assigns items to `parts` parts, heaviest first to the lightest part (balanced to within the
// heaviest item).
std::vector<uint32_t> Balance(std::span<const uint64_t> weights, uint32_t parts) {
  std::vector<uint32_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return weights[a] > weights[b]; });
  using Load = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> load;
  for (uint32_t p = 0; p < parts; ++p) load.push({0, p});
  std::vector<uint32_t> part(weights.size());
  for (uint32_t i : order) {
    auto [l, p] = load.top();
    load.pop();
    part[i] = p;
    load.push({l + weights[i], p});
  }
  return part;
}

// Boundaries cutting documents [d0, d1) into `parts` contiguous ranges of about equal tokens.
std::vector<size_t> SplitDocs(std::span<const uint64_t> offsets, size_t d0, size_t d1, uint32_t parts) {
  std::vector<size_t> cut{d0};
  const uint64_t base = offsets[d0], total = offsets[d1] - base;
  size_t d = d0;
  for (uint32_t p = 1; p < parts; ++p) {
    const uint64_t goal = base + total * p / parts;
    while (d < d1 && offsets[d + 1] <= goal) ++d;
    cut.push_back(std::max(d, cut.back()));
  }
  cut.push_back(d1);
  return cut;
}

class Trainer {
 public:
  Trainer(comm::Context& ctx, const Corpus& corpus, const LdaOptions& o);
  LdaResult Run(const std::function<void(const IterationStats&)>& on_iteration);

 private:
  void Layout();
  uint32_t Start();
  void LoadBlock(uint32_t b);
  void SampleBlock(uint32_t b, uint32_t iteration);
  void PushBlock();
  double Evaluate();
  void ForEachLatestCount(std::span<const uint64_t> rows, const std::function<void(uint32_t, uint32_t, int32_t)>& fn);
  std::vector<int64_t> LatestTotals();
  void WriteCheckpoint(uint32_t iteration);
  void Finish(LdaResult& result);
  uint32_t BlockAt(uint32_t step) const { return (step + static_cast<uint32_t>(rank_) * o_.blocks / size_) % o_.blocks; }

  comm::Context& ctx_;
  const Corpus& corpus_;
  LdaOptions o_;
  const int rank_, size_;
  const bool distributed_;
  const uint32_t threads_;
  std::vector<uint64_t> word_counts_;
  std::vector<uint32_t> word_sub_;
  std::vector<std::vector<uint32_t>> sub_words_;  // per sub-block: the words this process has
  std::vector<bool> local_word_;
  size_t d0_ = 0, d1_ = 0;
  std::vector<size_t> thread_docs_;  // local document boundaries per thread
  TokenStore ts_;
  WordTopicTable table_;
  std::vector<int64_t> totals_;
  std::vector<int64_t> pulled_totals_;
  std::vector<std::unique_ptr<ThreadSampler>> samplers_;
  ThreadPool pool_;
  LogLikelihood loglik_;
  std::unique_ptr<ps::ParameterServer> ps_;
  std::unique_ptr<ps::Worker> worker_;
  double model_bytes_ = 0;
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
  const LdaParams& p = o_.params;
  if (p.topics < 2) throw InvalidArgumentError(fmt::format("--topics {}: need at least 2", p.topics));
  if (!(p.alpha > 0) || !(p.beta > 0)) throw InvalidArgumentError("--alpha and --beta must be positive");
  if (p.mh_steps == 0) throw InvalidArgumentError("--mh-steps must be at least 1");
  if (o_.blocks == 0) o_.blocks = static_cast<uint32_t>(size_);
  if (corpus.num_tokens() == 0) throw InvalidArgumentError("the corpus has no tokens");
  if (corpus.num_tokens() >= (uint64_t{1} << 31)) throw InvalidArgumentError("more than 2^31 tokens per corpus");
  if (o_.dense_min_count == 0) o_.dense_min_count = std::max<uint64_t>(1, p.topics / 4);
  Layout();
}

void Trainer::Layout() {
  word_counts_ = corpus_.WordCounts();
  const uint32_t subs = o_.blocks * threads_;
  std::vector<uint32_t> block = Balance(word_counts_, o_.blocks);
  word_sub_.assign(word_counts_.size(), 0);
  for (uint32_t b = 0; b < o_.blocks; ++b) {
    std::vector<uint32_t> members;
    std::vector<uint64_t> weights;
    for (uint32_t w = 0; w < block.size(); ++w) {
      if (block[w] == b) members.push_back(w), weights.push_back(word_counts_[w]);
    }
    std::vector<uint32_t> sub = Balance(weights, threads_);
    for (size_t i = 0; i < members.size(); ++i) word_sub_[members[i]] = b * threads_ + sub[i];
  }
  std::vector<size_t> ranks = SplitDocs(corpus_.doc_offsets, 0, corpus_.num_docs(), static_cast<uint32_t>(size_));
  d0_ = ranks[static_cast<size_t>(rank_)];
  d1_ = ranks[static_cast<size_t>(rank_) + 1];
  Rng init(o_.seed, static_cast<uint64_t>(rank_), 0xffffffff, 0);
  ts_ = TokenStore::Build(corpus_, d0_, d1_, word_sub_, subs, o_.params.topics, init);
  thread_docs_ = SplitDocs(ts_.doc_offsets, 0, ts_.num_docs(), threads_);
  local_word_.assign(word_counts_.size(), false);
  for (uint32_t w : ts_.words) local_word_[w] = true;
  sub_words_.assign(subs, {});
  for (uint32_t w = 0; w < word_counts_.size(); ++w) {
    if (local_word_[w]) sub_words_[word_sub_[w]].push_back(w);
  }
  for (uint32_t t = 0; t < threads_; ++t) samplers_.push_back(std::make_unique<ThreadSampler>(o_.params));
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
          "{}: checkpoint of {} topics, {} words, {} documents, {} tokens; this run has {}, {}, {}, {}", o_.resume_dir,
          m.topics, m.vocab, m.docs, m.tokens, o_.params.topics, corpus_.vocab.size(), corpus_.num_docs(),
          corpus_.num_tokens()));
    }
    std::vector<uint32_t> all = ReadAllTopics(o_.resume_dir, m);
    const uint64_t b = corpus_.doc_offsets[d0_], e = corpus_.doc_offsets[d1_];
    ts_.SetCorpusOrderTopics(std::span<const uint32_t>(all).subspan(b, e - b));
    first = m.iteration;
  }
  const uint32_t k = o_.params.topics;
  totals_.assign(k, 0);
  if (!distributed_) {
    table_ = WordTopicTable(k, word_counts_, o_.dense_min_count);
    ts_.CountInto(table_, totals_);
    model_bytes_ = static_cast<double>(table_.bytes());
    return first;
  }
  // Every process adds its counts to the shared tables; the barrier makes them all visible.
  ps_ = std::make_unique<ps::ParameterServer>(ctx_, ps::PsOptions{.workers_per_process = 1, .timeout_ms = o_.timeout_ms});
  const auto model = o_.staleness == 0 ? ps::Consistency::kBsp : ps::Consistency::kEssp;
  ps_->CreateTable({.id = kWordTable, .kind = ps::RowKind::kSparse, .dtype = DType::kInt32, .width = k,
                    .num_rows = corpus_.vocab.size(), .consistency = model, .staleness = o_.staleness});
  ps_->CreateTable({.id = kTotalsTable, .kind = ps::RowKind::kDense, .dtype = DType::kInt64, .width = k,
                    .num_rows = 1, .consistency = model, .staleness = o_.staleness});
  worker_ = ps_->CreateWorker(0);
  auto words = worker_->GetTable<int32_t>(kWordTable);
  for (size_t i = 0; i < ts_.words.size(); ++i) words.Inc(ts_.words[i], ts_.z[i], 1);
  std::vector<int64_t> counts(k, 0);
  for (uint32_t t : ts_.z) ++counts[t];
  worker_->GetTable<int64_t>(kTotalsTable).IncRow(0, counts);
  worker_->Clock();
  worker_->GlobalBarrier();
  return first;
}

// Distributed: makes block b's rows (of the words this process has) and the totals resident,
// as fresh as the staleness bound requires.
void Trainer::LoadBlock(uint32_t b) {
  if (!distributed_) return;
  std::vector<bool> resident(word_counts_.size(), false);
  std::vector<uint64_t> rows;
  for (uint32_t s = b * threads_; s < (b + 1) * threads_; ++s) {
    for (uint32_t w : sub_words_[s]) resident[w] = true, rows.push_back(w);
  }
  table_ = WordTopicTable(o_.params.topics, word_counts_, o_.dense_min_count, &resident);
  model_bytes_ = std::max(model_bytes_, static_cast<double>(table_.bytes()));
  auto words = worker_->GetTable<int32_t>(kWordTable);
  words.Prefetch(rows);
  for (uint64_t w : rows) {
    words.Get(w).ForEachStored([&](uint64_t k, int32_t c) {
      if (c != 0) table_.Add(static_cast<uint32_t>(w), static_cast<uint32_t>(k), c);
    });
  }
  auto totals = worker_->GetTable<int64_t>(kTotalsTable).Get(0);
  for (uint32_t k = 0; k < o_.params.topics; ++k) totals_[k] = totals[k];
  pulled_totals_ = totals_;
}

void Trainer::SampleBlock(uint32_t b, uint32_t iteration) {
  for (uint32_t r = 0; r < threads_; ++r) {
    pool_.ParallelFor(0, threads_, [&](size_t i) {
      const uint32_t sub = b * threads_ + static_cast<uint32_t>((i + r) % threads_);
      ThreadSampler& s = *samplers_[i];
      s.set_log_changes(distributed_);
      s.BeginRound(table_, totals_, sub_words_[sub]);
      Rng rng(o_.seed, static_cast<uint64_t>(rank_), i, (uint64_t{iteration} << 32) | (b * threads_ + r));
      s.Sample(ts_, thread_docs_[i], thread_docs_[i + 1], sub, table_, rng);
    });
    for (auto& s : samplers_) {
      std::vector<int64_t> d = s->TotalsDelta();
      for (size_t k = 0; k < d.size(); ++k) totals_[k] += d[k];
    }
  }
}

// Distributed: sends this block's changes (coalesced per entry by the worker) and ends the clock.
void Trainer::PushBlock() {
  if (!distributed_) return;
  auto words = worker_->GetTable<int32_t>(kWordTable);
  for (auto& s : samplers_) {
    for (const TopicChange& c : s->changes()) {
      words.Inc(c.word, c.from, -1);
      words.Inc(c.word, c.to, 1);
    }
    s->changes().clear();
  }
  std::vector<int64_t> delta(totals_.size());
  for (size_t k = 0; k < delta.size(); ++k) delta[k] = totals_[k] - pulled_totals_[k];
  worker_->GetTable<int64_t>(kTotalsTable).IncRow(0, delta);
  worker_->Clock();
}

// Collective: log p(w, z) of the current state.
double Trainer::Evaluate() {
  std::vector<std::vector<int32_t>> scratch(threads_, std::vector<int32_t>(o_.params.topics, 0));
  std::vector<double> parts(threads_, 0);
  pool_.ParallelFor(0, threads_, [&](size_t i) {
    parts[i] = loglik_.DocPart(ts_, thread_docs_[i], thread_docs_[i + 1], scratch[i]);
  });
  double sum = std::accumulate(parts.begin(), parts.end(), 0.0);
  if (!distributed_) {
    std::vector<uint32_t> all(word_counts_.size());
    std::iota(all.begin(), all.end(), 0u);
    return sum + loglik_.WordRowsPart(table_, all) + loglik_.TotalsPart(totals_);
  }
  worker_->GlobalBarrier();  // every change is at its shard
  std::vector<uint64_t> rows;
  for (uint64_t w = static_cast<uint64_t>(rank_); w < word_counts_.size(); w += static_cast<uint64_t>(size_)) {
    rows.push_back(w);
  }
  ForEachLatestCount(rows, [&](uint32_t, uint32_t, int32_t c) { sum += loglik_.WordEntry(c); });
  if (rank_ == 0) sum += loglik_.TotalsPart(LatestTotals());
  double total = 0;
  collective::Allreduce(ctx_, &sum, &total, 1, DType::kFloat64);
  return total;
}

// Distributed, outside any clock: fn(word, topic, count) for every nonzero count the shards hold
// now in `rows` of the word-topic table, read a chunk at a time.
void Trainer::ForEachLatestCount(std::span<const uint64_t> rows, const std::function<void(uint32_t, uint32_t, int32_t)>& fn) {
  for (size_t i = 0; i < rows.size(); i += kReadChunk) {
    std::span<const uint64_t> chunk = rows.subspan(i, std::min(kReadChunk, rows.size() - i));
    std::vector<ps::Row> got = ps_->ReadLatest(kWordTable, chunk);
    for (size_t j = 0; j < got.size(); ++j) {
      got[j].SparseData<int32_t>()->ForEach([&](uint64_t k, int32_t c) {
        if (c != 0) fn(static_cast<uint32_t>(chunk[j]), static_cast<uint32_t>(k), c);
      });
    }
  }
}

std::vector<int64_t> Trainer::LatestTotals() {
  const uint64_t zero = 0;
  std::vector<ps::Row> t = ps_->ReadLatest(kTotalsTable, std::span<const uint64_t>(&zero, 1));
  std::vector<int64_t> totals(o_.params.topics);
  for (uint32_t k = 0; k < o_.params.topics; ++k) totals[k] = t[0].Get<int64_t>(k);
  return totals;
}

void Trainer::WriteCheckpoint(uint32_t iteration) {
  CheckpointMeta m{iteration, o_.params.topics, corpus_.vocab.size(), corpus_.num_docs(), corpus_.num_tokens(),
                   static_cast<uint32_t>(size_), o_.params.alpha, o_.params.beta, o_.seed};
  int64_t ok = 1, all = 0;
  std::string why;
  try {
    WriteTopicsPart(o_.checkpoint_dir, rank_, m, d0_, d1_, ts_.CorpusOrderTopics());
  } catch (const Error& e) {
    ok = 0, why = e.what();
  }
  collective::Allreduce(ctx_, &ok, &all, 1, DType::kInt64);  // every part is written
  if (!ok) throw IoError(why);
  if (all != size_) throw IoError(fmt::format("checkpoint {}: another rank failed to write its part", o_.checkpoint_dir));
  if (rank_ == 0) WriteMeta(o_.checkpoint_dir, m);
}

}  // namespace

namespace {

LdaResult Trainer::Run(const std::function<void(const IterationStats&)>& on_iteration) {
  LdaResult result;
  result.first_iteration = Start();
  int64_t local_tokens = static_cast<int64_t>(ts_.num_tokens()), tokens = 0;
  collective::Allreduce(ctx_, &local_tokens, &tokens, 1, DType::kInt64);
  result.tokens = static_cast<uint64_t>(tokens);
  double trained = 0;
  for (uint32_t it = result.first_iteration; it < o_.iterations; ++it) {
    const auto start = Clock::now();
    for (uint32_t step = 0; step < o_.blocks; ++step) {
      const uint32_t b = BlockAt(step);
      LoadBlock(b);
      SampleBlock(b, it);
      PushBlock();
    }
    double seconds = Since(start), slowest = 0;
    collective::AllreduceOptions max;
    max.op = ReduceOp::kMax;
    collective::Allreduce(ctx_, &seconds, &slowest, 1, DType::kFloat64, max);
    trained += slowest;
    IterationStats st;
    st.iteration = it + 1;
    st.seconds = trained;
    st.tokens_per_sec = static_cast<double>(tokens) / slowest;
    st.evaluated = it + 1 == o_.iterations || (o_.eval_every > 0 && (it + 1) % o_.eval_every == 0);
    st.loglik = st.evaluated ? Evaluate() : std::numeric_limits<double>::quiet_NaN();
    st.loglik_per_token = st.loglik / static_cast<double>(tokens);
    result.history.push_back(st);
    if (rank_ == 0 && on_iteration) on_iteration(st);
    if (!o_.checkpoint_dir.empty() && o_.checkpoint_every > 0 && (it + 1) % o_.checkpoint_every == 0) {
      WriteCheckpoint(it + 1);
    }
  }
  Finish(result);
  return result;
}

// The final model to rank 0, and every rank's document-topic counts.
void Trainer::Finish(LdaResult& result) {
  result.doc_begin = d0_;
  result.doc_end = d1_;
  result.doc_topics.resize(ts_.num_docs());
  std::vector<uint32_t> scratch(o_.params.topics, 0);
  for (size_t d = 0; d < ts_.num_docs(); ++d) result.doc_topics[d] = ts_.TopicCounts(d, scratch);
  collective::AllreduceOptions max;
  max.op = ReduceOp::kMax;
  double bytes = model_bytes_;
  collective::Allreduce(ctx_, &model_bytes_, &bytes, 1, DType::kFloat64, max);
  result.model_bytes = bytes;
  if (!distributed_) {
    result.model = std::move(table_);
    result.totals = totals_;
    return;
  }
  worker_->GlobalBarrier();
  if (rank_ == 0) {
    result.model = WordTopicTable(o_.params.topics, word_counts_, o_.dense_min_count);
    std::vector<uint64_t> rows(word_counts_.size());
    std::iota(rows.begin(), rows.end(), 0u);
    ForEachLatestCount(rows, [&](uint32_t w, uint32_t k, int32_t c) { result.model.Add(w, k, c); });
    result.totals = LatestTotals();
  }
  worker_.reset();
  ps_->Shutdown();
}

}  // namespace

LdaResult TrainLda(comm::Context& ctx, const Corpus& corpus, const LdaOptions& options,
                   const std::function<void(const IterationStats&)>& on_iteration) {
  Trainer trainer(ctx, corpus, options);
  return trainer.Run(on_iteration);
}

}  // namespace parasol::apps::lda
