#include "parasol/apps/mf/mf_trainer.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/clock.h"
#include "parasol/core/error.h"
#include "parasol/core/mutex.h"
#include "parasol/core/rng.h"
#include "parasol/core/task_group.h"
#include "parasol/core/thread_pool.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::apps::mf {

namespace {

constexpr uint32_t kItems = 1;
constexpr uint32_t kUsers = 2;
// Row c: [workers that reported clock c, the sum of their parts, then each worker's time].
constexpr uint32_t kProgress = 3;
constexpr uint64_t kProgressHead = 2;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What the workers of one process share.
struct Shared {
  const RatingSet& data;
  const MfOptions& o;
  Clock& clock;  // the context's: the straggler's extra time and the watch's polls
  float mean = 0;
  int first_worker = 0;  // global id of this process's worker 0
  int workers = 0;       // over all processes
  std::vector<std::vector<uint32_t>> split;
  // When training starts: after the initial values are in (or restored), at the barrier every
  // worker leaves together. Times are measured from here; setup is the same for every model.
  Mutex mu;
  std::chrono::steady_clock::time_point start;  // written under mu until every worker has set it
  bool started PARASOL_GUARDED_BY(mu) = false;
  std::vector<MfEvent> events PARASOL_GUARDED_BY(mu);
  double final_part PARASOL_GUARDED_BY(mu) = 0;
  double wait_seconds PARASOL_GUARDED_BY(mu) = 0;
  uint64_t first_clock PARASOL_GUARDED_BY(mu) = 0;
  double watched = 0;  // the time of the watch's last read of the shards (rank 0; the watch's own)

