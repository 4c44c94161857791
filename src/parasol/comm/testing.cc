#include "parasol/comm/testing.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/clock.h"
#include "parasol/core/error.h"
#include "parasol/core/faulty_file_system.h"

namespace parasol::comm::testing {

std::vector<std::exception_ptr> RunRanks(InProcessWorld& world, const std::function<void(Context&)>& fn,
                                         ContextOptions options, std::chrono::milliseconds watchdog) {
  const size_t n = static_cast<size_t>(world.size());
  std::vector<std::exception_ptr> errors(n);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<bool> finished(n, false);  // guarded by mu
  size_t running = n;                    // guarded by mu
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        Context ctx(world.CreateTransport(static_cast<int>(r)), options);
        fn(ctx);
      } catch (...) {
        errors[r] = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      finished[r] = true;
      --running;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, watchdog, [&] { return running == 0; })) {
      for (size_t r = 0; r < n; ++r) {
        if (!finished[r])
          std::fprintf(stderr, "RunRanks: rank %zu did not finish within %lld ms (hung)\n", r,
                       static_cast<long long>(watchdog.count()));
      }
      std::fflush(stderr);
      std::abort();
    }
  }
  for (auto& t : threads) t.join();
  return errors;
}

std::vector<double> SecondsOnAStoppedClock(int ranks, const std::function<double(Context&)>& fn) {
  ManualClock clock;
  InProcessWorld world(ranks);
  std::vector<double> seconds(static_cast<size_t>(ranks), -1);
  ExpectNoErrors(RunRanks(world, [&](Context& ctx) { seconds[static_cast<size_t>(ctx.rank())] = fn(ctx); },
                          {.env = Env(nullptr, &clock)}));
  return seconds;
}

void WaitUntil(const std::function<bool()>& done, std::string_view what, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw TimeoutError(fmt::format("timed out after {} ms waiting for {}", timeout.count(), what));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ForEachCheckpointFault(const std::string& file, uint64_t after_bytes,
                            const std::function<void(Context&)>& fn, const std::function<void()>& after) {
  for (FileFault fault : {FileFault::kWriteError, FileFault::kDiskFull, FileFault::kCrash}) {
    FaultyFileSystem faulty;
    faulty.Arm(fault, file, after_bytes);
    InProcessWorld world(1);
    const std::string error = Message(RunRanks(world, fn, {.env = Env(&faulty)})[0]);
    if (error.find(file) == std::string::npos) {
      throw std::runtime_error(
          fmt::format("a fault writing {} ended the run with '{}', not an error naming it", file, error));
    }
    after();
  }
}

void RunWorkers(int n, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  auto run = [&](int i) {
    try {
      fn(i);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(run, i);
  run(0);
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    if (errors[static_cast<size_t>(i)]) {
      throw std::runtime_error("worker " + std::to_string(i) + ": " +
                               Message(errors[static_cast<size_t>(i)]));
    }
  }
}

void CheckRegionRing(MemoryRegion& region, const int64_t* mem, int rank, int size,
                     std::chrono::milliseconds timeout) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const auto expect = [rank](const char* what, int64_t got, int64_t want) {
    if (got != want)
      throw std::runtime_error(fmt::format("rank {}: {} is {}, not {}", rank, what, got, want));
  };
  const int64_t v = rank;
  Request put = region.Put(right, 8 * static_cast<size_t>(rank + 1), &v, 8);
  WaitUntil([&] { return region.Test(put); }, "the put to complete", timeout);
  int64_t got = 0;
  Request get = region.Get(left, 0, &got, 8);
  WaitUntil([&] { return region.Test(get); }, "the get to complete", timeout);
  expect("the left neighbour's slot 0 (a get)", got, 1000 + left);
  int64_t flushed = 0;  // a get with no request: in place once the flush returns
  region.GetFlushed(right, 0, &flushed, 8);
  region.Flush(Deadline::After(timeout));
  expect("the right neighbour's slot 0 (a flushed get)", flushed, 1000 + right);
  region.Close(Deadline::After(timeout));  // a barrier: every put has landed
  expect("the slot the left neighbour put into", mem[left + 1], left);
}

std::string Message(const std::exception_ptr& e) {
  if (!e) return "";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

void ExpectNoErrors(const std::vector<std::exception_ptr>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r]) throw std::runtime_error("rank " + std::to_string(r) + " failed: " + Message(errors[r]));
  }
}

}  // namespace parasol::comm::testing
