// `parasol lda`: topic models with LightLDA's sampler, alone or under mpirun; `parasol lda-infer`:
// topic proportions of new documents under a saved model.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "parasol/apps/lda/coherence.h"
#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/inference.h"
#include "parasol/apps/lda/lda_checkpoint.h"
#include "parasol/apps/lda/lda_trainer.h"
#include "parasol/apps/lda/model_io.h"
#include "parasol/comm/context.h"
#include "parasol/core/clock.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

namespace fs = std::filesystem;
using namespace apps::lda;

// Options the commands read a corpus with.
struct CorpusFlags {
  std::string path, format = "auto", vocab, stopwords;
  uint32_t min_count = 5;
  std::unordered_set<std::string> extra_stop;
  void Register(CLI::App* app, const std::string& flag = "--corpus") {
    app->add_option(flag, path,
                    "UCI folder (docword.*.txt + vocab.*.txt), LDA-C file, folder/.tar.gz of text "
                    "files, or a file of one document per line ([NAME<TAB>]text)")
        ->required();
    app->add_option("--format", format, "uci, ldac, text, lines or auto")->capture_default_str();
    app->add_option("--vocab", vocab, "LDA-C: the vocabulary file (default: vocab.txt beside the data)");
    app->add_option("--min-count", min_count, "text, lines: drop words seen fewer times")
        ->check(NonNegative())
        ->capture_default_str();
    app->add_option("--stopwords", stopwords, "text, lines: drop these words too (one per line, # comments)");
  }
  TextOptions Text() {
    TextOptions text;
    text.min_count = min_count;
    if (!stopwords.empty()) {
      extra_stop = ReadStopWords(stopwords);
      text.extra_stop_words = &extra_stop;
    }
    return text;
  }
};

// Documents left without a known word take no part; say so once, naming the first.
void WarnEmptyDocuments(const Corpus& corpus, const std::string& what) {
  size_t empty = 0, first = 0;
  for (size_t d = corpus.num_docs(); d-- > 0;) {
    if (corpus.doc_offsets[d + 1] == corpus.doc_offsets[d]) ++empty, first = d;
  }
  if (empty == 0) return;
  std::cerr << fmt::format(
      "parasol: warning: {} of {} documents{} have no known word (the first: '{}'); they get no "
      "topics\n",
      empty, corpus.num_docs(), what, corpus.doc_names[first]);
}

// Documents read for a model's vocabulary: text and lines keep only the model's words; UCI and
// LDA-C corpora are re-mapped onto it. `warn`: this process reports documents left empty (one
// rank of a job does).
Corpus ReadForVocabulary(const std::string& path, CorpusFlags& flags, const std::vector<std::string>& vocab,
                         const std::string& what, bool warn) {
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t w = 0; w < vocab.size(); ++w) index.emplace(vocab[w], w);
  TextOptions text = flags.Text();
  text.fixed_vocab = &index;
  Corpus read = ReadCorpus(path, ParseCorpusFormat(flags.format), text, flags.vocab);
  Corpus docs = read.vocab == vocab ? std::move(read) : MapToVocabulary(read, index, vocab.size());
  if (warn) WarnEmptyDocuments(docs, what);
  return docs;
}

