// Test support: run a job's ranks as threads over an in-process world.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/memory_region.h"

namespace parasol::comm::testing {

// Longer than any test's own deadlines: a rank still running then is hung.
inline constexpr std::chrono::milliseconds kWatchdog = std::chrono::minutes(2);

// Runs fn(context) on one thread per rank of `world` and joins them. Returns what each rank
// threw (nullptr where it returned normally). A rank that has not returned after `watchdog`
// ends the process with "rank R did not finish" on stderr: a hung test names its rank at once
// instead of waiting for ctest's timeout (a thread cannot be stopped from outside).
std::vector<std::exception_ptr> RunRanks(InProcessWorld& world, const std::function<void(Context&)>& fn,
                                         ContextOptions options = {},
                                         std::chrono::milliseconds watchdog = kWatchdog);

// Runs fn(context) on `ranks` in-process ranks whose Env clock stands still (a ManualClock nobody
// moves), rethrowing the first rank's error; returns what each rank's fn returned: the seconds it
// timed on the context's clock, which are 0 however long the ranks really waited.
std::vector<double> SecondsOnAStoppedClock(int ranks, const std::function<double(Context&)>& fn);

// Waits until done() holds, looking every millisecond. Throws TimeoutError "timed out after N ms
// waiting for WHAT": a thread waiting on another that failed ends too.
void WaitUntil(const std::function<bool()>& done, std::string_view what,
               std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Runs fn(i) for i in 0..n-1, fn(0) on the calling thread and the others on threads of their
// own, joins them and rethrows the first error, prefixed with "worker i: ". An exception on a
// worker thread thus fails the caller instead of terminating the process.
void RunWorkers(int n, const std::function<void(int)>& fn);

// The faults every application's checkpoint is tested under: a failed write, a full disk after
// `after_bytes` bytes and a crash half-way, each of the first file created whose path contains
// `file`. For each in turn, runs fn on one in-process rank whose Env's files fail so, checks that
// the run ended with an error naming `file` (std::runtime_error saying what it ended with
// otherwise), then calls after() (where a test resumes from the previous checkpoint).
void ForEachCheckpointFault(const std::string& file, uint64_t after_bytes,
                            const std::function<void(Context&)>& fn, const std::function<void()>& after);

// MemoryRegion's contract, one rank's part on any transport (every rank calls it, `size` ranks):
// `mem`, the registered memory, holds at least size + 1 slots, slot 0 being 1000 + rank. Each
// rank puts its rank into slot rank + 1 of its right neighbour, reads its left neighbour's slot 0
// by a request and its right neighbour's by a flushed get; after Close (a barrier) its slot for
// the left neighbour holds that neighbour's rank. Throws std::runtime_error naming what differed.
void CheckRegionRing(MemoryRegion& region, const int64_t* mem, int rank, int size,
                     std::chrono::milliseconds timeout);

// The exception's message, or "" for nullptr.
std::string Message(const std::exception_ptr& e);
// Rethrows the first error, prefixed with its rank, so a test fails with it.
void ExpectNoErrors(const std::vector<std::exception_ptr>& errors);

}  // namespace parasol::comm::testing
