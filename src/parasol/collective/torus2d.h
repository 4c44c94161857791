// 2-D torus allreduce (the scheme that trained ResNet-50 on a 1024-chip pod): ranks arranged
// R x C reduce-scatter along rows, allreduce along columns, allgather along rows. The data is cut
// into four parts that run at once: rows-first and columns-first, each around the rings in both
// directions, so every link of a torus node carries traffic all the time.
#pragma once

#include <utility>

#include "parasol/collective/algorithm.h"

namespace parasol::collective {

// (rows, cols) for these parameters: torus_rows if set, else the topology's grid, else the most
// square factorisation of nranks.
std::pair<int, int> TorusShape(const AllreduceParams& p);

Program BuildTorus2dAllreduce(const AllreduceParams& p);

}  // namespace parasol::collective
