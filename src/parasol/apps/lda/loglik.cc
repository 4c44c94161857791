#include "parasol/apps/lda/loglik.h"

#include <cmath>

namespace parasol::apps::lda {

namespace {
constexpr int64_t kTable = 1 << 14;  // counts below this come from a table

// std::lgamma writes the sign to the global `signgam`: a data race between the threads that score
// documents in parallel. lgamma_r returns it instead.
double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}
}  // namespace

LogLikelihood::LogLikelihood(const LdaParams& params)
    : p_(params), alpha_table_(kTable), beta_table_(kTable) {
  const double la = LogGamma(p_.alpha), lb = LogGamma(p_.beta);
  for (int64_t n = 0; n < kTable; ++n) {
    alpha_table_[n] = LogGamma(static_cast<double>(n) + p_.alpha) - la;
    beta_table_[n] = LogGamma(static_cast<double>(n) + p_.beta) - lb;
  }
  for (double a : p_.topic_alpha) lgamma_topic_alpha_.push_back(LogGamma(a));
}

double LogLikelihood::LgammaAlpha(int64_t n) const {
  return n < kTable ? alpha_table_[n] : LogGamma(static_cast<double>(n) + p_.alpha) - LogGamma(p_.alpha);
}

double LogLikelihood::LgammaBeta(int64_t n) const {
  return n < kTable ? beta_table_[n] : LogGamma(static_cast<double>(n) + p_.beta) - LogGamma(p_.beta);
}

double LogLikelihood::DocPart(const TokenLayout& layout, size_t d0, size_t d1,
                              std::vector<int32_t>& scratch) const {
  const double ka = p_.AlphaSum();
  const double lka = LogGamma(ka);
  const bool asym = !p_.topic_alpha.empty();
  double sum = 0;
  for (size_t d = d0; d < d1; ++d) {
    const uint32_t b = layout.doc_begin(d), e = layout.doc_end(d);
    layout.WithTopics([&](const auto* dz, const auto*) {
      ForEachTopicCount(dz, b, e, scratch, [&](uint32_t k, int32_t c) {
        sum += asym ? LogGamma(c + p_.topic_alpha[k]) - lgamma_topic_alpha_[k] : LgammaAlpha(c);
      });
    });
    sum += lka - LogGamma(static_cast<double>(e - b) + ka);
  }
  return sum;
}

double LogLikelihood::WordsPart(const TokenLayout& layout, uint32_t w0, uint32_t w1,
                                std::vector<int32_t>& scratch) const {
  double sum = 0;
  layout.WithTopics([&](const auto*, const auto* wz) {
    for (uint32_t w = w0; w < w1; ++w) sum += WordPart(wz, layout.word_begin(w), layout.word_end(w), scratch);
  });
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
  double sum = p_.topics * LogGamma(vb);
  for (int64_t n : totals) sum -= LogGamma(static_cast<double>(n) + vb);
  return sum;
}

}  // namespace parasol::apps::lda
