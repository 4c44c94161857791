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
