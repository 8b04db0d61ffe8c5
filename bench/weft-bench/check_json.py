#!/usr/bin/python3
"""Checks weft-bench's JSON lines (the smoke tests' output): every line is one well-formed
JSON object with the fields the driver reads, and verified is true -- or false for the runs
made with --corrupt-for-test.  usage: check_json.py [--lines N] DIR|FILE..."""
import json
import os
import sys

REQUIRED = ("pattern", "params", "impl", "ranks", "bytes", "seconds", "write_s", "read_s",
            "write_MiBs", "read_MiBs", "verified", "error")


def main(argv):
    want_lines = None
    if argv[:1] == ["--lines"]:
        want_lines, argv = int(argv[1]), argv[2:]
    files = []
    for a in argv:
        if os.path.isdir(a):
            files += [os.path.join(a, f) for f in sorted(os.listdir(a)) if f.endswith(".jsonl")]
        else:
            files.append(a)
    n, bad = 0, 0
    for path in files:
        with open(path) as f:
            for i, line in enumerate(f, 1):
                where = f"{path}:{i}"
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    print(f"{where}: not JSON: {e}")
                    bad += 1
                    continue
                n += 1
                missing = [k for k in REQUIRED if k not in rec]
                if missing:
                    print(f"{where}: missing {missing}")
                    bad += 1
                    continue
                expect = not rec.get("corrupted_for_test", False)
                if rec["verified"] is not expect:
                    print(f"{where}: verified={rec['verified']}, expected {expect}: {rec['error']}")
                    bad += 1
                if expect and rec["error"] is not None:
                    print(f"{where}: error {rec['error']}")
                    bad += 1
                if rec["bytes"] <= 0 or rec["write_s"] < 0 or rec["read_s"] < 0:
                    print(f"{where}: implausible numbers")
                    bad += 1
    if want_lines is not None and n != want_lines:
        print(f"{n} JSON lines, expected {want_lines}")
        bad += 1
    print(f"{n} records checked, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
