#!/bin/bash
# Runs one real-client test: a program under mpirun, then serial checks of what it wrote.
#
#   run_client.sh [--stats] [--require <file>] -- <mpirun command...> [--then <check command...>]...
#
# Every argument may use @DIR@ (a fresh scratch directory under $WEFT_TEST_DIR, removed at the
# end unless WEFT_CLIENT_KEEP=1) and @SEED@ (the data seed: $WEFT_CLIENT_SEED, or random; it is
# printed so a failure can be repeated).  With --stats the mpirun command's output must hold a
# line `weft-stats <path>: ...` for a file in @DIR@: the proof that weft, not the host's
# MPI-IO, did the I/O (the caller sets WEFT_STATS=1 and the preload).  --require fails at once,
# with a clear message, when <file> (the preloaded libweft.so) does not exist.
# Exit status: the first failing command's, 1 if the stats line is missing, 77 = skipped.
set -u
stats=0
while [ $# -gt 0 ]; do
    case $1 in
    --stats) stats=1; shift ;;
    --require)
        if [ ! -e "$2" ]; then
            echo "run_client: FAIL: $2 does not exist (build the weft target first)"
            exit 1
        fi
        shift 2 ;;
    --) shift; break ;;
    *) echo "run_client: unknown option $1" >&2; exit 2 ;;
    esac
done
export PYTHONDONTWRITEBYTECODE=1  # keep __pycache__ out of the source tree
base=${WEFT_TEST_DIR:-/tmp}
dir=$(mktemp -d "$base/weft-client.XXXXXX") || exit 2
log=$(mktemp "$base/weft-client-log.XXXXXX") || exit 2
cleanup() {
    rm -f "$log"
    if [ "${WEFT_CLIENT_KEEP:-0}" = 1 ]; then
        echo "run_client: kept $dir"
    else
        rm -rf "$dir"
    fi
}
trap cleanup EXIT
seed=${WEFT_CLIENT_SEED:-$(( (RANDOM << 15 | RANDOM) ))}
echo "run_client: seed=$seed dir=$dir (WEFT_CLIENT_SEED=$seed repeats this run)"

step=0
run_step() {
    local -a cmd=()
    local a
    for a in "$@"; do
        a=${a//@DIR@/$dir}
        cmd+=("${a//@SEED@/$seed}")
    done
    echo "run_client: + ${cmd[*]}"
    if [ $step -eq 0 ]; then
        "${cmd[@]}" 2>&1 | tee "$log"
        local rc=${PIPESTATUS[0]}
    else
        "${cmd[@]}" 2>&1
        local rc=$?
    fi
    if [ $rc -ne 0 ]; then
        echo "run_client: FAIL: step $step exited with $rc"
        exit $rc
    fi
    if [ $step -eq 0 ] && [ $stats -eq 1 ]; then
        if grep -a '^weft-stats ' "$log" | grep -qF "$dir/"; then
            echo "run_client: weft-stats present: weft did the I/O"
        else
            echo "run_client: FAIL: no 'weft-stats <path>' line for a file in $dir: weft did not do the I/O"
            exit 1
        fi
    fi
    step=$((step + 1))
}

cur=()
for arg in "$@"; do
    if [ "$arg" = "--then" ]; then
        run_step "${cur[@]}"
        cur=()
    else
        cur+=("$arg")
    fi
done
[ ${#cur[@]} -gt 0 ] && run_step "${cur[@]}"
echo "run_client: PASS"
exit 0