  // Whether on_clock hears of clock c: the last, and with eval_every > 0 the first and every
  // eval_every-th.
  bool Due(uint64_t c, uint64_t first) const {
    return c == o.clocks || (o.eval_every > 0 && (c == first || c % o.eval_every == 0));
  }
};

// Columns of a factor row: the factors, then with the adaptive step the row's G.
uint32_t Width(const MfOptions& o) { return o.rank + (o.step == MfStep::kAdaptive ? 1 : 0); }

// Sums in four lanes, so that the compiler vectorises them (one sum in order cannot be): a
// dot product with f(a, b) = a b, a sum of squares of a function of both.
template <typename F>
float LaneSum(const float* a, const float* b, size_t n, F f) {
  float s[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t l = 0; l < 4; ++l) s[l] += f(a[i + l], b[i + l]);
  }
  for (; i < n; ++i) s[0] += f(a[i], b[i]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// One worker thread's training loop.
class MfWorker {
 public:
  MfWorker(Shared& s, ps::ParameterServer& ps, int index)
      : s_(s),
        o_(s.o),
        me_(s.first_worker + index),
        worker_(ps.CreateWorker(index)),
        items_(worker_->GetTable<float>(kItems)),
        users_(worker_->GetTable<float>(kUsers)),
        progress_(worker_->GetTable<double>(kProgress)),
        mine_(s.split[static_cast<size_t>(me_)]),
        width_(Width(o_)),
        v_(width_),
        dv_(width_),
        du_(width_) {
    for (uint32_t k : mine_) my_users_.push_back(s_.data.ratings[k].user);
    std::sort(my_users_.begin(), my_users_.end());
    my_users_.erase(std::unique(my_users_.begin(), my_users_.end()), my_users_.end());
    for (uint32_t k : mine_) my_items_.push_back(s_.data.ratings[k].item);
    for (uint64_t j = static_cast<uint64_t>(me_); j < s_.data.num_items;
         j += static_cast<uint64_t>(s_.workers))
      owned_items_.push_back(j);
    std::sort(my_items_.begin(), my_items_.end());
    my_items_.erase(std::unique(my_items_.begin(), my_items_.end()), my_items_.end());
    auto slot = [](const std::vector<uint64_t>& ids, uint64_t id) {
      return static_cast<uint32_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    };
    for (uint32_t k : mine_) {
      const Rating& r = s_.data.ratings[k];
      local_.push_back({slot(my_users_, r.user), r.item, slot(my_items_, r.item), r.value});
    }
    user_rows_.resize(my_users_.size() * width_);
  }

  void Run() {
    uint64_t clock = 0;
    if (o_.resume_dir.empty()) {
      Initialise();
      worker_->GlobalBarrier();
    } else {
      clock = worker_->Restore(o_.resume_dir);
    }
    {
      MutexLock lock(s_.mu);
      if (!s_.started) {
        s_.started = true;
        s_.start = std::chrono::steady_clock::now();
        s_.first_clock = clock;
      }
    }
    WarmUp();
    LoadUsers();
    Report(clock, s_.Due(clock, clock) ? Evaluate() : 0.0);
    for (uint64_t c = clock; c < o_.clocks; ++c) {
      double cpu = ThreadCpuSeconds();
      Sweep(c);
      // Only one worker's own view is the model's state; with several, rank 0's watch reads it.
      double part = s_.workers == 1 && o_.on_clock && s_.Due(c + 1, clock) ? Evaluate() : 0.0;
      if (me_ == o_.straggler) {
        double work = ThreadCpuSeconds() - cpu;
        s_.clock.SleepFor(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(work * (o_.straggler_factor - 1))));
      }
      worker_->Clock();
      Report(c + 1, part);
      if (o_.checkpoint_every > 0 && (c + 1) % o_.checkpoint_every == 0)
        worker_->Checkpoint(o_.checkpoint_dir);
    }
    worker_->GlobalBarrier();  // every update is now visible: the exact objective
    WarmUp();
    double part = Evaluate();
    MutexLock lock(s_.mu);
    s_.final_part += part;
    s_.wait_seconds += worker_->wait_seconds();
  }

  // The second barrier, after every worker of every process has evaluated.
  void Finish() { worker_->GlobalBarrier(); }

 private:
  // Users of this worker's ratings and items j with j % workers == me get their first values.
  void Initialise() {
    std::vector<float> row(width_, 1.0f);  // the adaptive step's G starts at 1
    auto fill = [&](uint64_t id, uint64_t salt) {
      Rng rng(o_.seed, salt, id, 0);
      for (uint32_t f = 0; f < o_.rank; ++f)
        row[f] = static_cast<float>((2 * rng.Uniform() - 1) * o_.init_scale);
    };
    for (uint64_t j : owned_items_) {
      fill(j, 1);
      items_.IncRow(j, row);
    }
    for (uint64_t u : my_users_) {
      fill(u, 2);
      users_.IncRow(u, row);
    }
  }

  // Asks for every row this worker will read, in one message per shard.
  void WarmUp() {
    items_.Prefetch(my_items_);
    items_.Prefetch(owned_items_);  // the objective's norms: items without ratings here too
    users_.Prefetch(my_users_);
  }

  // This worker's user rows as the table holds them: from here on it changes them in place, and
  // no one else writes them.
  void LoadUsers() {
    for (size_t i = 0; i < my_users_.size(); ++i)
      users_.Get(my_users_[i]).CopyTo(std::span<float>(user_rows_.data() + i * width_, width_));
    users_at_clock_ = user_rows_;
  }

  // The clock's changes of this worker's user rows leave for the table (with the next Clock).
  // The table adds them to what it holds, the rows at the clock's start; the rows here take the
  // sum it will make, so that the two stay equal to the bit (a run resumed from a checkpoint
  // goes on from exactly where it stopped).
  void StoreUsers() {
    for (size_t i = 0; i < my_users_.size(); ++i) {
      float* now = user_rows_.data() + i * width_;
      float* then = users_at_clock_.data() + i * width_;
      for (size_t f = 0; f < width_; ++f) du_[f] = now[f] - then[f];
      users_.IncRow(my_users_[i], du_);
      for (size_t f = 0; f < width_; ++f) now[f] = then[f] = then[f] + du_[f];
    }
  }

  // One SGD pass over this worker's ratings, in an order fixed by the seed and the clock.
  void Sweep(uint64_t clock) {
    // The ratings themselves are shuffled, not their indices: the pass then reads them in order (a
    // rating read at a random place stalled the step that needs it: a fifth of the pass).
    order_.assign(local_.begin(), local_.end());
    Rng rng(o_.seed, static_cast<uint64_t>(me_), clock, 0);
    Shuffle(std::span<LocalRating>(order_), rng);
    if (o_.step == MfStep::kAdaptive) {
      Steps<true>();
    } else {
      Steps<false>();
    }
    StoreUsers();
  }

  // One step per rating in order_: the user's row here in place, the item's through the table.
  // The gradient of a rating's term (halved) for u is lambda u - e v, and for v lambda v - e u.
  template <bool kAdaptive>
  void Steps() {
    const float lr = o_.learning_rate, lambda = o_.lambda;
    const size_t rank = o_.rank;
    const float inverse_rank = 1.0f / static_cast<float>(rank);
    float* v = v_.data();
    float* dv = dv_.data();
    auto product = [](float a, float b) { return a * b; };
    for (const LocalRating& r : order_) {
      float* u = user_rows_.data() + static_cast<size_t>(r.user) * width_;
      ps::RowUpdate<float> item = items_.Update(r.item);
      item.CopyTo(v_);
      const float e = r.value - s_.mean - LaneSum(u, v, rank, product);
      if constexpr (kAdaptive) {
        const float step_u = lr / std::sqrt(u[rank]), step_v = lr / std::sqrt(v[rank]);
        const float squares_u = LaneSum(
            u, v, rank, [&](float a, float b) { return (lambda * a - e * b) * (lambda * a - e * b); });
        const float squares_v = LaneSum(
            u, v, rank, [&](float a, float b) { return (lambda * b - e * a) * (lambda * b - e * a); });
        for (size_t f = 0; f < rank; ++f) {
          const float uf = u[f];
          u[f] -= step_u * (lambda * uf - e * v[f]);
          dv[f] = -step_v * (lambda * v[f] - e * uf);
        }
        u[rank] += squares_u * inverse_rank;
        dv[rank] = squares_v * inverse_rank;
      } else {
        for (size_t f = 0; f < rank; ++f) {
          const float uf = u[f];
          u[f] += lr * (e * v[f] - lambda * uf);
          dv[f] = lr * (e * uf - lambda * v[f]);
        }
      }
      item.Add(dv_);
    }
  }

  // This worker's part of the objective's sum, from the parameters it sees: each item row read
  // once (a read per rating was half of the evaluation's time).
  double Evaluate() {
    double sum = 0;
    const size_t rank = o_.rank;
    auto norm = [&](const float* x) {
      double n = 0;
      for (uint32_t f = 0; f < o_.rank; ++f) n += static_cast<double>(x[f]) * x[f];
      return n;
    };
    item_rows_.resize(my_items_.size() * width_);
    for (size_t i = 0; i < my_items_.size(); ++i)
      items_.Get(my_items_[i]).CopyTo(std::span<float>(item_rows_.data() + i * width_, width_));
    for (const LocalRating& r : local_) {
      const float* u = user_rows_.data() + static_cast<size_t>(r.user) * width_;
      const float* v = item_rows_.data() + static_cast<size_t>(r.item_slot) * width_;
      double dot = 0;
      for (size_t f = 0; f < rank; ++f) dot += static_cast<double>(u[f]) * v[f];
      double e = r.value - s_.mean - dot;
      sum += e * e;
    }
    for (size_t i = 0; i < my_users_.size(); ++i) sum += o_.lambda * norm(user_rows_.data() + i * width_);
    for (uint64_t j : owned_items_) {
      items_.Get(j).CopyTo(v_);
      sum += o_.lambda * norm(v_.data());
    }
    return sum;
  }

  void Report(uint64_t clock, double part) {
    double seconds = 0;
    {
      MutexLock lock(s_.mu);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s_.start).count();
      s_.events.push_back(MfEvent{me_, clock, seconds, part});
    }
    progress_.Inc(clock, 0, 1.0);
    progress_.Inc(clock, 1, part);
    progress_.Inc(clock, kProgressHead + static_cast<uint64_t>(me_), seconds);
    worker_->Flush();  // now, not with the next clock's updates
  }

