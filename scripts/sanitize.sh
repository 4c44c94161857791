#!/usr/bin/env bash
# A checked build and the tests under it:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (build-asan, clang): every library's tests
#         and the MPI runs, from the objects the fuzzers (scripts/fuzz.sh) are built from, so one
#         build serves both, and clang's thread-safety analysis (core/mutex.h) checks every
#         library's locks on the way. Left out, to keep CI in its 45 minutes: multihost_test and
#         cluster_hosts_test (they rerun under network namespaces commands the others check; 3
#         and 4 minutes; the live cluster's logic is sched_test's, run here), the applications'
#         command tests (lda, sparse_linear, svm, mlr, mtrl, gnn, lm, dynamic: 6 minutes) and
#         cli_test (the command line's options and bad input; 3.7 minutes), user_surface_test and
#         readme_test (what a user meets, the README's commands), whose libraries' own tests run
#         here and whose readers the fuzzers run under ASan and UBSan; dl_unit_test (the
#         optimizer, the tensor-parallel layers and the experts, each against its reference; four
#         files compiled with libtorch's headers), whose units run here inside dl_test and
#         transformer_test. Each test's own long runs are filtered out in its CMakeLists.txt
#         (GTEST_FILTER under PARASOL_SANITIZE: dl's MNIST runs to an accuracy, lda's and gnn's
#         statistical and to-accuracy runs, the simulator's largest rings).
#   tsan  ThreadSanitizer (build-tsan): the in-process tests of the code with threads of its own:
#         core (thread pool), comm, collective, ps, and the applications that run several
#         threads on it (lda's samplers and ranks, mf's workers, gnn's exchanges, pools and tensor
#         workers; lda's single-threaded statistical tests and gnn's runs to an accuracy are
#         filtered out under TSan, see their CMakeLists.txt). The other applications' threads are the
#         parameter server's and the collectives', tested here directly. MPI's own threads are not
#         instrumented, so runs under mpirun are left out; libtorch's OpenMP threads neither, so
#         of dl only the handshake of its training and gradient threads runs (unit_board_test).
# TSan keeps gcc, the compiler its suppressions (scripts/tsan.supp) were written against; clang
# serves ASan because it also builds the fuzzers.
# Usage: scripts/sanitize.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh asan|tsan}
jobs=$(nproc)
bash scripts/checked-preset.sh "$kind"
case "$kind" in
  asan)
    excluded='^(dl_unit_test|cli_test|user_surface_test|readme_test|multihost_test|cluster_hosts_test|lda_cli_test|sparse_linear_cli_test|svm_cli_test|mlr_cli_test|mtrl_cli_test|gnn_cli_test|lm_cli_test|dynamic_cli_test)$'
    # Only the test programs these tests run (a test's name is its program's, or that and
    # _npN/_singleton): the parasol command and the benchmarks are not built, which keeps CI inside
    # its 45 minutes.
    targets=$(ctest --test-dir build-asan -N -E "$excluded" | sed -n 's/^ *Test *#[0-9]*: //p' |
              sed -E 's/_(np[0-9]+|singleton)$//' | sort -u)
    # shellcheck disable=SC2086  # one target per word
    cmake --build build-asan -j "$jobs" --target $targets
    # OpenMPI and libtorch keep allocations for the life of the process: leaks are not findings.
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure -j "$jobs" -E "$excluded"
    ;;
  tsan)
    tests=(core_test comm_test collective_test ps_test lda_test mf_test gnn_test unit_board_test)
    cmake --build build-tsan -j "$jobs" --target "${tests[@]}"
    regex="^($(IFS='|'; echo "${tests[*]}"))\$"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
      ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R "$regex"
    ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan" >&2; exit 2 ;;
esac
