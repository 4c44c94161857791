#include "parasol/apps/svm/one_vs_one.h"

#include <map>
#include <utility>

#include "parasol/apps/svm/svm_checkpoint.h"

namespace parasol::apps::svm {

namespace {

// The two-class problem of classes a and b: their rows in data order, y = +1 for a.
struct PairProblem {
  PairSolution solution;
  data::Dataset sub;
  std::vector<int8_t> y;
};

PairProblem MakePairProblem(const data::Dataset& d, const std::map<double, size_t>& class_of, size_t a,
                            size_t b) {
  PairProblem p{.solution = {.first = a, .second = b}};
  p.sub.cols = d.cols;
  for (size_t r = 0; r < d.rows(); ++r) {
    const size_t c = class_of.at(d.labels[r]);
    if (c != a && c != b) continue;
    p.solution.rows.push_back(static_cast<uint32_t>(r));
    p.sub.AddRow(d.labels[r], d.row_indices(r), d.row_values(r));
    p.y.push_back(c == a ? 1 : -1);
  }
  return p;
}

PairReport Report(size_t index, const std::vector<double>& labels, const PairProblem& p, SmoResult r,
                  double c) {
  PairReport report{.pair = index,
                    .first = labels[p.solution.first],
                    .second = labels[p.solution.second],
                    .samples = p.sub.rows()};
  for (double alpha : r.alpha) {
    report.support_vectors += alpha > 0;
    report.bounded += alpha >= c;
  }
  report.result = std::move(r);
  return report;
}

// Solves machine `index` (from the checkpoint's multipliers where it was under way), with
// checkpoints within it and one after it; `state` gets its result.
SmoResult SolvePair(comm::Context& ctx, const PairProblem& p, size_t index, const KernelParams& kernel,
                    const SmoOptions& o, const SvmCallbacks& callbacks, const SvmCheckpointing& checkpointing,
                    SvmCheckpoint& state) {
  const bool writes = !checkpointing.dir.empty() && ctx.rank() == 0;
  SmoOptions po = o;
  if (callbacks.on_progress)
    po.on_progress = [&](const SmoProgress& pr) { callbacks.on_progress(index, pr); };
  // Owned here: the checkpoints below replace state.current_alpha while the solver runs.
  const std::vector<double> start = std::exchange(state.current_alpha, {});
  po.start_alpha = start;
  po.start_iteration = start.empty() ? 0 : state.current_iterations;
  if (!checkpointing.dir.empty() && checkpointing.every_iterations > 0) {
    po.checkpoint_every = checkpointing.every_iterations;  // on every rank: gathering alpha is collective
    po.on_checkpoint = [&](uint64_t iterations, const std::vector<double>& alpha) {
      if (!writes) return;
      state.current_iterations = iterations;
      state.current_alpha = alpha;
      WriteSvmCheckpoint(ctx.env().files(), checkpointing.dir, state);
    };
  }
  const KernelMatrix k(p.sub, kernel);
  SmoResult r = SolveSmo(ctx, k, p.y, po);
  state.done.push_back(
      {.rho = r.rho, .objective = r.objective, .iterations = r.iterations, .alpha = r.alpha});
  state.current_alpha.clear();
  if (writes) WriteSvmCheckpoint(ctx.env().files(), checkpointing.dir, state);
  return r;
}

}  // namespace

SvmModel TrainOneVsOne(comm::Context& ctx, const data::Dataset& d, const KernelParams& kernel,
                       const SmoOptions& o, const SvmCallbacks& callbacks,
                       const SvmCheckpointing& checkpointing) {
  const std::vector<double> labels = ClassOrder(d);
  std::map<double, size_t> class_of;
  for (size_t c = 0; c < labels.size(); ++c) class_of[labels[c]] = c;
  std::vector<uint64_t> per_class(labels.size()), pair_samples;
  for (double label : d.labels) ++per_class[class_of.at(label)];
  for (size_t a = 0; a < labels.size(); ++a)
    for (size_t b = a + 1; b < labels.size(); ++b) pair_samples.push_back(per_class[a] + per_class[b]);

  SvmCheckpoint state{.key = {.samples = d.rows(),
                              .features = d.cols,
                              .classes = labels.size(),
                              .data_fingerprint = data::Fingerprint(d),
                              .kernel = kernel,
                              .c = o.c}};
  if (!checkpointing.resume_dir.empty())
    state = ReadSvmCheckpoint(checkpointing.resume_dir, state.key, pair_samples);

  std::vector<PairSolution> pairs;
  for (size_t a = 0; a < labels.size(); ++a) {
    for (size_t b = a + 1; b < labels.size(); ++b) {
      const size_t index = pairs.size();
      PairProblem p = MakePairProblem(d, class_of, a, b);
      const bool restored = index < state.done.size();
      SmoResult r;
      if (restored) {
        const SvmCheckpoint::Pair& done = state.done[index];
        r = {
            .alpha = done.alpha, .rho = done.rho, .objective = done.objective, .iterations = done.iterations};
      } else {
        r = SolvePair(ctx, p, index, kernel, o, callbacks, checkpointing, state);
      }
      p.solution.alpha = r.alpha;
      p.solution.rho = r.rho;
      PairReport report = Report(index, labels, p, std::move(r), o.c);
      report.restored = restored;
      if (callbacks.on_pair) callbacks.on_pair(report);
      pairs.push_back(std::move(p.solution));
    }
  }
  return AssembleModel(d, labels, pairs, kernel);
}

}  // namespace parasol::apps::svm
