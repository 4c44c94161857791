// Checkpoints of SVM training: a warm start rebuilds the gradient from the multipliers alone, a
// run resumed between or within two-class machines ends where the uninterrupted run ends, and a
// checkpoint of another problem, or a damaged one, is refused.
#include "parasol/apps/svm/svm_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "parasol/apps/svm/one_vs_one.h"
#include "parasol/apps/svm/smo_solver.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::apps::svm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The letters A to D of the bundled letter set: 150 samples, 16 features, 4 classes (6 machines).
data::Dataset FourLetters() {
  const data::Dataset all = data::ReadLibsvm(std::string(PARASOL_DATA_DIR) + "/libsvm/letter-1000");
  data::Dataset d;
  d.cols = all.cols;
  for (size_t r = 0; r < all.rows(); ++r)
    if (all.labels[r] <= 4) d.AddRow(all.labels[r], all.row_indices(r), all.row_values(r));
  return d;
}

class SvmCheckpointTest : public ::testing::Test {
 protected:
  std::string Dir(const std::string& name) const { return (dir_ / name).string(); }

  struct Run {
    SvmModel model;
    std::vector<PairReport> reports;
  };
  // Trains on `ranks` in-process ranks; rank 0's reports.
  Run Train(int ranks, const data::Dataset& d, const SmoOptions& o, const SvmCheckpointing& ck,
            const SvmCallbacks& rank0_callbacks = {}) {
    comm::InProcessWorld world(ranks);
    Run run;
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      SvmCallbacks cb;
      if (ctx.rank() == 0) {
        cb = rank0_callbacks;
        cb.on_pair = [&](const PairReport& p) {
          run.reports.push_back(p);
          if (rank0_callbacks.on_pair) rank0_callbacks.on_pair(p);
        };
      }
      SvmModel m = TrainOneVsOne(ctx, d, kernel_, o, cb, ck);
      if (ctx.rank() == 0) run.model = std::move(m);
    });
    comm::testing::ExpectNoErrors(errors);
    return run;
  }

  const KernelParams kernel_{.type = KernelType::kRbf, .gamma = 0.5};
  const SmoOptions options_{.c = 4, .tolerance = 1e-6, .progress_every = 20};
  const TestDir dir_{"svm_checkpoint"};
};

// With no iteration left, the solver returns the warm start as it is, and the objective it
// computes from its rebuilt gradient is 1/2 a'Qa - e'a computed here from the kernel's formula.
TEST_F(SvmCheckpointTest, AWarmStartRebuildsTheGradient) {
  const data::Dataset d = FourLetters();
  data::Dataset two;  // A against B
  two.cols = d.cols;
  std::vector<int8_t> y;
  for (size_t r = 0; r < d.rows(); ++r) {
    if (d.labels[r] > 2) continue;
    two.AddRow(d.labels[r], d.row_indices(r), d.row_values(r));
    y.push_back(d.labels[r] == 1 ? 1 : -1);
  }
  const KernelMatrix k(two, kernel_);
  // A feasible point with free and bounded multipliers: pairs of opposite classes share a value.
  std::vector<double> alpha(y.size(), 0.0);
  size_t pos = 0, neg = 0, made = 0;
  const double values[] = {options_.c, 0.7, 1.9, options_.c, 0.05};
  while (made < 5) {
    while (y[pos] < 0) ++pos;
    while (y[neg] > 0) ++neg;
    alpha[pos++] = alpha[neg++] = values[made++];
  }
  double want = 0;
  for (size_t s = 0; s < y.size(); ++s) {
    want -= alpha[s];
    for (size_t t = 0; t < y.size(); ++t) {
      if (alpha[s] == 0 || alpha[t] == 0) continue;
      double dist = 0;
      std::vector<double> xs(two.cols, 0.0), xt(two.cols, 0.0);
      for (size_t q = 0; q < two.row_indices(s).size(); ++q) xs[two.row_indices(s)[q]] = two.row_values(s)[q];
      for (size_t q = 0; q < two.row_indices(t).size(); ++q) xt[two.row_indices(t)[q]] = two.row_values(t)[q];
      for (size_t f = 0; f < xs.size(); ++f) dist += (xs[f] - xt[f]) * (xs[f] - xt[f]);
      want += 0.5 * alpha[s] * alpha[t] * y[s] * y[t] * std::exp(-kernel_.gamma * dist);
    }
  }
  for (int ranks : {1, 2}) {
    comm::InProcessWorld world(ranks);
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      SmoOptions o = options_;
      o.start_alpha = alpha;
      o.start_iteration = 7;
      o.max_iterations = 7;
      const SmoResult r = SolveSmo(ctx, k, y, o);
      EXPECT_EQ(r.alpha, alpha);
      EXPECT_EQ(r.iterations, 7u);
      EXPECT_NEAR(r.objective, want, 1e-6 * std::abs(want));  // the kernel's columns are floats
    });
    comm::testing::ExpectNoErrors(errors);
  }
  // Infeasible warm starts are refused.
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    SmoOptions o = options_;
    std::vector<double> unbalanced(y.size(), 0.0);
    unbalanced[pos] = 1;
    o.start_alpha = unbalanced;
    EXPECT_THROW(SolveSmo(ctx, k, y, o), InvalidArgumentError);
    std::vector<double> above = alpha;
    above[0] = options_.c * 2;
    o.start_alpha = above;
    EXPECT_THROW(SolveSmo(ctx, k, y, o), InvalidArgumentError);
  });
  comm::testing::ExpectNoErrors(errors);
}

