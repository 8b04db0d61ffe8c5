#!/bin/sh
# Run a program with WEFT_TRACE into a fresh directory, then check the trace files.
# Usage: trace_test.sh NRANKS COMMAND...   (COMMAND is the whole mpiexec line)
set -e
nranks=$1
shift
dir=$(mktemp -d "${WEFT_TEST_DIR:-/tmp}/weft-trace-XXXXXX")
trap 'rm -rf "$dir"' EXIT
WEFT_TRACE=$dir "$@"
/usr/bin/python3 "$(dirname "$0")/check_trace.py" "$dir" "$nranks"
