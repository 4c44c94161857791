// A trained multiclass logistic regression, as `parasol mlr --model` writes it and
// `parasol mlr-predict` reads it: per class a weight per feature and a bias; a row's class is the
// one with the largest score (bias + the sum of weight x feature).
//
// File: a parasol section file (core/section_file.h) of kind "mlr-model" with the sections
//   classes (f64: each class's label, ascending), features (u32: the data set's feature id of each
//   weight row from 0, ascending), weights (f64, features x classes, row-major), biases (f64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/core/file_system.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::mlr {

struct MlrModel {
  std::vector<double> classes;     // the label of each class, ascending
  std::vector<uint32_t> features;  // the data set's feature id of each weight row, ascending
  std::vector<double> weights;     // features.size() x classes.size(), row-major
  std::vector<double> biases;      // classes.size()
  // The class with the largest score for each row of d (features the model lacks count 0).
  std::vector<double> Predict(const data::Dataset& d) const;
};

// Atomic: IoError naming the file when it cannot be written.
void WriteMlrModel(FileSystem& fs, const std::string& path, const MlrModel& model);
// IoError when unreadable; ParseError "path: what" when it is not a whole mlr model.
MlrModel ReadMlrModel(const std::string& path);

}  // namespace parasol::apps::mlr
