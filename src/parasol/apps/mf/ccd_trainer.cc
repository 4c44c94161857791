#include "parasol/apps/mf/ccd_trainer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <span>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::mf {

namespace {

using SteadyClock = std::chrono::steady_clock;

// The ratings of a block of rows (users; or items, a rating's item then being its row), by row,
// with their residuals r - mean - w_i.h_j. Within a row, ratings keep the file's order, whatever
// the number of ranks.
struct Lines {
  size_t begin = 0, end = 0;      // the rows held
  std::vector<uint64_t> offsets;  // end - begin + 1
  std::vector<uint32_t> others;   // per rating: the id on the other side
  std::vector<double> residual;
};

Lines Gather(const RatingSet& data, bool by_user, size_t begin, size_t end, double mean) {
  Lines l;
  l.begin = begin;
  l.end = end;
  l.offsets.assign(end - begin + 1, 0);
  auto row = [&](const Rating& r) -> size_t { return by_user ? r.user : r.item; };
  for (const Rating& r : data.ratings) {
    if (row(r) >= begin && row(r) < end) ++l.offsets[row(r) - begin + 1];
  }
  for (size_t i = 1; i < l.offsets.size(); ++i) l.offsets[i] += l.offsets[i - 1];
  std::vector<uint64_t> next(l.offsets.begin(), l.offsets.end() - 1);
  l.others.resize(l.offsets.back());
  l.residual.resize(l.offsets.back());
  for (const Rating& r : data.ratings) {
    if (row(r) < begin || row(r) >= end) continue;
    const uint64_t at = next[row(r) - begin]++;
    l.others[at] = by_user ? r.item : r.user;
    l.residual[at] = r.value - mean;
  }
  return l;
}

// Runs fn(first row, end row) over the threads' shares of [0, rows).
void ForShares(ThreadPool* pool, uint32_t threads, size_t rows,
               const std::function<void(size_t, size_t)>& fn) {
  if (!pool) return fn(0, rows);
  pool->ParallelFor(0, threads, [&](size_t t) {
    const auto [b, e] = collective::BlockRange(rows, static_cast<int>(threads), static_cast<int>(t));
    fn(b, e);
  });
}

// residual -= sign * a_row * b_other: the rank-one term of factor k taken out (+1) or put back (-1).
void SubtractRankOne(Lines& l, const std::vector<double>& a, const std::vector<double>& b, double sign,
                     ThreadPool* pool, uint32_t threads) {
  ForShares(pool, threads, l.end - l.begin, [&](size_t rb, size_t re) {
    for (size_t r = rb; r < re; ++r) {
      const double ar = sign * a[l.begin + r];
      for (uint64_t e = l.offsets[r]; e < l.offsets[r + 1]; ++e) l.residual[e] -= ar * b[l.others[e]];
    }
  });
}

// The exact minimiser for each held row of sum (residual - x b_other)^2 + lambda x^2.
void Solve(const Lines& l, const std::vector<double>& b, double lambda, std::vector<double>& out,
           ThreadPool* pool, uint32_t threads) {
  ForShares(pool, threads, l.end - l.begin, [&](size_t rb, size_t re) {
    for (size_t r = rb; r < re; ++r) {
      double num = 0, den = lambda;
      for (uint64_t e = l.offsets[r]; e < l.offsets[r + 1]; ++e) {
        num += l.residual[e] * b[l.others[e]];
        den += b[l.others[e]] * b[l.others[e]];
      }
      out[l.begin + r] = den > 0 ? num / den : 0.0;
    }
  });
}

// A factor's column for one side, padded so that each rank owns an equal block (Allgather's
// counts are equal); rank r owns [r * block, min((r + 1) * block, count)).
struct Side {
  size_t count = 0, block = 0;
  std::vector<std::vector<double>> columns;  // per factor k, block * ranks values

  std::pair<size_t, size_t> Owned(int rank) const {
    const size_t b = std::min(count, static_cast<size_t>(rank) * block);
    return {b, std::min(count, b + block)};
  }
  void Share(comm::Context& ctx, uint32_t k) {
    if (ctx.size() == 1) return;
    std::vector<double>& c = columns[k];  // in place: this rank's block already sits at its place
    collective::Allgather(ctx, std::span<const double>(c.data(), block), std::span<double>(c));
  }
};

Side MakeSide(size_t count, int ranks, uint32_t rank_k) {
  Side s;
  s.count = count;
  s.block = (count + static_cast<size_t>(ranks) - 1) / static_cast<size_t>(ranks);
  s.columns.assign(rank_k, std::vector<double>(s.block * static_cast<size_t>(ranks), 0.0));
  return s;
}

}  // namespace