class LdaCommand : public Command {
 public:
  explicit LdaCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("lda", "Train a topic model (LightLDA's Metropolis-Hastings sampler)");
    corpus_.Register(app_);
    auto& p = o_.params;
    app_->add_option("--topics", p.topics, "Number of topics K")
        ->check(Between(2, kMaxTopics))
        ->capture_default_str();
    app_->add_option("--iterations", o_.iterations, "Iterations (passes over the corpus)")
        ->check(Between(1, 1e9))
        ->capture_default_str();
    app_->add_option("--alpha", alpha_, "Per-topic Dirichlet parameter (default 50/K)")->check(Positive());
    app_->add_option("--beta", p.beta, "Per-word Dirichlet parameter")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--mh-steps", p.mh_steps, "Metropolis-Hastings steps (word + doc proposal) per token")
        ->check(Between(1, 1000))
        ->capture_default_str();
    app_->add_option("--sampler", sampler_,
                     "auto (gibbs for one process at K <= 256, else mh; mh when --mh-steps is given), "
                     "mh (Metropolis-Hastings, O(1) a token) or gibbs (collapsed Gibbs, O(K) a token)")
        ->capture_default_str();
    AddRunOptions(
        app_, &run_,
        {.metrics_columns = "iteration,seconds,tokens_per_sec,loglik_per_token[,test_perplexity]"
                            "[,alpha_sum,beta],umass,npmi (the topics' mean coherence, on the last row)",
         .threads = "Sampling threads per process"});
    app_->add_option("--blocks", o_.blocks,
                     "Across processes: word blocks rotating around them, a multiple of the "
                     "process count (0: two per process)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--dense-min-count", o_.dense_min_count,
                     "Words with this many tokens get dense rows (0: auto)");
    app_->add_option("--optimize-interval", o_.optimize_interval,
                     "Fit an asymmetric alpha and a symmetric beta to the topics every N iterations "
                     "(Minka's fixed point, as Mallet's; 0: keep --alpha and --beta)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--optimize-burn-in", o_.optimize_burn_in, "Iterations before the first fit")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--eval-every", o_.eval_every, "Log-likelihood every N iterations (0: at the end)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--test", test_,
                     "Held-out documents (any corpus format): their perplexity by document "
                     "completion at every evaluation");
    app_->add_option("--output", output_, "Write the model, vocabulary, topics.txt and doc_topics here");
    app_->add_flag(
        "--npy", npy_,
        "With --output: the distributions as NumPy arrays too (topic_word, doc_topic, doc_lengths, "
        "term_frequency .npy: pyLDAvis's inputs with vocab.txt)");
    app_->add_option("--top-words", top_words_, "Words per topic printed and in topics.txt")
        ->check(Between(1, 1e6))
        ->capture_default_str();
    app_->add_option("--coherence-words", coherence_words_,
                     "Each topic's coherence (UMass and NPMI, by documents of the training corpus) over "
                     "its top N words, at the end (0: none)")
        ->check(Between(0, 1000))
        ->capture_default_str();
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    if (sampler_ != "auto" && sampler_ != "mh" && sampler_ != "gibbs")
      throw InvalidArgumentError(fmt::format("--sampler '{}': auto, mh or gibbs", sampler_));
    ParseCorpusFormat(corpus_.format);
    if (!output_.empty()) CheckOutputFolder("--output", output_);
    if (npy_ && output_.empty())
      throw InvalidArgumentError("--npy writes into the --output folder: give one");
    CheckRunOptions(&run_, o_.iterations);
    o_.threads = run_.threads;
    ApplyRunOptions(run_, &o_);
  }

  int Run(comm::MpiRuntime* mpi) override {
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
    o_.params.alpha = app_->count("--alpha") > 0 ? alpha_ : 50.0 / o_.params.topics;
    Clock& clock = ctx.env().clock();
    const Clock::TimePoint began = clock.Now();
    Corpus corpus =
        ReadCorpus(corpus_.path, ParseCorpusFormat(corpus_.format), corpus_.Text(), corpus_.vocab);
    // Asking for MH steps without naming a sampler asks for the MH sampler.
    const bool mh = sampler_ == "mh" || (sampler_ == "auto" && app_->count("--mh-steps") > 0);
    o_.params.sampler = ChooseSampler(mh                    ? SamplerKind::kMh
                                      : sampler_ == "gibbs" ? SamplerKind::kGibbs
                                                            : SamplerKind::kAuto,
                                      o_.params.topics, corpus.vocab.size(), ctx.size());
    const bool root = ctx.rank() == 0;
    if (root) WarnEmptyDocuments(corpus, "");
    Corpus test;
    if (!test_.empty()) {
      test = ReadForVocabulary(test_, corpus_, corpus.vocab, " of --test (in the training vocabulary)", root);
      o_.test_corpus = &test;
    }
    WholeCommand whole;
    whole.reading = Seconds(clock.Now() - began);
    std::unique_ptr<CsvWriter> csv;
    if (root && !run_.metrics.empty()) {
      std::vector<std::string> columns{"iteration", "seconds", "tokens_per_sec", "loglik_per_token"};
      if (!test_.empty()) columns.push_back("test_perplexity");
      if (optimizing()) columns.insert(columns.end(), {"alpha_sum", "beta"});
      if (coherence_words_ > 0) columns.insert(columns.end(), {"umass", "npmi"});
      csv = std::make_unique<CsvWriter>(run_.metrics, columns);
    }
    if (root) {
      std::cout << fmt::format(
                       "# parasol lda: {} documents, {} words, {} tokens; K {}, alpha {:.4g}, beta {:.4g}, "
                       "{} sampler{}; "
                       "{} x {}{}\n",
                       corpus.num_docs(), corpus.vocab.size(), corpus.num_tokens(), o_.params.topics,
                       o_.params.alpha, o_.params.beta,
                       o_.params.sampler == SamplerKind::kMh ? "mh" : "gibbs",
                       o_.params.sampler == SamplerKind::kMh
                           ? fmt::format(" ({} MH steps)", o_.params.mh_steps)
                           : "",
                       Count(ctx.size(), "process"), Count(o_.threads, "thread"),
                       ctx.size() > 1
                           ? fmt::format(", {} word blocks", o_.blocks == 0 ? 2 * ctx.size() : o_.blocks)
                           : "")
                << fmt::format("{:>6} {:>9} {:>12} {:>12}{}{}\n", "iter", "seconds", "tokens/s", "loglik/tok",
                               test_.empty() ? "" : fmt::format(" {:>10}", "test ppl"),
                               optimizing() ? fmt::format(" {:>9} {:>9}", "alpha sum", "beta") : "")
                << std::flush;
    }
    if (root && !o_.resume_dir.empty()) {
      const CheckpointMeta m = ReadMeta(o_.resume_dir);
      std::cout << fmt::format("# resuming {} at iteration {} (of {}), written by {}\n", o_.resume_dir,
                               m.iteration, o_.iterations, Count(m.processes, "process"))
                << std::flush;
    }
    std::vector<std::string> last_row;  // the last iteration's, written with the coherence
    o_.doc_topics = !output_.empty();
    const Clock::TimePoint training = clock.Now();
    LdaResult r = TrainLda(ctx, corpus, o_, [&](const IterationStats& s) {
      std::string ll = s.evaluated ? fmt::format("{:.5f}", s.loglik_per_token) : "";
      std::string ppl = s.evaluated && !test_.empty() ? fmt::format("{:.2f}", s.test_perplexity) : "";
      std::cout << fmt::format("{:>6} {:>9.3f} {:>12.4g} {:>12}{}{}\n", s.iteration, s.seconds,
                               s.tokens_per_sec, ll, test_.empty() ? "" : fmt::format(" {:>10}", ppl),
                               optimizing() ? fmt::format(" {:>9.4g} {:>9.4g}", s.alpha_sum, s.beta) : "")
                << std::flush;
      if (csv) {
        std::vector<std::string> row{std::to_string(s.iteration), fmt::format("{:.6f}", s.seconds),
                                     fmt::format("{:.6g}", s.tokens_per_sec), ll};
        if (!test_.empty()) row.push_back(ppl);
        if (optimizing())
          row.insert(row.end(), {fmt::format("{:.6g}", s.alpha_sum), fmt::format("{:.6g}", s.beta)});
        if (coherence_words_ == 0) {
          csv->Row(row);
        } else if (s.iteration == o_.iterations) {
          last_row = std::move(row);
        } else {
          row.insert(row.end(), {"", ""});
          csv->Row(row);
        }
      }
    });
    whole.training = Seconds(clock.Now() - training);
    if (!output_.empty()) WriteOutputs(ctx, corpus, r);
    if (root) {
      LdaModel model{r.params.topics,    r.params.alpha, r.params.beta,       corpus.vocab,
                     std::move(r.model), r.totals,       r.params.topic_alpha};
      if (optimizing()) PrintFitted(model);
      std::optional<Coherence> coherence;
      if (coherence_words_ > 0) {
        const Clock::TimePoint scoring = clock.Now();
        coherence = TopicCoherence(corpus, model.TopWords(coherence_words_));
        whole.coherence = Seconds(clock.Now() - scoring);
        std::cout << fmt::format(
            "# coherence over each topic's top {} words, by documents of the training "
            "corpus: UMass mean {:.4g}, NPMI mean {:.4g}\n",
            coherence_words_, coherence->mean_umass, coherence->mean_npmi);
        if (csv && !last_row.empty()) {
          last_row.insert(last_row.end(), {fmt::format("{:.6g}", coherence->mean_umass),
                                           fmt::format("{:.6g}", coherence->mean_npmi)});
          csv->Row(last_row);
        }
      }
      if (csv) csv->Commit();
      const Coherence* per_topic = coherence ? &*coherence : nullptr;
      if (!output_.empty()) {
        SaveModel(output_, model);
        WriteTopics((fs::path(output_) / "topics.txt").string(), model, top_words_, per_topic);
        if (npy_) WriteTopicWordNpy(output_, model, corpus.WordCounts());
      }
      constexpr size_t kTopicsShown = 50;
      std::cout << FormatTopics(model, top_words_, kTopicsShown, per_topic);
      if (model.topics > kTopicsShown) {
        std::cout << fmt::format(
            "# the {} largest of {} topics{}\n", kTopicsShown, model.topics,
            output_.empty() ? " (--output writes all to topics.txt)" : "; all in topics.txt");
      }
      std::cout << fmt::format(
          "# memory: tokens {:.1f} MB{} (largest process); word-topic table {:.1f} MB\n", r.token_bytes / 1e6,
          ctx.size() > 1 ? fmt::format(", word blocks held {:.1f} MB", r.block_bytes / 1e6) : "",
          r.model_bytes / 1e6);
      if (ctx.size() > 1) {
        std::cout << fmt::format(
            "# per iteration (slowest process): sampling {:.3f} s, waiting for word blocks {:.3f} s, "
            "waiting for topic totals {:.3f} s; word blocks sent {:.1f} MB a process\n",
            r.sample_seconds, r.block_wait_seconds, r.totals_seconds, r.block_bytes_sent / 1e6);
      }
      PrintWholeCommand(whole, r);
    }
    return 0;
  }

 private:
  struct WholeCommand {
    double reading = 0, training = 0, coherence = 0;  // seconds: the corpora read, TrainLda, coherence
  };

  static double Seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }

  // Where the command's time went, rank 0's clock (set-up and the end: the slowest process's).
  void PrintWholeCommand(const WholeCommand& whole, const LdaResult& r) const {
    const auto iterations = static_cast<uint32_t>(r.history.size());
    const double between = std::max(0.0, whole.training - r.setup_seconds - r.finish_seconds);
    std::cout << fmt::format(
                     "# whole command: reading the corpus {:.2f} s, setting up {:.2f} s, {} {:.2f} s "
                     "({:.2f} s of it training), the end {:.2f} s{}\n",
                     whole.reading, r.setup_seconds, Count(iterations, "iteration"), between,
                     r.history.empty() ? 0.0 : r.history.back().seconds, r.finish_seconds,
                     coherence_words_ > 0 ? fmt::format(", coherence {:.2f} s", whole.coherence) : "")
              << std::flush;
  }

  void WriteOutputs(comm::Context& ctx, const Corpus& corpus, const LdaResult& r) {
    fs::create_directories(output_);
    std::vector<std::string> names(corpus.doc_names.begin() + static_cast<ptrdiff_t>(r.doc_begin),
                                   corpus.doc_names.begin() + static_cast<ptrdiff_t>(r.doc_end));
    std::string file = ctx.size() == 1 ? "doc_topics.txt" : fmt::format("doc_topics.{}.txt", ctx.rank());
    WriteDocTopics((fs::path(output_) / file).string(), names, r.doc_topics, r.params.Alphas());
    if (npy_) {
      WriteDocTopicNpy(output_, ctx.size() == 1 ? "" : fmt::format(".{}", ctx.rank()), r.doc_topics,
                       r.params.Alphas());
    }
  }

  bool optimizing() const { return o_.optimize_interval > 0; }

  static void PrintFitted(const LdaModel& m) {
    if (m.topic_alpha.empty()) {
      std::cout << "# hyperparameters not fitted: the run ended before --optimize-burn-in\n";
      return;
    }
    const auto [lo, hi] = std::minmax_element(m.topic_alpha.begin(), m.topic_alpha.end());
    std::cout << fmt::format(
        "# fitted hyperparameters: alpha sum {:.4g} (per topic {:.4g} to {:.4g}), beta {:.4g}\n",
        m.Params().AlphaSum(), *lo, *hi, m.beta);
  }

  CorpusFlags corpus_;
  LdaOptions o_;
  double alpha_ = 0;
  std::string sampler_ = "auto";
  RunOptions run_;
  std::string output_, test_;
  size_t top_words_ = 10;
  size_t coherence_words_ = 10;
  bool npy_ = false;
};

