// Builders on several threads that seed and draw at once each get the values a lone builder gets
// with their seed: the lock is one for the process, whoever takes it.
#include "parasol/dl/torch_generator.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include <torch/torch.h>

namespace parasol::dl {
namespace {

torch::Tensor Draw(uint64_t seed) {
  SeededTorchGenerator generator(seed);
  // Several draws, as a model's layers make: another thread's seed between two of them would
  // change the later ones.
  std::vector<torch::Tensor> parts;
  for (int i = 0; i < 20; ++i) parts.push_back(torch::randn({64}));
  return torch::cat(parts);
}

TEST(SeededTorchGenerator, ThreadsSeedingAtOnceDrawWhatALoneBuilderDraws) {
  const std::vector<uint64_t> seeds = {1, 2, 3, 4};
  std::vector<torch::Tensor> alone;
  for (uint64_t s : seeds) alone.push_back(Draw(s));
  ASSERT_FALSE(torch::equal(alone[0], alone[1]));  // the seeds do give different values

  for (int round = 0; round < 20; ++round) {
    std::vector<torch::Tensor> together(seeds.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < seeds.size(); ++i) threads.emplace_back([&, i] { together[i] = Draw(seeds[i]); });
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < seeds.size(); ++i)
      EXPECT_TRUE(torch::equal(together[i], alone[i])) << "seed " << seeds[i];
  }
}

}  // namespace
}  // namespace parasol::dl
