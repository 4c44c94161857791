#include "parasol/apps/lda/lda_checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <span>
#include <string_view>

#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"
#include "parasol/core/section_file.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

namespace {

// Far past any cluster; bounds the loop over part files that meta.txt asks for.
constexpr uint32_t kMaxProcesses = 1 << 20;

// A part's "part" section: iteration, topics, vocab, docs, tokens, first document, end.
constexpr size_t kPartFields = 7;

std::string PartPath(const std::string& dir, int rank, uint32_t processes) {
  return (fs::path(dir) / fmt::format("topics.{}-of-{}.bin", rank, processes)).string();
}

}  // namespace

void WriteTopicsPart(FileSystem& fs, const std::string& dir, int rank, const CheckpointMeta& meta,
                     uint64_t doc_begin, uint64_t doc_end, const std::vector<uint32_t>& topics) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  const uint64_t part[kPartFields] = {meta.iteration, meta.topics, meta.vocab, meta.docs,
                                      meta.tokens,    doc_begin,   doc_end};
  SectionWriter w("lda-topics");
  w.Add("part", std::span<const uint64_t>(part));
  w.Add("topics", topics);
  w.Write(fs, PartPath(dir, rank, meta.processes));
}

void WriteMeta(FileSystem& fs, const std::string& dir, const CheckpointMeta& m) {
  KeyValueWriter w("parasol-lda-checkpoint", 1);
  w.Add("iteration", m.iteration)
      .Add("topics", m.topics)
      .Add("vocab", m.vocab)
      .Add("docs", m.docs)
      .Add("tokens", m.tokens)
      .Add("processes", m.processes)
      .Add("alpha", m.alpha)
      .Add("beta", m.beta)
      .Add("seed", m.seed);
  // One word: the values joined by commas, each in the shortest form that reads back exactly.
  if (!m.topic_alpha.empty()) w.Add("topic_alpha", fmt::format("{}", fmt::join(m.topic_alpha, ",")));
  w.Write(fs, (fs::path(dir) / "meta.txt").string());
}

CheckpointMeta ReadMeta(const std::string& dir) {
  const KeyValueFile f =
      KeyValueFile::Read((fs::path(dir) / "meta.txt").string(), "parasol-lda-checkpoint", 1,
                         {"iteration", "topics", "vocab", "docs", "tokens", "processes", "alpha", "beta",
                          "seed", "topic_alpha"});
  CheckpointMeta m;
  m.iteration = f.Number<uint32_t>("iteration");
  m.topics = f.Number<uint32_t>("topics");
  m.vocab = f.Number<uint64_t>("vocab");
  m.docs = f.Number<uint64_t>("docs");
  m.tokens = f.Number<uint64_t>("tokens");
  m.processes = f.NumberIn<uint32_t>("processes", 1, kMaxProcesses);
  m.alpha = f.Number<double>("alpha");
  m.beta = f.Number<double>("beta");
  m.seed = f.Number<uint64_t>("seed");
  if (f.Has("topic_alpha")) {
    const std::string_view all = f.Text("topic_alpha");
    for (size_t at = 0; at <= all.size();) {
      const size_t comma = std::min(all.find(',', at), all.size());
      if (m.topic_alpha.size() == m.topics)
        f.Fail("topic_alpha", fmt::format("more than {} values", m.topics));
      double a = 0;
      if (!ParseNumber(all.substr(at, comma - at), &a) || !(a > 0))
        f.Fail("topic_alpha", fmt::format("'{}' is not a positive number", all.substr(at, comma - at)));
      m.topic_alpha.push_back(a);
      at = comma + 1;
    }
    if (m.topic_alpha.size() != m.topics)
      f.Fail("topic_alpha", fmt::format("{} values for {} topics", m.topic_alpha.size(), m.topics));
  }
  return m;
}

std::vector<uint32_t> ReadAllTopics(const std::string& dir, const CheckpointMeta& meta) {
  std::vector<uint32_t> all(meta.tokens);
  uint64_t expected_begin = 0, filled = 0;
  for (uint32_t r = 0; r < meta.processes; ++r) {
    const SectionReader in(PartPath(dir, static_cast<int>(r), meta.processes), "lda-topics");
    // iteration, topics, vocab, docs, tokens, first document, end of its documents
    const std::vector<uint64_t> h = in.Get<uint64_t>("part", kPartFields);
    if (h[0] != meta.iteration || h[1] != meta.topics || h[2] != meta.vocab || h[3] != meta.docs ||
        h[4] != meta.tokens) {
      in.Fail(fmt::format("belongs to another checkpoint (iteration {}, meta.txt says {})", h[0],
                          meta.iteration));
    }
    const uint64_t count = in.Count("topics");
    if (count > meta.tokens - filled) in.Fail("more tokens than meta.txt says");
    if (h[5] != expected_begin) in.Fail("documents do not follow the previous part");
    in.ReadInto("topics", all.data() + filled, sizeof(uint32_t), count);
    for (uint64_t i = 0; i < count; ++i) {
      if (all[filled + i] >= meta.topics)
        in.Fail(fmt::format("token {} has topic {} of {}", i, all[filled + i], meta.topics));
    }
    filled += count;
    expected_begin = h[6];
  }
  if (filled != meta.tokens || expected_begin != meta.docs)
    throw ParseError(dir, 0, "the parts do not cover the corpus");
  return all;
}

}  // namespace parasol::apps::lda
