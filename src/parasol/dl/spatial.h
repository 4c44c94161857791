// Spatial partitioning (the scheme that trained with batch 1 per chip on 1,024 TPU chips): the
// height of one example's activations is split over the S ranks of a spatial group, rank s holding
// the block of rows BlockRange(H, S, s) of every height-H tensor. A window layer (convolution or
// pooling) first gathers the rows its outputs read that other ranks hold (the halo: a row above
// and below for a 3x3 convolution), runs on them with no padding along the height, and keeps its
// own block of output rows. Backward is the adjoint: a halo row's gradient goes back to the rank
// that holds the row and is added there.
//
// The loss every rank computes is the whole example's (the global average pool sums over the
// group), and each communication's backward is the adjoint of its forward, so autograd forms the
// gradient of the sum of the S ranks' losses with respect to each rank's copy of the parameters:
// averaged over all ranks by data parallelism, that is the gradient one rank gets for the whole
// example, averaged over the data-parallel groups.
//
// Threading: the functions run on the thread of the model's forward and backward, which alone
// uses the group's Context.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "parasol/comm/context.h"

namespace parasol::dl {

struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
};

// A window layer along the height: output row o reads input rows [o * stride - padding,
// o * stride - padding + kernel).
struct Window {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;
};

// Output height of a window layer (floor mode, as torch's convolutions and pools).
int64_t WindowOutputHeight(int64_t height, const Window& w);

class SpatialGroup {
 public:
  // `group`: the ranks that share each example, used by this object's user alone; it must outlive
  // the group.
  explicit SpatialGroup(comm::Context& group) : group_(group) {}
  int size() const { return group_.size(); }
  int rank() const { return group_.rank(); }
  comm::Context& context() { return group_; }

  // The rows of a height-`height` tensor rank `rank` holds.
  RowRange Rows(int64_t height, int rank) const;
  RowRange Rows(int64_t height) const { return Rows(height, rank()); }
  // This rank's rows of a whole N x C x H x W tensor.
  torch::Tensor Local(const torch::Tensor& whole) const;

 private:
  comm::Context& group_;
};

// Rows need[rank] (within [0, height)) of the height-`height` tensor whose rows this rank holds in
// `local` (N x C x rows x W, float); the rows other ranks hold come from them. Every rank passes
// the same `need`, one range per rank. Collective over the group.
torch::Tensor ExchangeRows(const torch::Tensor& local, int64_t height, const std::vector<RowRange>& need,
                           SpatialGroup& group);

// What a window layer's output rows on each rank read beyond that rank's own rows: the rows above
// and below that other ranks hold (the halo), the zero rows that pad the image's edges, and how
// many of its own rows at either end the window does not read. Every rank computes the same plan.
class WindowHalo {
 public:
  // Throws InvalidArgumentError when the layer's output has fewer rows than the group has ranks.
  WindowHalo(int64_t height, const Window& w, SpatialGroup& group);

  // This rank's rows above and below (zero rows included), from the ranks that hold them; no
  // autograd (the callers' functions form the adjoint with ReturnGradient). Collective.
  std::pair<torch::Tensor, torch::Tensor> Exchange(const torch::Tensor& local) const;
  // top, the rows of `local` the window reads, bottom: the layer's input with no height padding.
  torch::Tensor Join(const torch::Tensor& top, const torch::Tensor& local, const torch::Tensor& bottom) const;
  // The adjoint of Exchange then Join: the gradient of `local` from the joined rows' gradient,
  // the halo rows' parts sent back to their ranks and summed there. Collective.
  // `local_rows`: how many rows this rank holds. The result may be a view of `grad_joined`, whose
  // rows it writes to: pass a tensor the caller owns.
  torch::Tensor ReturnGradient(const torch::Tensor& grad_joined, int64_t local_rows) const;

 private:
  SpatialGroup& group_;
  int64_t height_;
  std::vector<RowRange> above_, below_;                                    // per rank, within the image
  int64_t pad_top_ = 0, pad_bottom_ = 0, skip_top_ = 0, skip_bottom_ = 0;  // this rank's
};

// The joined input of a window layer as one autograd function (a copy; pools and strided
// shortcuts, whose inputs are small or not saved). Each window is one node of the graph on every
// rank, so every rank runs the collectives of backward in the same order.
torch::Tensor WindowRows(const torch::Tensor& local, int64_t height, const Window& w, SpatialGroup& group);

// The whole height on every rank (before a layer that needs all of it, a flatten).
torch::Tensor GatherAllRows(const torch::Tensor& local, int64_t height, SpatialGroup& group);

// The sum over the group on every rank; backward sums the gradient over the group too (every
// rank's copy of the result feeds that rank's loss).
torch::Tensor SumOverGroup(const torch::Tensor& x, SpatialGroup& group);

}  // namespace parasol::dl
