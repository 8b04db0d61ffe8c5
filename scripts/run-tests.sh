#!/usr/bin/env bash
# Set up (install, build both flavours), then run the whole test suite under Open MPI and
# MPICH with ctest, the multithreaded tests under ThreadSanitizer, and the benchmark driver's
# unit tests with pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1

status=0
for flavour in openmpi mpich; do
  echo "==== ctest: $flavour ===="
  ctest --preset "$flavour" || status=1
done
echo "==== ThreadSanitizer: the multithreaded tests (MPICH) ===="
bash scripts/tsan-threads.sh || status=1
if [[ -d tests/bench ]]; then
  echo "==== pytest: benchmark driver ===="
  /usr/bin/python3 -m pytest -q tests/bench
  rc=$?
  [[ $rc -eq 0 || $rc -eq 5 ]] || status=1
fi
exit $status
