// Multi-ring allreduce (PowerAI DDL): k rings over different orderings of the ranks, each
// carrying 1/k of the data at the same time, so links a single ring leaves idle carry traffic.
// Ring j visits ranks with stride s_j (0, s_j, 2 s_j, ... mod n), s_j from 1, n-1, 2, n-2, ...
// coprime to n: two rings are the two directions of one ring.
#pragma once

#include <vector>

#include "parasol/collective/algorithm.h"

namespace parasol::collective {

// The orderings the k rings use (fewer if n has fewer distinct coprime strides).
std::vector<std::vector<int>> MultiringOrders(int nranks, int rings);

Program BuildMultiringAllreduce(const AllreduceParams& p);

// Rings over the given orders of every rank, ring j allreducing the j-th of as many equal parts of
// the data on channel j (ft-mesh's two directions of one cycle, the multiring's strides). Fewer
// elements than rings x ranks go round the first ring alone.
Program BuildRingsAllreduce(const AllreduceParams& p, std::vector<std::vector<int>> orders);

}  // namespace parasol::collective