  Shared& s_;
  const MfOptions& o_;
  const int me_;
  std::unique_ptr<ps::Worker> worker_;
  ps::Table<float> items_;
  ps::Table<float> users_;
  ps::Table<double> progress_;
  // A rating of this worker's: its user's place in my_users_, the item, its place in my_items_,
  // the value.
  struct LocalRating {
    uint32_t user;
    uint32_t item;
    uint32_t item_slot;
    float value;
  };

  const std::vector<uint32_t>& mine_;
  const uint32_t width_;
  std::vector<uint64_t> my_users_, my_items_;  // users and items of this worker's ratings, sorted
  std::vector<uint64_t> owned_items_;          // items it initialises and whose norms it sums
  std::vector<LocalRating> local_;             // in the order of mine_
  std::vector<LocalRating> order_;             // local_ in this clock's order
  // This worker's user rows (my_users_'s order, width_ each), and as they were at the clock's start.
  std::vector<float> user_rows_, users_at_clock_;
  std::vector<float> item_rows_;    // Evaluate's copy of my_items_'s rows
  std::vector<float> v_, dv_, du_;  // an item row and its update; a user row's update
};

}  // namespace

namespace {

void Validate(const RatingSet& data, const MfOptions& o, int processes) {
  auto bad = [](const std::string& what) { throw InvalidArgumentError("mf: " + what); };
  if (data.ratings.empty()) bad("no ratings");
  if (o.rank == 0 || o.rank > 4096) bad("rank must be in [1, 4096]");
  if (!(o.learning_rate > 0) || !(o.lambda >= 0) || !(o.init_scale > 0))
    bad("learning rate and init scale must be positive, lambda not negative");
  if (o.workers_per_process < 1) bad("workers per process must be at least 1");
  int workers = processes * o.workers_per_process;
  if (o.straggler >= workers)
    bad(fmt::format("straggler worker {} does not exist ({} workers)", o.straggler, workers));
  if (o.straggler >= 0 && !(o.straggler_factor >= 1)) bad("the straggler's factor must be at least 1");
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    bad("checkpoint_every needs a checkpoint directory");
}

// Every process's events, gathered on every process, by time.
std::vector<MfEvent> GatherEvents(comm::Context& ctx, const std::vector<MfEvent>& mine) {
  std::vector<double> flat(mine.size() * 4);
  for (size_t i = 0; i < mine.size(); ++i) {
    flat[i * 4] = mine[i].worker;
    flat[i * 4 + 1] = static_cast<double>(mine[i].clock);
    flat[i * 4 + 2] = mine[i].seconds;
    flat[i * 4 + 3] = mine[i].part;
  }
  const std::vector<double> all = collective::AllgatherVariable<double>(ctx, std::span<const double>(flat));
  std::vector<MfEvent> events;
  for (size_t i = 0; i + 3 < all.size(); i += 4) {
    events.push_back(
        MfEvent{static_cast<int>(all[i]), static_cast<uint64_t>(all[i + 1]), all[i + 2], all[i + 3]});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const MfEvent& a, const MfEvent& b) { return a.seconds < b.seconds; });
  return events;
}

