#!/usr/bin/env bash
# A checked build and the tests under it:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer, every test but multihost_test (build-asan;
#         that one reruns under network namespaces the commands the other tests already check,
#         and its 3 minutes under ASan would push CI past its budget)
#   tsan  ThreadSanitizer, the in-process tests of core, comm, collective, ps, sched and the
#         applications (MPI's own threads are not instrumented, so runs under mpirun are left out;
#         libtorch's OpenMP threads neither, so dl is left out)     (build-tsan)
# Both compile with gcc: clang 14 cannot compile libtorch 1.13's headers as C++20 (c10::IValue is
# incomplete where C++20 needs it). Clang's thread-safety analysis runs in the fuzz build
# (scripts/fuzz.sh), which compiles every library but dl.
# Usage: scripts/sanitize.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh asan|tsan}
jobs=$(nproc)
cmake --preset "$kind" > /dev/null
case "$kind" in
  asan)
    cmake --build build-asan -j "$jobs"
    # OpenMPI and libtorch keep allocations for the life of the process: leaks are not findings.
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure -j "$jobs" -E '^multihost_test$'
    ;;
  tsan)
    tests=(core_test comm_test collective_test collective_sim_test ps_test sched_test lda_test mf_test lasso_test logistic_test svm_test mlr_test mtrl_test)
    cmake --build build-tsan -j "$jobs" --target "${tests[@]}"
    regex="^($(IFS='|'; echo "${tests[*]}"))\$"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
      ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R "$regex"
    ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan" >&2; exit 2 ;;
esac
