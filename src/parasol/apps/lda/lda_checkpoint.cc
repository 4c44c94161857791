#include "parasol/apps/lda/lda_checkpoint.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "parasol/core/atomic_file.h"
#include "parasol/core/checksum.h"
#include "parasol/core/error.h"
#include "parasol/core/key_value_file.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

namespace {

// Far past any cluster; bounds the loop over part files that meta.txt asks for.
constexpr uint32_t kMaxProcesses = 1 << 20;

constexpr char kMagic[8] = {'P', 'S', 'L', 'D', 'A', 'Z', '0', '1'};

std::string PartPath(const std::string& dir, int rank, uint32_t processes) {
  return (fs::path(dir) / fmt::format("topics.{}-of-{}.bin", rank, processes)).string();
}

struct PartHeader {
  char magic[8];
  uint32_t iteration, topics;
  uint64_t vocab, docs, tokens, doc_begin, doc_end, part_tokens;
};

void WriteAtomically(const std::string& path, const std::string& bytes) {
  WriteFileAtomically(
      path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

}  // namespace

void WriteTopicsPart(const std::string& dir, int rank, const CheckpointMeta& meta, uint64_t doc_begin,
                     uint64_t doc_end, const std::vector<uint32_t>& topics) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  PartHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.iteration = meta.iteration;
  h.topics = meta.topics;
  h.vocab = meta.vocab;
  h.docs = meta.docs;
  h.tokens = meta.tokens;
  h.doc_begin = doc_begin;
  h.doc_end = doc_end;
  h.part_tokens = topics.size();
  std::string bytes(sizeof(h) + topics.size() * sizeof(uint32_t) + sizeof(uint64_t), '\0');
  std::memcpy(bytes.data(), &h, sizeof(h));
  std::memcpy(bytes.data() + sizeof(h), topics.data(), topics.size() * sizeof(uint32_t));
  uint64_t sum = Fnv1a64(bytes.data(), bytes.size() - sizeof(uint64_t));
  std::memcpy(bytes.data() + bytes.size() - sizeof(uint64_t), &sum, sizeof(sum));
  WriteAtomically(PartPath(dir, rank, meta.processes), bytes);
}

void WriteMeta(const std::string& dir, const CheckpointMeta& m) {
  WriteAtomically(
      (fs::path(dir) / "meta.txt").string(),
      fmt::format("parasol-lda-checkpoint 1\niteration {}\ntopics {}\nvocab {}\ndocs {}\ntokens {}\n"
                  "processes {}\nalpha {:.17g}\nbeta {:.17g}\nseed {}\n",
                  m.iteration, m.topics, m.vocab, m.docs, m.tokens, m.processes, m.alpha, m.beta, m.seed));
}

CheckpointMeta ReadMeta(const std::string& dir) {
  const KeyValueFile f = KeyValueFile::Read(
      (fs::path(dir) / "meta.txt").string(), "parasol-lda-checkpoint", 1,
      {"iteration", "topics", "vocab", "docs", "tokens", "processes", "alpha", "beta", "seed"});
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
  return m;
}

std::vector<uint32_t> ReadAllTopics(const std::string& dir, const CheckpointMeta& meta) {
  std::vector<uint32_t> all(meta.tokens);
  uint64_t expected_begin = 0, filled = 0;
  for (uint32_t r = 0; r < meta.processes; ++r) {
    const std::string path = PartPath(dir, static_cast<int>(r), meta.processes);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(fmt::format("{}: cannot open (incomplete checkpoint)", path));
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    PartHeader h{};
    if (bytes.size() < sizeof(h) + sizeof(uint64_t)) throw ParseError(path, 0, "truncated");
    std::memcpy(&h, bytes.data(), sizeof(h));
    if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
      throw ParseError(path, 0, "not a parasol LDA topics file");
    uint64_t sum;
    std::memcpy(&sum, bytes.data() + bytes.size() - sizeof(sum), sizeof(sum));
    // Bounded before it is multiplied: a crafted count must not wrap the size check below.
    if (h.part_tokens > meta.tokens - filled) throw ParseError(path, 0, "more tokens than meta.txt says");
    if (bytes.size() != sizeof(h) + h.part_tokens * sizeof(uint32_t) + sizeof(uint64_t) ||
        Fnv1a64(bytes.data(), bytes.size() - sizeof(sum)) != sum) {
      throw ParseError(path, 0, "checksum mismatch: the file is corrupt or truncated");
    }
    if (h.iteration != meta.iteration || h.topics != meta.topics || h.vocab != meta.vocab ||
        h.docs != meta.docs || h.tokens != meta.tokens) {
      throw ParseError(path, 0,
                       fmt::format("belongs to another checkpoint (iteration {}, meta.txt says {})",
                                   h.iteration, meta.iteration));
    }
    if (h.doc_begin != expected_begin || filled + h.part_tokens > meta.tokens) {
      throw ParseError(path, 0, "documents do not follow the previous part");
    }
    const auto* z = reinterpret_cast<const uint32_t*>(bytes.data() + sizeof(h));
    for (uint64_t i = 0; i < h.part_tokens; ++i) {
      if (z[i] >= meta.topics)
        throw ParseError(path, 0, fmt::format("token {} has topic {} of {}", i, z[i], meta.topics));
    }
    std::memcpy(all.data() + filled, z, h.part_tokens * sizeof(uint32_t));
    filled += h.part_tokens;
    expected_begin = h.doc_end;
  }
  if (filled != meta.tokens || expected_begin != meta.docs)
    throw ParseError(dir, 0, "the parts do not cover the corpus");
  return all;
}

}  // namespace parasol::apps::lda
