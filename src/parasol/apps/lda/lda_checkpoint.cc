#include "parasol/apps/lda/lda_checkpoint.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'P', 'S', 'L', 'D', 'A', 'Z', '0', '1'};

uint64_t Fnv(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string PartPath(const std::string& dir, int rank, uint32_t processes) {
  return (fs::path(dir) / fmt::format("topics.{}-of-{}.bin", rank, processes)).string();
}

struct PartHeader {
  char magic[8];
  uint32_t iteration, topics;
  uint64_t vocab, docs, tokens, doc_begin, doc_end, part_tokens;
};

void WriteAtomically(const std::string& path, const std::string& bytes) {
  WriteFileAtomically(path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
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
  uint64_t sum = Fnv(bytes.data(), bytes.size() - sizeof(uint64_t));
  std::memcpy(bytes.data() + bytes.size() - sizeof(uint64_t), &sum, sizeof(sum));
  WriteAtomically(PartPath(dir, rank, meta.processes), bytes);
}

void WriteMeta(const std::string& dir, const CheckpointMeta& m) {
  WriteAtomically((fs::path(dir) / "meta.txt").string(),
                  fmt::format("parasol-lda-checkpoint 1\niteration {}\ntopics {}\nvocab {}\ndocs {}\ntokens {}\n"
                              "processes {}\nalpha {:.17g}\nbeta {:.17g}\nseed {}\n",
                              m.iteration, m.topics, m.vocab, m.docs, m.tokens, m.processes, m.alpha, m.beta, m.seed));
}

CheckpointMeta ReadMeta(const std::string& dir) {
  const std::string path = (fs::path(dir) / "meta.txt").string();
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("{}: cannot open (not a checkpoint, or an incomplete one)", path));
  CheckpointMeta m;
  std::string line;
  long lineno = 0;
  int seen = 0;
  while (std::getline(in, line)) {
    ++lineno;
    size_t pos = 0;
    std::string_view key = NextField(line, pos), value = NextField(line, pos);
    if (lineno == 1) {
      if (key != "parasol-lda-checkpoint" || value != "1") throw ParseError(path, 1, "not a parasol LDA checkpoint (version 1)");
      continue;
    }
    if (key == "iteration") m.iteration = ParseField<uint32_t>(value, path, lineno, key);
    else if (key == "topics") m.topics = ParseField<uint32_t>(value, path, lineno, key);
    else if (key == "vocab") m.vocab = ParseField<uint64_t>(value, path, lineno, key);
    else if (key == "docs") m.docs = ParseField<uint64_t>(value, path, lineno, key);
    else if (key == "tokens") m.tokens = ParseField<uint64_t>(value, path, lineno, key);
    else if (key == "processes") m.processes = ParseField<uint32_t>(value, path, lineno, key);
    else if (key == "alpha") m.alpha = ParseField<double>(value, path, lineno, key);
    else if (key == "beta") m.beta = ParseField<double>(value, path, lineno, key);
    else if (key == "seed") m.seed = ParseField<uint64_t>(value, path, lineno, key);
    else throw ParseError(path, lineno, fmt::format("unknown key '{}'", key));
    ++seen;
  }
  if (lineno == 0) throw ParseError(path, 0, "empty file");
  if (seen != 9) throw ParseError(path, lineno, fmt::format("{} of the 9 keys", seen));
  if (m.processes == 0) throw ParseError(path, 0, "processes is 0");
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
    if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) throw ParseError(path, 0, "not a parasol LDA topics file");
    uint64_t sum;
    std::memcpy(&sum, bytes.data() + bytes.size() - sizeof(sum), sizeof(sum));
    if (bytes.size() != sizeof(h) + h.part_tokens * sizeof(uint32_t) + sizeof(uint64_t) ||
        Fnv(bytes.data(), bytes.size() - sizeof(sum)) != sum) {
      throw ParseError(path, 0, "checksum mismatch: the file is corrupt or truncated");
    }
    if (h.iteration != meta.iteration || h.topics != meta.topics || h.vocab != meta.vocab || h.docs != meta.docs ||
        h.tokens != meta.tokens) {
      throw ParseError(path, 0, fmt::format("belongs to another checkpoint (iteration {}, meta.txt says {})",
                                            h.iteration, meta.iteration));
    }
    if (h.doc_begin != expected_begin || filled + h.part_tokens > meta.tokens) {
      throw ParseError(path, 0, "documents do not follow the previous part");
    }
    const auto* z = reinterpret_cast<const uint32_t*>(bytes.data() + sizeof(h));
    for (uint64_t i = 0; i < h.part_tokens; ++i) {
      if (z[i] >= meta.topics) throw ParseError(path, 0, fmt::format("token {} has topic {} of {}", i, z[i], meta.topics));
    }
    std::memcpy(all.data() + filled, z, h.part_tokens * sizeof(uint32_t));
    filled += h.part_tokens;
    expected_begin = h.doc_end;
  }
  if (filled != meta.tokens || expected_begin != meta.docs) throw ParseError(dir, 0, "the parts do not cover the corpus");
  return all;
}

}  // namespace parasol::apps::lda