ps::PsStats SumStats(comm::Context& ctx, const ps::PsStats& s) {
  std::vector<int64_t> v{static_cast<int64_t>(s.update_batches),   static_cast<int64_t>(s.update_bytes),
                         static_cast<int64_t>(s.gets_sent),        static_cast<int64_t>(s.rows_received),
                         static_cast<int64_t>(s.rows_pushed),      static_cast<int64_t>(s.waits),
                         static_cast<int64_t>(s.one_sided_reads),  static_cast<int64_t>(s.one_sided_rows),
                         static_cast<int64_t>(s.one_sided_retries)};
  collective::Allreduce(ctx, std::span<int64_t>(v));
  auto u = [&](size_t i) { return static_cast<uint64_t>(v[i]); };
  ps::PsStats sum{u(0), u(1), u(2), u(3), u(4), u(5)};
  sum.one_sided_reads = u(6);
  sum.one_sided_rows = u(7);
  sum.one_sided_retries = u(8);
  return sum;
}

// The exact objective of the rows the shards hold now, read outside the consistency model.
double ExactObjective(const Shared& s, ps::ParameterServer& server, const std::vector<uint64_t>& items,
                      const std::vector<uint64_t>& users) {
  std::vector<ps::Row> v = server.ReadLatest(kItems, items), u = server.ReadLatest(kUsers, users);
  const uint32_t rank = s.o.rank;
  double sum = 0;
  for (const Rating& r : s.data.ratings) {
    const float* a = u[r.user].DenseData<float>();
    const float* b = v[r.item].DenseData<float>();
    double dot = 0;
    for (uint32_t f = 0; f < rank; ++f) dot += static_cast<double>(a[f]) * b[f];
    double e = r.value - s.mean - dot;
    sum += e * e;
  }
  for (const auto* rows : {&u, &v}) {
    for (const ps::Row& row : *rows) {
      const float* x = row.DenseData<float>();
      for (uint32_t f = 0; f < rank; ++f) sum += s.o.lambda * static_cast<double>(x[f]) * x[f];
    }
  }
  return sum / static_cast<double>(s.data.ratings.size());
}

