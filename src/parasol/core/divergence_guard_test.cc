#include "parasol/core/divergence_guard.h"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

std::string Verdict(DivergenceGuard& guard, int64_t step, double value) {
  try {
    guard.Check(step, value);
    return "";
  } catch (const DivergedError& e) {
    return e.what();
  }
}

TEST(DivergenceGuard, ALossThatFallsOrWandersWithinBoundsPasses) {
  DivergenceGuard guard("loss", "step", "lower --lr");
  for (double loss : {2.3, 2.1, 5.0, 0.4, 0.0, 229.0}) EXPECT_EQ(Verdict(guard, 1, loss), "");
}

TEST(DivergenceGuard, NaNAndInfinityEndTheRunWithStepValueAndHint) {
  DivergenceGuard guard("loss", "step", "lower --lr");
  guard.Check(0, 2.3);
  EXPECT_EQ(Verdict(guard, 7, std::nan("")), "loss nan at step 7: the run diverged; lower --lr");
  DivergenceGuard objective("objective", "clock", "lower --lr or raise --lambda");
  EXPECT_EQ(Verdict(objective, 3, -std::numeric_limits<double>::infinity()),
            "objective -inf at clock 3: the run diverged; lower --lr or raise --lambda");
}

TEST(DivergenceGuard, ARunawayValueIsMeasuredAgainstTheFirst) {
  DivergenceGuard guard("loss", "epoch", "lower --lr", 1e4);
  guard.Check(1, 1.9);
  EXPECT_EQ(Verdict(guard, 2, 1.9e4), "");
  EXPECT_EQ(Verdict(guard, 3, 1.8e12),
            "loss 1.8e+12 at epoch 3 (over 10000 times its first value 1.9): the run diverged; lower --lr");
  // A first value below 1 in magnitude does not make the bound tighter than growth itself.
  DivergenceGuard small("loss", "step", "lower --lr", 100);
  small.Check(0, 1e-3);
  EXPECT_EQ(Verdict(small, 1, 99.0), "");
  EXPECT_NE(Verdict(small, 2, -101.0), "");
}

}  // namespace
}  // namespace parasol
