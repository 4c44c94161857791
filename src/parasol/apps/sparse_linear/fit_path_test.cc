// The path loop's spacing of checks, driven by a program whose model is solved after a set number
// of updates: the checks come where the spacing rule says, whatever the program computes.
#include "parasol/apps/sparse_linear/fit_path.h"

#include <gtest/gtest.h>

#include <vector>

#include "parasol/apps/sparse_linear/testing.h"

namespace parasol::apps::sparse_linear {
namespace {

constexpr uint32_t kCoordinates = 4;

// Moves nothing; its model is solved `solve_after` updates after each check (never if 0), and the
// fit converges at its `checks`-th check.
class CountingProgram final : public PathProgram {
 public:
  CountingProgram(uint64_t solve_after, uint64_t update_cost, uint64_t check_cost, bool has_model)
      : solve_after_(solve_after),
        update_cost_(update_cost),
        check_cost_(check_cost),
        has_model_(has_model) {}

  void SetLambda(double, double) override {}
  FitCheck Check(modelpar::RoundEngine&) override {
    since_check_ = 0;
    ++checks_;
    FitCheck c;
    c.objective = 1;
    c.relative_gap = checks_ >= 6 ? 0.0 : 1.0;
    return c;
  }
  LinearFit Result(double lambda) const override { return {.lambda = lambda}; }
  uint32_t coordinates() const override { return kCoordinates; }
  uint32_t feature(uint32_t j) const override { return j; }
  double null_objective() const override { return 1; }
  bool finite() const override { return true; }
  uint64_t UpdateCost(uint32_t) const override { return update_cost_; }
  uint64_t CheckCost() const override { return check_cost_; }
  ModelState model_state() const override {
    if (!has_model_) return ModelState::kNone;
    return solve_after_ > 0 && since_check_ >= solve_after_ ? ModelState::kSolved : ModelState::kSolving;
  }

  void Update(size_t, std::span<const uint32_t>, std::span<double>) override {}
  double Dependency(uint32_t, uint32_t) const override { return 0; }
  void Aggregate(std::span<const uint32_t> block, std::span<const double>,
                 std::span<double> deltas) override {
    since_check_ += block.size();
    for (double& d : deltas) d = 0;
  }
  void Commit(size_t, std::span<const uint32_t>, std::span<const double>) override {}

 private:
  const uint64_t solve_after_, update_cost_, check_cost_;
  const bool has_model_;
  uint64_t since_check_ = 0;
  int checks_ = 0;
};

// The updates done at each check of a one-lambda fit of `program` (cyclic order, a block of one).
std::vector<uint64_t> CheckedAt(CountingProgram& program) {
  PathOptions o;
  o.lambda = 1;
  o.engine.schedule = {.order = modelpar::Order::kCyclic, .schedule_size = 1, .dependency_threshold = 1};
  std::vector<uint64_t> at;
  o.on_check = [&](const FitCheck& c) { at.push_back(c.updates); };
  comm::InProcessWorld world(1);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { FitPath(ctx, program, {1.0}, o, std::chrono::steady_clock::now()); }));
  return at;
}

// Updates that cost as much as a check: a check comes as soon as the model is solved.
TEST(FitPath, ChecksComeOnceTheModelIsSolved) {
  CountingProgram program(/*solve_after=*/6, /*update_cost=*/100, /*check_cost=*/100, true);
  EXPECT_EQ(CheckedAt(program), (std::vector<uint64_t>{0, 6, 12, 18, 24, 30}));
}

// Cheap updates: a solved model is swept on until the updates have read half a check's entries.
TEST(FitPath, ASolvedModelIsSweptUntilTheUpdatesPayForTheCheck) {
  CountingProgram program(/*solve_after=*/6, /*update_cost=*/1, /*check_cost=*/100, true);
  EXPECT_EQ(CheckedAt(program), (std::vector<uint64_t>{0, 50, 100, 150, 200, 250}));
}

// A model never solved is given 1,000 sweeps of the working set (every coordinate here).
TEST(FitPath, AModelNeverSolvedIsCheckedAfterAThousandSweeps) {
  CountingProgram program(/*solve_after=*/0, /*update_cost=*/100, /*check_cost=*/100, true);
  const std::vector<uint64_t> at = CheckedAt(program);
  ASSERT_EQ(at.size(), 6u);
  EXPECT_EQ(at[1], 1000u * kCoordinates);
  EXPECT_EQ(at[5], 5000u * kCoordinates);
}

// A program without a model: ten sweeps, then half a check's work, or sooner sixty sweeps (of 4
// coordinates), twice as many after each check: 240 updates, then 480, then the work's 500.
TEST(FitPath, WithoutAModelChecksAreSpacedByTheirCost) {
  CountingProgram costly(6, /*update_cost=*/100, /*check_cost=*/100, false);
  EXPECT_EQ(CheckedAt(costly), (std::vector<uint64_t>{0, 40, 80, 120, 160, 200}));
  CountingProgram cheap(6, /*update_cost=*/1, /*check_cost=*/1000, false);
  EXPECT_EQ(CheckedAt(cheap), (std::vector<uint64_t>{0, 240, 720, 1220, 1720, 2220}));
}

}  // namespace
}  // namespace parasol::apps::sparse_linear
