// Test support: run a job's ranks as threads over an in-process world.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/comm/inprocess_transport.h"

namespace parasol::comm::testing {

// Runs fn(context) on one thread per rank of `world` and joins them. Returns what each rank
// threw (nullptr where it returned normally).
std::vector<std::exception_ptr> RunRanks(InProcessWorld& world,
                                         const std::function<void(Context&)>& fn,
                                         ContextOptions options = {});

// Runs fn(i) for i in 0..n-1, fn(0) on the calling thread and the others on threads of their
// own, joins them and rethrows the first error, prefixed with "worker i: ". An exception on a
// worker thread thus fails the caller instead of terminating the process.
void RunWorkers(int n, const std::function<void(int)>& fn);

// The exception's message, or "" for nullptr.
std::string Message(const std::exception_ptr& e);
// Rethrows the first error, prefixed with its rank, so a test fails with it.
void ExpectNoErrors(const std::vector<std::exception_ptr>& errors);

}  // namespace parasol::comm::testing
