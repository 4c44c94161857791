#include "parasol/dl/rank_tensors.h"

#include "parasol/dl/rank_checkpoint.h"

namespace parasol::dl {

void WriteRankTensors(FileSystem& fs, const std::string& dir, int rank, int64_t step,
                      const std::vector<torch::Tensor>& state) {
  std::vector<double> values;
  for (const torch::Tensor& t : state) {
    const torch::Tensor d = t.to(torch::kFloat64).contiguous();
    values.insert(values.end(), d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  }
  WriteRankState(fs, dir, rank, step, values);
}

void ReadRankTensors(const std::string& dir, int rank, int64_t step,
                     const std::vector<torch::Tensor>& state) {
  uint64_t count = 0;
  for (const torch::Tensor& t : state) count += static_cast<uint64_t>(t.numel());
  std::vector<double> values = ReadRankState(dir, rank, step, count);
  torch::NoGradGuard no_grad;
  size_t at = 0;
  for (const torch::Tensor& t : state) {
    torch::Tensor target = t;  // a handle: copy_ writes the caller's storage
    target.copy_(torch::from_blob(values.data() + at, {t.numel()}, torch::kFloat64).view(t.sizes()));
    at += static_cast<size_t>(t.numel());
  }
}

}  // namespace parasol::dl
