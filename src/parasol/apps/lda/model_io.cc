#include "parasol/apps/lda/model_io.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/npy_file.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

namespace {}  // namespace

LdaParams LdaModel::Params(uint32_t mh_steps) const {
  return LdaParams{.topics = topics,
                   .alpha = alpha,
                   .topic_alpha = topic_alpha,
                   .beta = beta,
                   .vocab_size = static_cast<uint32_t>(vocab.size()),
                   .mh_steps = mh_steps};
}

std::unordered_map<std::string, uint32_t> LdaModel::VocabIndex() const {
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t w = 0; w < vocab.size(); ++w) index.emplace(vocab[w], w);
  return index;
}

std::vector<std::vector<uint32_t>> LdaModel::TopWords(size_t n) const {
  // One pass over the rows' nonzeros (not K passes over V words).
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> scored(topics);
  for (uint32_t w = 0; w < table.num_words(); ++w) {
    if (table.resident(w))
      table.ForEachNonzero(w, [&](uint32_t k, int32_t c) { scored[k].emplace_back(c, w); });
  }
  std::vector<std::vector<uint32_t>> top(topics);
  for (uint32_t k = 0; k < topics; ++k) {
    auto& s = scored[k];
    const size_t m = std::min(n, s.size());
    std::partial_sort(s.begin(), s.begin() + static_cast<ptrdiff_t>(m), s.end(),
                      [](const auto& a, const auto& b) {
                        return a.first != b.first ? a.first > b.first : a.second < b.second;
                      });
    for (size_t i = 0; i < m; ++i) top[k].push_back(s[i].second);
  }
  return top;
}

void SaveModel(const std::string& dir, const LdaModel& m) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  WriteFileAtomically((fs::path(dir) / "vocab.txt").string(), [&](std::ostream& out) {
    for (const auto& w : m.vocab) out << w << '\n';
  });
  WriteFileAtomically((fs::path(dir) / "model.txt").string(), [&](std::ostream& out) {
    out << fmt::format("parasol-lda-model {} {} {} {:.17g} {:.17g}\n", m.topic_alpha.empty() ? 1 : 2,
                       m.topics, m.vocab.size(), m.alpha, m.beta);
    if (!m.topic_alpha.empty()) out << fmt::format("alpha {:.17g}\n", fmt::join(m.topic_alpha, " "));
    std::vector<std::pair<uint32_t, int32_t>> row;
    for (uint32_t w = 0; w < m.table.num_words(); ++w) {
      if (!m.table.resident(w)) continue;
      row.clear();
      m.table.ForEachNonzero(w, [&](uint32_t k, int32_t c) { row.emplace_back(k, c); });
      if (row.empty()) continue;
      std::sort(row.begin(), row.end());
      out << w;
      for (auto [k, c] : row) out << ' ' << k << ':' << c;
      out << '\n';
    }
  });
}