class LdaInferCommand : public Command {
 public:
  explicit LdaInferCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("lda-infer", "Topic proportions of new documents under a saved model");
    corpus_.Register(app_);
    app_->add_option("--model", model_, "The --output folder of parasol lda")->required();
    app_->add_option("--iterations", o_.iterations, "Sampling passes")
        ->check(Between(1, 1e9))
        ->capture_default_str();
    app_->add_option("--mh-steps", o_.mh_steps, "MH steps per token")
        ->check(Between(1, 1000))
        ->capture_default_str();
    AddRunOptions(app_, &run_, {.which = RunOptions::kThreads | RunOptions::kSeed});
    app_->add_option("--output", output_, "Write doc_topics here (default: standard output)");
    app_->add_flag("--perplexity", perplexity_,
                   "Also print the documents' held-out perplexity by document completion "
                   "(even tokens folded in, odd tokens scored)");
  }

  bool NeedsMpi() const override { return false; }

  void Validate() override {
    ParseCorpusFormat(corpus_.format);
    if (!output_.empty()) CheckOutputFile("--output", output_);
    o_.threads = run_.threads;
    o_.seed = run_.seed;
  }

  int Run(comm::MpiRuntime*) override {
    LdaModel model = LoadModel(model_);
    Corpus docs = ReadForVocabulary(corpus_.path, corpus_, model.vocab, " (in the model's vocabulary)", true);
    if (perplexity_) {
      const HeldOut h = DocumentCompletion(model, docs, o_);
      std::cerr << fmt::format(
          "held-out perplexity {:.2f} (document completion: {} tokens scored, log-likelihood "
          "{:.5f} per token)\n",
          h.perplexity(), h.tokens, h.log_likelihood / static_cast<double>(std::max<uint64_t>(1, h.tokens)));
    }
    std::vector<DocTopics> topics = FoldIn(model, docs, o_);
    if (output_.empty()) {
      WriteDocTopics(std::cout, docs.doc_names, topics, model.Params().Alphas());
    } else {
      WriteDocTopics(output_, docs.doc_names, topics, model.Params().Alphas());
    }
    return 0;
  }

 private:
  CorpusFlags corpus_;
  InferOptions o_;
  RunOptions run_;
  std::string model_, output_;
  bool perplexity_ = false;
};

