#include "parasol/core/stats.h"

#include <algorithm>

namespace parasol {

double Median(std::vector<double> s) {
  if (s.empty()) return 0;
  size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + static_cast<long>(mid), s.end());
  double hi = s[mid];
  if (s.size() % 2 == 1) return hi;
  double lo = *std::max_element(s.begin(), s.begin() + static_cast<long>(mid));
  return (lo + hi) / 2;
}

}  // namespace parasol
