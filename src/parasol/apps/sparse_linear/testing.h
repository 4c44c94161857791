// For the sparse linear models' tests: a fit on ranks as threads.
#pragma once

#include <functional>
#include <vector>

#include "parasol/apps/sparse_linear/fit_path.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::sparse_linear {

using PathFitter =
    std::function<std::vector<LinearFit>(comm::Context&, const data::Dataset&, const PathOptions&)>;

// Rank 0's fits by `fit` on `ranks` ranks as threads; any rank's error fails the test.
inline std::vector<LinearFit> FitOnThreads(const PathFitter& fit, int ranks, const data::Dataset& d,
                                           const PathOptions& o) {
  comm::InProcessWorld world(ranks);
  std::vector<std::vector<LinearFit>> fits(static_cast<size_t>(ranks));
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { fits[static_cast<size_t>(ctx.rank())] = fit(ctx, d, o); }));
  return fits[0];
}

}  // namespace parasol::apps::sparse_linear
