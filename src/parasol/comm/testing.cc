#include "parasol/comm/testing.h"

#include <stdexcept>
#include <thread>

namespace parasol::comm::testing {

std::vector<std::exception_ptr> RunRanks(InProcessWorld& world,
                                         const std::function<void(Context&)>& fn,
                                         ContextOptions options) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world.size()));
  std::vector<std::thread> threads;
  for (int r = 0; r < world.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        Context ctx(world.CreateTransport(r), options);
        fn(ctx);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
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
      throw std::runtime_error("worker " + std::to_string(i) + ": " + Message(errors[static_cast<size_t>(i)]));
    }
  }
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
