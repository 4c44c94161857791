#include "parasol/apps/lda/loglik.h"

#include <cmath>

namespace parasol::apps::lda {

namespace {
constexpr int64_t kTable = 1 << 14;  // counts below this come from a table
}

LogLikelihood::LogLikelihood(const LdaParams& params) : p_(params), alpha_table_(kTable), beta_table_(kTable) {
  const double la = std::lgamma(p_.alpha), lb = std::lgamma(p_.beta);
  for (int64_t n = 0; n < kTable; ++n) {
    alpha_table_[n] = std::lgamma(static_cast<double>(n) + p_.alpha) - la;
    beta_table_[n] = std::lgamma(static_cast<double>(n) + p_.beta) - lb;
  }
}

double LogLikelihood::LgammaAlpha(int64_t n) const {
  return n < kTable ? alpha_table_[n] : std::lgamma(static_cast<double>(n) + p_.alpha) - std::lgamma(p_.alpha);
}

double LogLikelihood::LgammaBeta(int64_t n) const {
  return n < kTable ? beta_table_[n] : std::lgamma(static_cast<double>(n) + p_.beta) - std::lgamma(p_.beta);
}

double LogLikelihood::DocPart(const TokenStore& ts, size_t d0, size_t d1, std::vector<int32_t>& scratch) const {
  const double ka = p_.topics * p_.alpha;
  const double lka = std::lgamma(ka);
  double sum = 0;
  for (size_t d = d0; d < d1; ++d) {
    const uint64_t b = ts.doc_offsets[d], e = ts.doc_offsets[d + 1];
    for (uint64_t i = b; i < e; ++i) ++scratch[ts.z[i]];
    for (uint64_t i = b; i < e; ++i) {
      int32_t& c = scratch[ts.z[i]];
      if (c != 0) sum += LgammaAlpha(c), c = 0;
    }
    sum += lka - std::lgamma(static_cast<double>(e - b) + ka);
  }
  return sum;
}

double LogLikelihood::WordRowsPart(const WordTopicTable& table, std::span<const uint32_t> words) const {
  double sum = 0;
  for (uint32_t w : words) {
    if (!table.resident(w)) continue;
    table.ForEachNonzero(w, [&](uint32_t, int32_t c) { sum += LgammaBeta(c); });
  }
  return sum;
}

double LogLikelihood::TotalsPart(std::span<const int64_t> totals) const {
  const double vb = p_.vocab_size * p_.beta;
  double sum = p_.topics * std::lgamma(vb);
  for (int64_t n : totals) sum -= std::lgamma(static_cast<double>(n) + vb);
  return sum;
}

}  // namespace parasol::apps::lda
