// Tells a run that has diverged from one that is learning, from the loss or objective it reports
// after each step, so a diverging run ends with an error instead of training on NaN to exit 0.
//
// A value diverged when it is not finite, or when it exceeds `growth` times the first value the
// guard saw (in magnitude; 1 if that was smaller): a loss or objective a hundred times where it
// started has left any basin a learning rate could bring it back to. A caller that knows where
// training starts (a zero model's loss) gives it as the first value. The same value on every rank
// (a reduced loss) gives the same verdict on every rank, so they all stop at the same step.
//
// Threading: not thread-safe; one guard per training loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace parasol {

class DivergenceGuard {
 public:
  // `what`: the value's name ("loss", "objective"); `unit`: the step's ("step", "clock");
  // `hint`: the options to look at, as the error ends ("lower --lr").
  DivergenceGuard(std::string what, std::string unit, std::string hint, double growth = 100);

  // Throws DivergedError "VALUE_NAME VALUE at UNIT N: the run diverged; HINT".
  void Check(int64_t step, double value);

 private:
  std::string what_, unit_, hint_;
  double growth_;
  std::optional<double> first_;
};

}  // namespace parasol
