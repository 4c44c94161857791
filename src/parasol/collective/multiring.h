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

}  // namespace parasol::collective