LdaModel LoadModel(const std::string& dir) {
  LdaModel m;
  // The vocabulary first: it bounds what the model's header may ask to allocate.
  const std::string vpath = (fs::path(dir) / "vocab.txt").string();
  LineReader vin(vpath);
  for (std::string_view word; vin.Next(&word);) m.vocab.emplace_back(word);
  const std::string path = (fs::path(dir) / "model.txt").string();
  LineReader in(path);
  std::string_view line;
  if (!in.Next(&line)) throw ParseError(path, 1, "empty file");
  size_t pos = 0;
  const bool magic = NextField(line, pos) == "parasol-lda-model";
  const std::string_view version = NextField(line, pos);
  if (!magic || (version != "1" && version != "2")) in.Fail("not a parasol LDA model (version 1 or 2)");
  m.topics = in.NumberIn<uint32_t>(NextField(line, pos), "number of topics", 1, kMaxTopics);
  auto vocab_size = in.Number<uint64_t>(NextField(line, pos), "vocabulary size");
  m.alpha = in.NumberIn<double>(NextField(line, pos), "alpha", 1e-300, 1e300);
  m.beta = in.NumberIn<double>(NextField(line, pos), "beta", 1e-300, 1e300);
  if (vocab_size != m.vocab.size()) {
    in.Fail(fmt::format("vocabulary size {}, but {} has {} words", vocab_size, vpath, m.vocab.size()));
  }
  if (version == "2") {
    if (!in.Next(&line) || (pos = 0, NextField(line, pos) != "alpha"))
      in.Fail("expected the line 'alpha a_0 ...'");
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
      if (m.topic_alpha.size() == m.topics) in.Fail(fmt::format("more than {} alpha values", m.topics));
      m.topic_alpha.push_back(in.NumberIn<double>(f, "alpha", 1e-300, 1e300));
    }
    if (m.topic_alpha.size() != m.topics)
      in.Fail(fmt::format("{} alpha values for {} topics", m.topic_alpha.size(), m.topics));
  }
  struct Entry {
    uint32_t w, k;
    int32_t c;
  };
  std::vector<Entry> entries;
  std::vector<uint64_t> counts(vocab_size, 0);
  while (in.Next(&line)) {
    pos = 0;
    auto w = in.Number<uint64_t>(NextField(line, pos), "word id");
    if (w >= vocab_size) in.Fail(fmt::format("word id {} not below {}", w, vocab_size));
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
      size_t colon = f.find(':');
      if (colon == std::string_view::npos) in.Fail(fmt::format("'{}' is not topic:count", f));
      auto k = in.Number<uint32_t>(f.substr(0, colon), "topic");
      auto c = in.Number<int32_t>(f.substr(colon + 1), "count");
      if (k >= m.topics || c <= 0) in.Fail(fmt::format("entry '{}' out of range", f));
      entries.push_back({static_cast<uint32_t>(w), k, c});
      counts[w] += static_cast<uint64_t>(c);
    }
  }
  m.table = WordTopicTable(m.topics, counts, std::max<uint32_t>(1, m.topics / 4));
  m.totals.assign(m.topics, 0);
  for (const Entry& e : entries) {
    if (m.table.Get(e.w, e.k) != 0)
      throw ParseError(path, 0, fmt::format("word {} topic {} listed twice", e.w, e.k));
    m.table.Add(e.w, e.k, e.c);
    m.totals[e.k] += e.c;
  }
  return m;
}

std::string FormatTopics(const LdaModel& m, size_t words_per_topic, size_t max_topics,
                         const Coherence* coherence) {
  std::string out;
  const auto top = m.TopWords(words_per_topic);
  std::vector<uint32_t> shown(m.topics);
  std::iota(shown.begin(), shown.end(), 0u);
  if (max_topics < m.topics) {
    // The largest topics, in topic order.
    std::partial_sort(shown.begin(), shown.begin() + static_cast<ptrdiff_t>(max_topics), shown.end(),
                      [&](uint32_t a, uint32_t b) {
                        return m.totals[a] != m.totals[b] ? m.totals[a] > m.totals[b] : a < b;
                      });
    shown.resize(max_topics);
    std::sort(shown.begin(), shown.end());
  }
  for (uint32_t k : shown) {
    out += fmt::format("topic {:>3} ({} tokens", k, m.totals[k]);
    if (!m.topic_alpha.empty()) out += fmt::format(", alpha {:.4g}", m.topic_alpha[k]);
    if (coherence) out += fmt::format(", umass {:.4g}, npmi {:.4g}", coherence->umass[k], coherence->npmi[k]);
    out += "):";
    for (uint32_t w : top[k]) out += " " + m.vocab[w];
    out += '\n';
  }
  return out;
}

void WriteTopics(const std::string& path, const LdaModel& m, size_t words_per_topic,
                 const Coherence* coherence) {
  WriteFileAtomically(
      path, [&](std::ostream& out) { out << FormatTopics(m, words_per_topic, m.topics, coherence); });
}

