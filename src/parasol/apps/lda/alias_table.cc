#include "parasol/apps/lda/alias_table.h"

namespace parasol::apps::lda {

double BuildAlias(std::span<const uint32_t> topics, std::span<const double> weights,
                  std::vector<AliasEntry>& arena, AliasScratch& scratch) {
  const size_t n = topics.size();
  const size_t base = arena.size();
  double total = 0;
  for (double w : weights) total += w;
  arena.resize(base + n);
  AliasEntry* t = arena.data() + base;
  // Scaled weights n*w/total: entries below 1 ("small") are topped up by those above ("large").
  scratch.index.resize(2 * n);
  uint32_t* small = scratch.index.data();
  uint32_t* large = scratch.index.data() + n;
  size_t ns = 0, nl = 0;
  const double scale = static_cast<double>(n) / total;
  std::vector<double>& p = scratch.scaled;
  p.resize(n);
  for (size_t i = 0; i < n; ++i) {
    p[i] = weights[i] * scale;
    t[i] = {1.0f, topics[i], topics[i]};
    (p[i] < 1.0 ? small[ns++] : large[nl++]) = static_cast<uint32_t>(i);
  }
  while (ns > 0 && nl > 0) {
    uint32_t s = small[--ns], l = large[nl - 1];
    t[s].threshold = static_cast<float>(p[s]);
    t[s].alias = topics[l];
    p[l] -= 1.0 - p[s];
    if (p[l] < 1.0) {
      --nl;
      small[ns++] = l;
    }
  }
  return total;
}

}  // namespace parasol::apps::lda
