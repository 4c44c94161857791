// A trained factorisation, as `parasol mf --model` writes it and `parasol mf-predict` reads it:
// a rating is predicted as mean + u_user . v_item, where a user or item the training never saw
// contributes no factor (the prediction is then the mean, as LIBMF's for an unknown id).
//
// File: a parasol section file (core/section_file.h) of kind "mf-model" with the sections
//   rank (u32), users (u64), items (u64), mean (f64),
//   user_factors (f32, users x rank, row-major: user i's factors at [i * rank, (i + 1) * rank)),
//   item_factors (f32, items x rank, the same)
// ids as in the ratings files (MovieLens ids from 1 are row id - 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/apps/mf/ratings.h"
#include "parasol/core/file_system.h"

namespace parasol::apps::mf {

struct MfModel {
  uint32_t rank = 0;
  uint64_t users = 0, items = 0;
  double mean = 0;
  std::vector<float> user_factors, item_factors;

  double Predict(uint32_t user, uint32_t item) const;
};

// Root-mean-square error of the model's predictions on `ratings`.
double Rmse(const MfModel& model, const RatingSet& ratings);

// Atomic: IoError naming the file when it cannot be written.
void WriteMfModel(FileSystem& fs, const std::string& path, const MfModel& model);
// IoError when unreadable; ParseError "path: what" when it is not a whole mf model.
MfModel ReadMfModel(const std::string& path);

}  // namespace parasol::apps::mf
