// How a job's ranks divide among tensor, data and expert parallelism (Megatron's layout):
//   world = D x T ranks; rank r is tensor rank t = r % T of replica d = r / T.
//   tensor group   the T ranks of replica d: they hold the shards of one copy of the model
//   data group     the D ranks with tensor rank t: replicas of the same shard (gradients summed)
//   expert group   P consecutive replicas (same t, d / P): a mixture-of-experts layer's experts
//                  are spread over them and tokens move between them by all-to-all
//   expert copies  the D / P ranks (same t, d % P) that hold the same experts (their gradients
//                  are summed among these only, not over the data group)
//
// Threading: each group's Context is used by one thread at a time, like any Context.
#pragma once

#include <memory>

#include "parasol/comm/context.h"

namespace parasol::dl {

class ParallelGroups {
 public:
  // Collective over `world`. InvalidArgumentError when T does not divide the rank count or P
  // does not divide D = size / T; MismatchError naming the first rank whose T or P differs from
  // this rank's.
  ParallelGroups(comm::Context& world, int tensor_parallel, int expert_parallel);

  int tensor_parallel() const { return tensor_; }
  int expert_parallel() const { return expert_; }
  int data_parallel() const { return data_; }
  int tensor_rank() const { return tensor_rank_; }
  int data_rank() const { return data_rank_; }

  comm::Context& world() { return world_; }
  comm::Context& tensor() { return *tensor_group_; }
  comm::Context& data() { return *data_group_; }
  comm::Context& expert() { return *expert_group_; }
  comm::Context& expert_copies() { return *expert_copies_; }

 private:
  comm::Context& world_;
  int tensor_ = 1, expert_ = 1, data_ = 1;
  int tensor_rank_ = 0, data_rank_ = 0;
  std::unique_ptr<comm::Context> tensor_group_, data_group_, expert_group_, expert_copies_;
};

}  // namespace parasol::dl
