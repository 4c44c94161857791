// LDA checkpoints: the topic of every token is the whole state (counts are rebuilt from it), so a
// checkpoint is each process's topics plus a small description. Format (docs/lda-checkpoint.md):
//   DIR/meta.txt                 "key value" lines, written last by rank 0: marks a complete cut
//   DIR/topics.R-of-P.bin        rank R's documents' topics, corpus order, with a checksum
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::apps::lda {

struct CheckpointMeta {
  uint32_t iteration = 0;
  uint32_t topics = 0;
  uint64_t vocab = 0;
  uint64_t docs = 0;
  uint64_t tokens = 0;
  uint32_t processes = 1;
  double alpha = 0, beta = 0;
  std::vector<double> topic_alpha;  // fitted (LdaOptions::optimize_interval); beta is then fitted too
  uint64_t seed = 0;
};

// Writes this rank's part (documents [doc_begin, doc_end), their tokens' topics in corpus order)
// atomically (temporary file, then rename). Throws IoError.
void WriteTopicsPart(FileSystem& fs, const std::string& dir, int rank, const CheckpointMeta& meta,
                     uint64_t doc_begin, uint64_t doc_end, const std::vector<uint32_t>& topics);
// Rank 0, after every rank's part is written. Throws IoError.
void WriteMeta(FileSystem& fs, const std::string& dir, const CheckpointMeta& meta);
// Throws IoError if missing, ParseError "file:line: ..." if malformed.
CheckpointMeta ReadMeta(const std::string& dir);
// Every part of the checkpoint, assembled: the topics of all tokens of the corpus in order.
// Throws ParseError for a corrupt, foreign or incomplete part.
std::vector<uint32_t> ReadAllTopics(const std::string& dir, const CheckpointMeta& meta);

}  // namespace parasol::apps::lda