// Row ids [from, to).
std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> ids;
  ids.reserve(to > from ? to - from : 0);
  for (uint64_t i = from; i < to; ++i) ids.push_back(i);
  return ids;
}

std::vector<uint64_t> Ids(uint64_t n) { return Range(0, n); }

// The exact objective every eval_every_ms while training runs (rank 0 only).
class Evaluator {
 public:
  Evaluator(Shared& s, ps::ParameterServer& server)
      : s_(s), server_(server), items_(Ids(s.data.num_items)), users_(Ids(s.data.num_users)) {}

  std::vector<Evaluation> Run(const std::atomic<bool>& stop) {
    std::vector<Evaluation> out;
    const auto period = std::chrono::milliseconds(s_.o.eval_every_ms);
    auto next = std::chrono::steady_clock::now() + period;
    while (!stop) {
      std::this_thread::sleep_until(next);
      next += period;
      std::chrono::steady_clock::time_point start;
      {
        MutexLock lock(s_.mu);
        if (!s_.started) continue;
        start = s_.start;
      }
      double objective = ExactObjective(s_, server_, items_, users_);
      out.push_back(
          {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), objective});
    }
    return out;
  }

 private:
  Shared& s_;
  ps::ParameterServer& server_;
  std::vector<uint64_t> items_, users_;
};

// Rank 0's watch of the progress table: it reports clocks once every worker has finished them, in
// order, with the objective of a state of the model. With one worker that is every due clock
// (Shared::Due), from the worker's own view (the model itself). With several the watch reads every
// row from the shards and reports the newest clock all have finished, at the time of the read, once
// a due clock has passed since its last report: the objective of the model the shards hold then. A
// read takes longer than a clock on a loaded machine, so clocks that finish during one are not
// reported, rather than reported late with a later state's figure.
// This replaces the workers' own per-clock evaluation, a second pass over their ratings that
// Petuum-style apps sum into a figure that flatters stale models (0.420 at clock 100 of a
// MovieLens run whose final state is 0.443). The start is the workers' (each sees the initial
// values); the last clock of several workers is TrainMf's, after the barrier that makes every
// update visible.
class ProgressWatch {
 public:
  ProgressWatch(Shared& s, ps::ParameterServer& server)
      : s_(s),
        server_(server),
        last_(s.workers == 1 || s.o.clocks == 0 ? s.o.clocks : s.o.clocks - 1),
        items_(Ids(s.workers == 1 ? 0 : s.data.num_items)),
        users_(Ids(s.workers == 1 ? 0 : s.data.num_users)) {}

  // Until `stop` (the workers are done), then while their last reports reach the shards (they
  // were sent before the workers' last barrier: the deadline only bounds a failure of the
  // parameter server), unless the workers failed.
  void Run(const std::atomic<bool>& stop, const std::atomic<bool>& failed) {
    uint64_t next = 0;
    for (;;) {  // the first clock is known once a worker has started (or restored)
      {
        MutexLock lock(s_.mu);
        if (s_.started) {
          next = first_ = s_.first_clock;
          break;
        }
      }
      if (stop) return;
      s_.clock.SleepFor(std::chrono::milliseconds(1));
    }
    std::chrono::steady_clock::time_point end = std::chrono::steady_clock::time_point::max();
    // Each poll is a read from the shards: from 1 ms after a clock, doubling to 50 ms while none
    // finishes, so short clocks are reported at once and long ones cost a few reads each.
    auto period = std::chrono::milliseconds(1);
    while (next <= last_ && std::chrono::steady_clock::now() < end && !failed) {
      if (stop && end == std::chrono::steady_clock::time_point::max()) {
        end = std::chrono::steady_clock::now() + s_.o.timeout_ms;
      }
      const uint64_t reported = Report(next);
      if (reported == next) {
        s_.clock.SleepFor(period);
        period = std::min(2 * period, std::chrono::milliseconds(50));
      } else {
        period = std::chrono::milliseconds(1);
      }
      next = reported;
    }
  }

