#!/usr/bin/env bash
# ThreadSanitizer over weft's multithreaded paths: builds build/tsan-mpich (WEFT_TSAN=ON,
# MPICH) and runs the MPI_THREAD_MULTIPLE tests (threads on one file, nonblocking collectives
# progressed by weft's progress thread, the host's PMPI_Wait); fails on any report.
# Under MPICH only: Open MPI 4.1's own thread-safety layer (opal atomics without TSan
# annotations) reports races of its own in every multithreaded program.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build/tsan-mpich
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.mpich \
      -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.mpich -DWEFT_TSAN=ON > /dev/null || exit 1
cmake --build "$build" -j2 --target weft api_threads api_nbc_progress api_nbc_host_wait \
      2>&1 | grep -E ' error:|warning:' && exit 1
# UCX's memory hooks (libucm, under MPICH's ch4:ucx) intercept the madvise glibc makes when a
# thread exits and crash inside TSan's interceptors; weft does not need them.
export UCX_MEM_EVENTS=no UCX_MEM_MMAP_HOOK_MODE=none
export TSAN_OPTIONS="exitcode=66 second_deadlock_stack=1"
export WEFT_TEST_DIR=${WEFT_TEST_DIR:-/dev/shm}
status=0
run() {
  local log np=$1; shift
  log=$(mktemp)
  timeout 300 mpirun.mpich -genv UCX_MEM_EVENTS no -genv UCX_MEM_MMAP_HOOK_MODE none \
      -genv TSAN_OPTIONS "$TSAN_OPTIONS" -genv WEFT_TEST_DIR "$WEFT_TEST_DIR" -n "$np" "$@" > "$log" 2>&1
  local rc=$? reports
  reports=$(grep -c 'WARNING: ThreadSanitizer' "$log")
  if [[ $rc -ne 0 || $reports -ne 0 ]]; then
    echo "tsan: FAILED (exit $rc, $reports report(s)): -n $np $*"
    grep -A40 'WARNING: ThreadSanitizer' "$log" | head -80
    tail -5 "$log"
    status=1
  else
    echo "tsan: ok -n $np $*"
  fi
  rm -f "$log"
}
for np in 1 2; do
  run $np "$build/tests/api/api_threads" 100
done
for mode in deadlock deadlock-mirror ring waitall blocking-after; do
  run 2 "$build/tests/api/api_nbc_progress" "$mode" multiple
done
run 2 "$build/tests/api/api_nbc_host_wait" multiple
exit $status