class LdaCorpusCommand : public Command {
 public:
  explicit LdaCorpusCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("lda-corpus",
                                 "Write a corpus as parasol reads it: one document per line, "
                                 "NAME<TAB>words (the lines format)");
    corpus_.Register(app_);
    app_->add_option("--output", output_, "The file to write")->required();
  }

  bool NeedsMpi() const override { return false; }

  void Validate() override {
    ParseCorpusFormat(corpus_.format);
    CheckOutputFile("--output", output_);
  }

  int Run(comm::MpiRuntime*) override {
    Corpus corpus =
        ReadCorpus(corpus_.path, ParseCorpusFormat(corpus_.format), corpus_.Text(), corpus_.vocab);
    WarnEmptyDocuments(corpus, "");
    WriteLines(output_, corpus);
    std::cout << fmt::format("{}: {} documents, {} words, {} tokens\n", output_, corpus.num_docs(),
                             corpus.vocab.size(), corpus.num_tokens());
    return 0;
  }

 private:
  CorpusFlags corpus_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> MakeLdaCorpusCommand(CLI::App& parent) {
  return std::make_unique<LdaCorpusCommand>(parent);
}
std::unique_ptr<Command> MakeLdaCommand(CLI::App& parent) { return std::make_unique<LdaCommand>(parent); }
std::unique_ptr<Command> MakeLdaInferCommand(CLI::App& parent) {
  return std::make_unique<LdaInferCommand>(parent);
}

}  // namespace parasol::tools
