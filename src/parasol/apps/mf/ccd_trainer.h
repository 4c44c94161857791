// Matrix factorisation by CCD++ (Yu, Hsieh, Si and Dhillon, 2012; the MF of STRADS): instead of
// SGD's passes over the ratings, rank-one updates, one factor k at a time. With the other factors
// fixed, the k-th column of the user factors W and of the item factors H is fitted to the
// residual by alternating exact coordinate minimisations (every user's w_ik at once, then every
// item's h_jk), which need no learning rate and never increase the objective.
//
// Objective, the same as the SGD trainer's so the two compare directly:
//   (sum over ratings of (r - mean - w_i.h_j)^2 + lambda (|W|^2 + |H|^2)) / ratings.
//
// Model parallel over ranks: users and items are split into contiguous blocks; a rank holds the
// ratings of its users by row and of its items by column, each with its residual, and computes
// its users' w_ik and its items' h_jk (threads split them again). After each half-step the new
// column is allgathered, so every rank holds all of W and H. The result does not depend on the
// number of ranks or threads: every value is computed from the same numbers in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parasol/apps/mf/ratings.h"
#include "parasol/comm/context.h"

namespace parasol::apps::mf {

struct CcdOptions {
  uint32_t rank = 16;
  float lambda = 0.05f;
  float init_scale = 0.1f;   // item factors start uniform in [0, init_scale); user factors at 0
  uint32_t iterations = 10;  // outer iterations: each updates every factor k once
  uint32_t inner = 3;        // alternations of w_k and h_k per factor
  uint64_t seed = 1;
  uint32_t threads = 1;  // per process
};

struct CcdIteration {
  uint32_t iteration = 0;  // 0: before the first
  double seconds = 0;      // since the start of training (the ratings laid out)
  double objective = 0;
};

struct CcdResult {
  std::vector<CcdIteration> iterations;
  double mean = 0;
  // Factor-major: user_factors[k * num_users + i] is w_ik; item_factors[k * num_items + j] is h_jk.
  std::vector<double> user_factors, item_factors;
};

// Collective: every process of ctx calls it with the same data and options. `on_iteration`
// (rank 0's matters) sees each iteration's record as it is made.
CcdResult TrainCcd(comm::Context& ctx, const RatingSet& data, const CcdOptions& options,
                   const std::function<void(const CcdIteration&)>& on_iteration = {});

}  // namespace parasol::apps::mf