// Snapshots of the checkpoint folder, taken after machine 1 and within machine 3, each resumed
// (on 1 and 2 ranks) to the end: every machine's objective equals the uninterrupted run's, the
// machines done before are taken as they were, and the models predict alike.
TEST_F(SvmCheckpointTest, AResumedRunEndsWhereTheUninterruptedOneEnds) {
  const data::Dataset d = FourLetters();
  const SvmCheckpointing ck{.dir = Dir("ckpt"), .every_iterations = 20};
  bool within = false;
  SvmCallbacks snapshots;
  snapshots.on_pair = [&](const PairReport& p) {
    if (p.pair == 1) fs::copy(Dir("ckpt"), Dir("after-1"));
  };
  snapshots.on_progress = [&](size_t pair, const SmoProgress& pr) {
    if (pair == 3 && pr.iteration == 40 && !within) {
      fs::copy(Dir("ckpt"), Dir("within-3"));
      within = true;
    }
  };
  const Run full = Train(2, d, options_, ck, snapshots);
  ASSERT_TRUE(within) << "machine 3 took fewer than 40 iterations";
  ASSERT_EQ(full.reports.size(), 6u);
  // Only the last checkpoint's files are left.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(Dir("ckpt"))) names.push_back(e.path().filename().string());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("svm.txt", "pairs-6.bin"));
  EXPECT_TRUE(fs::exists(Dir("within-3/current-3-40.bin")));

  for (const std::string snap : {"after-1", "within-3"}) {
    for (int ranks : {1, 2}) {
      const Run resumed = Train(ranks, d, options_, {.resume_dir = Dir(snap)});
      ASSERT_EQ(resumed.reports.size(), 6u);
      for (size_t p = 0; p < 6; ++p) {
        const SmoResult &a = full.reports[p].result, &b = resumed.reports[p].result;
        EXPECT_EQ(resumed.reports[p].restored, p < (snap == "after-1" ? 2u : 3u)) << snap << " pair " << p;
        if (resumed.reports[p].restored) {
          EXPECT_EQ(b.alpha, a.alpha);
        }
        EXPECT_NEAR(b.objective, a.objective, 1e-6 * std::abs(a.objective)) << snap << " pair " << p;
        if (snap == "within-3" && p == 3) {
          EXPECT_GE(b.iterations, 40u);
        }
      }
      EXPECT_EQ(Predict(resumed.model, d), Predict(full.model, d)) << snap << " on " << ranks << " ranks";
    }
  }
}

TEST_F(SvmCheckpointTest, ACheckpointOfAnotherProblemOrDamagedIsRefused) {
  const data::Dataset d = FourLetters();
  Train(1, d, options_, {.dir = Dir("ckpt")});
  auto resume_error = [&](const data::Dataset& data, const SmoOptions& o, const KernelParams& kp) {
    comm::InProcessWorld world(1);
    std::string message;
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      try {
        TrainOneVsOne(ctx, data, kp, o, {}, {.resume_dir = Dir("ckpt")});
      } catch (const Error& e) {
        message = e.what();
      }
    });
    comm::testing::ExpectNoErrors(errors);
    return message;
  };
  SmoOptions other_c = options_;
  other_c.c = 8;
  EXPECT_THAT(resume_error(d, other_c, kernel_), HasSubstr("trained with C 4; this run has 8"));
  EXPECT_THAT(resume_error(d, options_, {.type = KernelType::kRbf, .gamma = 0.25}),
              HasSubstr("its kernel is rbf"));
  data::Dataset changed = d;
  changed.values[5] += 1;
  EXPECT_THAT(resume_error(changed, options_, kernel_), HasSubstr("a checkpoint of another problem"));

  // A flipped byte in the multipliers.
  {
    std::fstream f(Dir("ckpt/pairs-6.bin"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  EXPECT_THAT(resume_error(d, options_, kernel_), HasSubstr("checksum mismatch"));
  fs::remove(Dir("ckpt/svm.txt"));
  EXPECT_THAT(resume_error(d, options_, kernel_), HasSubstr("svm.txt: cannot open"));
}

// A checkpoint that cannot be written (a failed write, a full disk, a crash half-way through the
// third machine's file) ends the run with an error naming the file, and leaves the checkpoint of
// the first two machines, which a resumed run restores before it trains the other four.
TEST_F(SvmCheckpointTest, AFailedCheckpointLeavesThePreviousOne) {
  const data::Dataset d = FourLetters();
  // Each fault starts from no checkpoint: the run writes the first two machines' files, then fails.
  comm::testing::ForEachCheckpointFault(
      "pairs-3.bin", 100,
      [&](comm::Context& ctx) {
        fs::remove_all(Dir("ckpt"));
        TrainOneVsOne(ctx, d, kernel_, options_, {}, {.dir = Dir("ckpt")});
      },
      [&] {
        const Run resumed = Train(1, d, options_, {.resume_dir = Dir("ckpt")});
        ASSERT_EQ(resumed.reports.size(), 6u);
        for (size_t p = 0; p < 6; ++p) EXPECT_EQ(resumed.reports[p].restored, p < 2) << "machine " << p;
      });
}

}  // namespace
}  // namespace parasol::apps::svm
