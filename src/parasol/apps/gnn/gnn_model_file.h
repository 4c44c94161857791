// A trained GNN, as `parasol gnn --model` writes it: what the model is (GCN or GAT, its layer
// widths) and its parameters in the layout GnnModel::parameters() has, so that a program (or a
// test) can rebuild the model and apply it to the same graph.
//
// File: a parasol section file (core/section_file.h) of kind "gnn-model" with the sections
//   model (u8 characters: "gcn" or "gat"), widths (u64: the input width, then each layer's output
//   width; the last is the class count), parameters (f32).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol::apps::gnn {

struct GnnModelFile {
  std::string model;
  std::vector<uint64_t> widths;
  std::vector<float> parameters;
};

// Atomic: IoError naming the file when it cannot be written.
void WriteGnnModel(FileSystem& fs, const std::string& path, const GnnModelFile& m);
// IoError when unreadable; ParseError "path: what" when it is not a whole gnn model.
GnnModelFile ReadGnnModel(const std::string& path);

}  // namespace parasol::apps::gnn