 private:
  // Reports what every worker has finished from clock `next` on; returns the next clock to report.
  uint64_t Report(uint64_t next) {
    // Several workers: the row of the last clock too, whose figure is TrainMf's final state.
    const uint64_t to = std::min(s_.o.clocks, next + kLookAhead - 1);
    std::vector<ps::Row> rows = server_.ReadLatest(kProgress, Range(next, to + 1));
    auto finished = [&](uint64_t clock) {
      return rows[clock - next].DenseData<double>()[0] > s_.workers - 0.5;
    };
    uint64_t done = next;  // clocks next..done-1 are finished by every worker
    while (done <= to && finished(done)) ++done;
    if (done == next) return next;
    if (s_.workers == 1 || next == first_) {  // the workers' own figures are the model's
      const uint64_t until = s_.workers == 1 ? std::min(done, last_ + 1) : next + 1;
      for (uint64_t clock = next; clock < until; ++clock) {
        if (!s_.Due(clock, first_)) continue;
        const double* x = rows[clock - next].DenseData<double>();
        double seconds = 0;
        for (int w = 0; w < s_.workers; ++w)
          seconds = std::max(seconds, x[kProgressHead + static_cast<uint64_t>(w)]);
        s_.o.on_clock({clock, seconds, x[1] / static_cast<double>(s_.data.ratings.size())});
      }
      return until;
    }
    if (done > last_) return done;  // the last clock is done: its state is the final one
    // The newest finished clock, once an eval_every-th has passed since the last report.
    if (s_.o.eval_every == 0 || (done - 1) / s_.o.eval_every * s_.o.eval_every < next) return done;
    {
      MutexLock lock(s_.mu);
      s_.watched = std::chrono::duration<double>(std::chrono::steady_clock::now() - s_.start).count();
    }
    s_.o.on_clock({done - 1, s_.watched, ExactObjective(s_, server_, items_, users_)});
    return done;
  }

  static constexpr uint64_t kLookAhead = 64;  // progress rows read at once
  Shared& s_;
  ps::ParameterServer& server_;
  const uint64_t last_;  // the last clock the watch reports
  uint64_t first_ = 0;   // the first clock (0, or a checkpoint's), once a worker has started
  const std::vector<uint64_t> items_, users_;  // every row, for the exact objective
};

// The shards' rows, read outside the consistency model once every update is in.
MfModel ReadModel(const Shared& s, ps::ParameterServer& server) {
  MfModel m{.rank = s.o.rank, .users = s.data.num_users, .items = s.data.num_items, .mean = s.mean};
  auto flatten = [&](uint32_t table, uint64_t rows, std::vector<float>& out) {
    out.reserve(rows * m.rank);
    for (const ps::Row& row : server.ReadLatest(table, Ids(rows))) {
      const float* x = row.DenseData<float>();
      out.insert(out.end(), x, x + m.rank);
    }
  };
  flatten(kUsers, m.users, m.user_factors);
  flatten(kItems, m.items, m.item_factors);
  return m;
}

// Runs this process's workers (and on rank 0 the evaluator) to the end. Returns the evaluations.
std::vector<Evaluation> RunWorkers(comm::Context& ctx, Shared& s, ps::ParameterServer& server) {
  const bool evaluate = ctx.rank() == 0 && s.o.eval_every_ms > 0;
  const bool watch = ctx.rank() == 0 && s.o.on_clock;
  ThreadPool pool(static_cast<size_t>(s.o.workers_per_process) + (evaluate ? 1 : 0) + (watch ? 1 : 0));
  std::vector<std::unique_ptr<MfWorker>> workers;
  for (int i = 0; i < s.o.workers_per_process; ++i)
    workers.push_back(std::make_unique<MfWorker>(s, server, i));
  TaskGroup running(&pool);
  for (auto& w : workers) {
    // One thread per worker: they meet in barriers, so all must run at once.
    running.Run([&server, &w, &ctx] {
      try {
        w->Run();
        w->Finish();
      } catch (const std::exception& e) {
        server.Abort(fmt::format("rank {}: mf worker failed: {}", ctx.rank(), e.what()));
        throw;
      }
    });
  }
  std::atomic<bool> stop{false};
  std::vector<Evaluation> evaluations;
  std::atomic<bool> workers_failed{false};
  TaskGroup watching(&pool);
  if (evaluate) watching.Run([&] { evaluations = Evaluator(s, server).Run(stop); });
  if (watch) {
    watching.Run([&] {
      try {
        ProgressWatch(s, server).Run(stop, workers_failed);
      } catch (const std::exception& e) {  // on_clock's verdict (a diverged run) ends every worker
        server.Abort(fmt::format("rank {}: {}", ctx.rank(), e.what()));
        throw;
      }
    });
  }
  // The workers' error, then the evaluator's and the watcher's, are weighed together: the one
  // reported is a cause, not another worker's "aborted" echo of it.
  const std::exception_ptr workers_error = running.Join();
  workers_failed = workers_error != nullptr;
  stop = true;
  watching.Fail(workers_error);
  watching.Wait();
  return evaluations;
}

}  // namespace

