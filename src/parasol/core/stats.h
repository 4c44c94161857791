// Small statistics helpers for benchmarks.
#pragma once

#include <vector>

namespace parasol {

// Median of the samples (mean of the two middle ones for an even count); 0 for none.
double Median(std::vector<double> samples);

}  // namespace parasol
