// Reduce-scatter, allgather and alltoall schedules over all ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/collective/schedule.h"

namespace parasol::collective {

// `blocks`: nranks+1 offsets; rank r's block is [blocks[r], blocks[r+1]).
// Reduce-scatter: data holds the whole vector; rank r ends with its block reduced.
Program BuildReduceScatter(int nranks, int rank, const std::vector<uint64_t>& blocks, size_t elem_size,
                           uint64_t segment_bytes, bool from_input = false);
// Allgather: rank r's block of data is filled; every rank ends with every block.
Program BuildAllgather(int nranks, int rank, const std::vector<uint64_t>& blocks, size_t elem_size,
                       uint64_t segment_bytes);
// Alltoall: input block d goes to rank d's data block `rank`; `count` elements per block.
Program BuildAlltoall(int nranks, int rank, uint64_t count);
// Alltoallv: input [send_offsets[d], send_offsets[d + 1]) goes to rank d, which receives it at
// data [recv_offsets[rank], ...) of its own offsets (nranks + 1 each). Empty blocks send nothing.
Program BuildAlltoallv(int nranks, int rank, const std::vector<uint64_t>& send_offsets,
                       const std::vector<uint64_t>& recv_offsets);

}  // namespace parasol::collective
