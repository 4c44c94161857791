#include "parasol/dl/parallel_groups.h"
#include "parasol/core/plural.h"

#include <vector>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"

namespace parasol::dl {

ParallelGroups::ParallelGroups(comm::Context& world, int tensor_parallel, int expert_parallel)
    : world_(world), tensor_(tensor_parallel), expert_(expert_parallel) {
  const int n = world.size(), r = world.rank();
  // Every rank must run the same layout: a rank that splits otherwise would wait in another group.
  const std::vector<int> mine = {tensor_, expert_};
  std::vector<int> all(2 * static_cast<size_t>(n));
  collective::Allgather(world, mine.data(), all.data(), 2, DType::kInt32);
  for (int q = 0; q < n; ++q) {
    const int t = all[2 * static_cast<size_t>(q)], p = all[2 * static_cast<size_t>(q) + 1];
    if (t != tensor_ || p != expert_) {
      throw MismatchError(
          fmt::format("rank {}: parallel layout: rank {} runs tensor parallel {} and expert parallel {}, "
                      "this rank {} and {}",
                      r, q, t, p, tensor_, expert_));
    }
  }
  if (tensor_ < 1 || n % tensor_ != 0) {
    throw InvalidArgumentError(
        fmt::format("tensor parallel {} does not divide the job's {}", tensor_, Count(n, "rank")));
  }
  data_ = n / tensor_;
  if (expert_ < 1 || data_ % expert_ != 0) {
    throw InvalidArgumentError(fmt::format(
        "expert parallel {} does not divide the {} data-parallel replicas ({} ranks / tensor parallel {})",
        expert_, data_, n, tensor_));
  }
  tensor_rank_ = r % tensor_;
  data_rank_ = r / tensor_;
  const Deadline deadline = world.DefaultDeadline();
  tensor_group_ = world.Split(data_rank_, deadline);
  data_group_ = world.Split(tensor_rank_, deadline);
  expert_group_ = world.Split(tensor_rank_ + tensor_ * (data_rank_ / expert_), deadline);
  expert_copies_ = world.Split(tensor_rank_ + tensor_ * (data_rank_ % expert_), deadline);
}

}  // namespace parasol::dl