MfResult TrainMf(comm::Context& ctx, const RatingSet& data, const MfOptions& o) {
  Validate(data, o, ctx.size());
  Shared s{.data = data, .o = o, .clock = ctx.env().clock()};
  s.mean = static_cast<float>(data.Mean());
  s.workers = ctx.size() * o.workers_per_process;
  s.first_worker = ctx.rank() * o.workers_per_process;
  s.split = SplitByUser(data, s.workers);
  ps::ParameterServer server(ctx, {.workers_per_process = o.workers_per_process, .timeout_ms = o.timeout_ms});
  server.CreateTable({.id = kItems,
                      .dtype = DType::kFloat32,
                      .width = Width(o),
                      .num_rows = data.num_items,
                      .consistency = o.consistency,
                      .staleness = o.staleness,
                      .vap_threshold = o.vap_threshold,
                      .partitioning = o.one_sided_reads ? ps::Partitioning::kRange : ps::Partitioning::kHash,
                      .one_sided_reads = o.one_sided_reads});
  // Only their owner writes user rows, so its reads of them are exact whatever the bound: the
  // largest staleness keeps them cached for good, with no refreshes and no pushes.
  server.CreateTable({.id = kUsers,
                      .dtype = DType::kFloat32,
                      .width = Width(o),
                      .num_rows = data.num_users,
                      .consistency = ps::Consistency::kSsp,
                      .staleness = std::numeric_limits<uint32_t>::max()});
  // Written by every worker, read by rank 0's watch only, outside the consistency model.
  server.CreateTable({.id = kProgress,
                      .dtype = DType::kFloat64,
                      .width = kProgressHead + static_cast<uint64_t>(s.workers),
                      .num_rows = o.clocks + 1,
                      .consistency = ps::Consistency::kSsp,
                      .staleness = std::numeric_limits<uint32_t>::max(),
                      .checkpointed = false});
  std::vector<Evaluation> evaluations = RunWorkers(ctx, s, server);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  MfModel model;
  if (o.keep_model && ctx.rank() == 0) model = ReadModel(s, server);
  ps::PsStats stats = server.stats();
  server.Shutdown();

  MfResult result;
  result.ratings = data.ratings.size();
  std::vector<MfEvent> events;
  double local[3] = {0, 0, 0}, total[3];
  {
    MutexLock lock(s.mu);  // the workers have finished; taken for form's sake (and the analysis)
    result.first_clock = s.first_clock;
    events = std::move(s.events);
    local[0] = s.final_part;
    local[1] = s.wait_seconds;
  }
  result.events = GatherEvents(ctx, events);
  collective::Allreduce(ctx, local, total, 3, DType::kFloat64);
  result.final_objective = total[0] / static_cast<double>(data.ratings.size());
  result.wait_seconds = total[1];
  collective::AllreduceOptions max;
  max.op = ReduceOp::kMax;
  collective::Allreduce(ctx, &seconds, &result.seconds, 1, DType::kFloat64, max);
  result.stats = SumStats(ctx, stats);
  result.evaluations = std::move(evaluations);
  result.model = std::move(model);
  if (ctx.rank() == 0 && !result.events.empty()) {
    // The state the last clock left, at the moment the last worker finished it (evaluations from
    // after that moment saw the same state).
    double end = result.events.back().seconds;
    std::erase_if(result.evaluations, [&](const Evaluation& e) { return e.seconds >= end; });
    result.evaluations.push_back({end, result.final_objective});
    if (o.on_clock && s.workers > 1 && result.first_clock < o.clocks)  // the watch has ended
      o.on_clock({o.clocks, std::max(end, s.watched), result.final_objective});
  }
  return result;
}

}  // namespace parasol::apps::mf
