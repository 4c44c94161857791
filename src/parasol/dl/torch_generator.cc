#include "parasol/dl/torch_generator.h"

#include <torch/torch.h>

namespace parasol::dl {
namespace {

// Guards the one resource torch itself keeps per process (see the header); nothing else.
std::mutex generator_mu;

}  // namespace

SeededTorchGenerator::SeededTorchGenerator(uint64_t seed) : lock_(generator_mu) { torch::manual_seed(seed); }

}  // namespace parasol::dl