CcdResult TrainCcd(comm::Context& ctx, const RatingSet& data, const CcdOptions& o,
                   const std::function<void(const CcdIteration&)>& on_iteration) {
  if (data.ratings.empty()) throw InvalidArgumentError("mf: no ratings");
  if (o.rank == 0 || o.iterations == 0 || o.inner == 0 || o.threads == 0)
    throw InvalidArgumentError(
        "mf --algorithm ccd: rank, iterations, inner iterations and threads must be >= 1");
  if (!(o.lambda >= 0)) throw InvalidArgumentError("--lambda must be >= 0");
  CcdResult result;
  result.mean = data.Mean();
  Side users = MakeSide(data.num_users, ctx.size(), o.rank);
  Side items = MakeSide(data.num_items, ctx.size(), o.rank);
  std::mt19937_64 rng(o.seed);  // the same item factors on every rank, whatever their number
  std::uniform_real_distribution<double> uniform(0.0, o.init_scale);
  for (uint32_t k = 0; k < o.rank; ++k) {
    for (size_t j = 0; j < data.num_items; ++j) items.columns[k][j] = uniform(rng);
  }
  // Plain variables, not structured bindings: the record lambda captures them (clang 15 refuses).
  const std::pair<size_t, size_t> own_users = users.Owned(ctx.rank()), own_items = items.Owned(ctx.rank());
  const size_t ub = own_users.first, ue = own_users.second, ib = own_items.first, ie = own_items.second;
  Lines by_user = Gather(data, true, ub, ue, result.mean);  // user factors start at 0: r - mean
  Lines by_item = Gather(data, false, ib, ie, result.mean);
  std::unique_ptr<ThreadPool> pool;
  if (o.threads > 1) pool = std::make_unique<ThreadPool>(o.threads);
  const double lambda = o.lambda;
  const auto start = SteadyClock::now();
  auto record = [&](uint32_t iteration) {
    // Every rating once (by user), every factor value once (by its owner).
    std::vector<double> sum{0.0};
    for (double r : by_user.residual) sum[0] += r * r;
    for (uint32_t k = 0; k < o.rank; ++k) {
      for (size_t i = ub; i < ue; ++i) sum[0] += lambda * users.columns[k][i] * users.columns[k][i];
      for (size_t j = ib; j < ie; ++j) sum[0] += lambda * items.columns[k][j] * items.columns[k][j];
    }
    if (ctx.size() > 1) collective::Allreduce(ctx, std::span<double>(sum));
    CcdIteration it{iteration, std::chrono::duration<double>(SteadyClock::now() - start).count(),
                    sum[0] / static_cast<double>(data.ratings.size())};
    result.iterations.push_back(it);
    if (on_iteration) on_iteration(it);
  };
  record(0);
  for (uint32_t t = 1; t <= o.iterations; ++t) {
    for (uint32_t k = 0; k < o.rank; ++k) {
      std::vector<double>& w = users.columns[k];
      std::vector<double>& h = items.columns[k];
      // The residual without factor k; refit w_k and h_k to it; take the new term out again.
      SubtractRankOne(by_user, w, h, -1.0, pool.get(), o.threads);
      SubtractRankOne(by_item, h, w, -1.0, pool.get(), o.threads);
      for (uint32_t s = 0; s < o.inner; ++s) {
        Solve(by_user, h, lambda, w, pool.get(), o.threads);
        users.Share(ctx, k);
        Solve(by_item, w, lambda, h, pool.get(), o.threads);
        items.Share(ctx, k);
      }
      SubtractRankOne(by_user, w, h, 1.0, pool.get(), o.threads);
      SubtractRankOne(by_item, h, w, 1.0, pool.get(), o.threads);
    }
    record(t);
  }
  for (uint32_t k = 0; k < o.rank; ++k) {
    result.user_factors.insert(result.user_factors.end(), users.columns[k].begin(),
                               users.columns[k].begin() + static_cast<ptrdiff_t>(data.num_users));
    result.item_factors.insert(result.item_factors.end(), items.columns[k].begin(),
                               items.columns[k].begin() + static_cast<ptrdiff_t>(data.num_items));
  }
  return result;
}

}  // namespace parasol::apps::mf
