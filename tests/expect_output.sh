#!/bin/sh
# Run a command; pass only if it exits 0 AND its output matches the extended regex.
# Usage: expect_output.sh REGEX COMMAND [ARG...]
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
  echo "FAIL: command exited with $rc" >&2
  exit $rc
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "FAIL: output does not match /$regex/" >&2
  exit 1
fi
exit 0
