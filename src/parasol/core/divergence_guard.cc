#include "parasol/core/divergence_guard.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

DivergenceGuard::DivergenceGuard(std::string what, std::string unit, std::string hint, double growth)
    : what_(std::move(what)), unit_(std::move(unit)), hint_(std::move(hint)), growth_(growth) {}

void DivergenceGuard::Check(int64_t step, double value) {
  const bool finite = std::isfinite(value);
  if (finite && !first_) first_ = value;
  const double bound = growth_ * std::max(1.0, std::abs(first_.value_or(1.0)));
  if (finite && std::abs(value) <= bound) return;
  const std::string why =
      finite ? fmt::format(" (over {:g} times its first value {:.6g})", growth_, *first_) : "";
  throw DivergedError(
      fmt::format("{} {:.6g} at {} {}{}: the run diverged; {}", what_, value, unit_, step, why, hint_));
}

}  // namespace parasol