void WriteDocTopics(std::ostream& out, const std::vector<std::string>& names,
                    const std::vector<DocTopics>& docs, const std::vector<double>& alpha) {
  const double alpha_sum = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  std::vector<std::pair<uint32_t, uint32_t>> row;
  for (size_t d = 0; d < docs.size(); ++d) {
    uint64_t n = 0;
    for (auto [k, c] : docs[d]) n += c;
    row = docs[d];
    std::sort(row.begin(), row.end(),
              [](auto a, auto b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    out << names[d];
    const double denom = static_cast<double>(n) + alpha_sum;
    for (auto [k, c] : row) out << fmt::format(" {}:{:.4f}", k, (c + alpha[k]) / denom);
    out << '\n';
  }
}

void WriteDocTopics(const std::string& path, const std::vector<std::string>& names,
                    const std::vector<DocTopics>& docs, const std::vector<double>& alpha) {
  WriteFileAtomically(path, [&](std::ostream& out) { WriteDocTopics(out, names, docs, alpha); });
}

void WriteTopicWordNpy(const std::string& dir, const LdaModel& m, std::span<const uint64_t> term_frequency) {
  const uint64_t vocab = m.vocab.size();
  // Each topic's nonzero counts, from one pass over the word rows.
  std::vector<std::vector<std::pair<uint32_t, int32_t>>> nonzero(m.topics);
  for (uint32_t w = 0; w < m.table.num_words(); ++w) {
    if (m.table.resident(w))
      m.table.ForEachNonzero(w, [&](uint32_t k, int32_t c) { nonzero[k].emplace_back(w, c); });
  }
  const std::vector<uint64_t> shape{m.topics, vocab};
  WriteNpy<float>((fs::path(dir) / "topic_word.npy").string(), shape, [&](const auto& rows) {
    std::vector<float> row(vocab);
    for (uint32_t k = 0; k < m.topics; ++k) {
      const double denom = static_cast<double>(m.totals[k]) + static_cast<double>(vocab) * m.beta;
      std::fill(row.begin(), row.end(), static_cast<float>(m.beta / denom));
      for (auto [w, c] : nonzero[k]) row[w] = static_cast<float>((c + m.beta) / denom);
      rows(std::span<const float>(row));
    }
  });
  std::vector<int64_t> tf(term_frequency.begin(), term_frequency.end());
  const std::vector<uint64_t> vshape{tf.size()};
  WriteNpy<int64_t>((fs::path(dir) / "term_frequency.npy").string(), vshape,
                    [&](const auto& rows) { rows(std::span<const int64_t>(tf)); });
}

void WriteDocTopicNpy(const std::string& dir, const std::string& suffix, const std::vector<DocTopics>& docs,
                      const std::vector<double>& alpha) {
  const auto topics = static_cast<uint32_t>(alpha.size());
  const double alpha_sum = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  std::vector<int64_t> lengths;
  for (const DocTopics& d : docs) {
    int64_t n = 0;
    for (auto [k, c] : d) n += c;
    lengths.push_back(n);
  }
  const std::vector<uint64_t> shape{docs.size(), topics};
  WriteNpy<float>((fs::path(dir) / ("doc_topic" + suffix + ".npy")).string(), shape, [&](const auto& rows) {
    std::vector<float> row(topics);
    for (size_t d = 0; d < docs.size(); ++d) {
      const double denom = static_cast<double>(lengths[d]) + alpha_sum;
      for (uint32_t k = 0; k < topics; ++k) row[k] = static_cast<float>(alpha[k] / denom);
      for (auto [k, c] : docs[d]) row[k] = static_cast<float>((c + alpha[k]) / denom);
      rows(std::span<const float>(row));
    }
  });
  const std::vector<uint64_t> dshape{lengths.size()};
  WriteNpy<int64_t>((fs::path(dir) / ("doc_lengths" + suffix + ".npy")).string(), dshape,
                    [&](const auto& rows) { rows(std::span<const int64_t>(lengths)); });
}

}  // namespace parasol::apps::lda
