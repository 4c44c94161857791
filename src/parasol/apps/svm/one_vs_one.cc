#include "parasol/apps/svm/one_vs_one.h"

#include <map>

namespace parasol::apps::svm {

SvmModel TrainOneVsOne(comm::Context& ctx, const data::Dataset& d, const KernelParams& kernel,
                       const SmoOptions& o, const SvmCallbacks& callbacks) {
  const std::vector<double> labels = ClassOrder(d);
  std::map<double, size_t> class_of;
  for (size_t c = 0; c < labels.size(); ++c) class_of[labels[c]] = c;
  std::vector<PairSolution> pairs;
  for (size_t a = 0; a < labels.size(); ++a) {
    for (size_t b = a + 1; b < labels.size(); ++b) {
      PairSolution p{.first = a, .second = b};
      data::Dataset sub;
      sub.cols = d.cols;
      std::vector<int8_t> y;
      for (size_t r = 0; r < d.rows(); ++r) {
        const size_t c = class_of.at(d.labels[r]);
        if (c != a && c != b) continue;
        p.rows.push_back(static_cast<uint32_t>(r));
        sub.AddRow(d.labels[r], d.row_indices(r), d.row_values(r));
        y.push_back(c == a ? 1 : -1);
      }
      const size_t index = pairs.size();
      SmoOptions po = o;
      if (callbacks.on_progress)
        po.on_progress = [&](const SmoProgress& pr) { callbacks.on_progress(index, pr); };
      const KernelMatrix k(sub, kernel);
      SmoResult r = SolveSmo(ctx, k, y, po);
      PairReport report{.pair = index, .first = labels[a], .second = labels[b], .samples = sub.rows()};
      for (double alpha : r.alpha) {
        report.support_vectors += alpha > 0;
        report.bounded += alpha >= o.c;
      }
      p.alpha = r.alpha;
      p.rho = r.rho;
      report.result = std::move(r);
      if (callbacks.on_pair) callbacks.on_pair(report);
      pairs.push_back(std::move(p));
    }
  }
  return AssembleModel(d, labels, pairs, kernel);
}

}  // namespace parasol::apps::svm
