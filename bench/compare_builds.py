#!/usr/bin/env python3
"""Compare two builds of weft on a suite's cases, repetitions interleaved run by run.

    bench/compare_builds.py --before BUILD_DIR --after BUILD_DIR [--suite standard]
                            [--ranks 2] [--reps 7] [--impl weft] [--case NAME ...] [--out DIR]

Each repetition runs every case once under each build (`./weft bench --build-dir`), the
builds' order alternating, so drifts of the machine fall on both alike.  Prints, per case and
directory, the median write and read bandwidth of each build, the ratio after/before and
whether it lies outside the spread (the before build's own min-max range).  A change is
called slower only when the after build's median lies below the before build's minimum.
Figures, never assertions: nothing here fails on a slow result.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite_cases(suite):
    path = suite if os.path.isfile(suite) else os.path.join(REPO, "bench", "suites", suite + ".json")
    with open(path) as f:
        return [c["name"] for c in json.load(f)["cases"]]


def run_once(build, case, args, out):
    cmd = [os.path.join(REPO, "weft"), "bench", "--suite", args.suite, "--ranks", str(args.ranks),
           "--reps", "1", "--impl", args.impl, "--no-limits", "--no-plots", "-q",
           "--build-dir", build, "--case", case, "--out", out]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    rows = []
    path = os.path.join(out, "results.csv")
    if os.path.exists(path):
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--suite", default="standard")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--impl", default="weft")
    ap.add_argument("--case", nargs="*")
    args = ap.parse_args()
    cases = args.case or suite_cases(args.suite)
    builds = {"before": args.before, "after": args.after}
    got = {}  # (case, dir, build, direction) -> [MiB/s]
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for i, case in enumerate(cases):
                order = ["before", "after"] if (rep + i) % 2 == 0 else ["after", "before"]
                for which in order:
                    out = os.path.join(tmp, f"{which}-{rep}-{i}")
                    for row in run_once(builds[which], case, args, out):
                        for direction in ("write", "read"):
                            value = row.get(f"{direction}_MiBs")
                            if value:
                                got.setdefault((case, row["dir"], which, direction), []).append(float(value))
            print(f"compare_builds: repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    print(f"{'case':28} {'dir':9} {'dir.':5} {'before':>9} {'after':>9} {'ratio':>6}  spread(before)")
    slower = 0
    for (case, d, which, direction) in sorted(k for k in got if k[2] == "before"):
        b = got[(case, d, "before", direction)]
        a = got.get((case, d, "after", direction))
        if not a:
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        mark = ""
        if ma < min(b):
            mark, slower = "  SLOWER than every before run", slower + 1
        print(f"{case:28} {d:9} {direction:5} {mb:9.0f} {ma:9.0f} {ma / mb:6.2f}  "
              f"{min(b):.0f}-{max(b):.0f}{mark}")
    print(f"compare_builds: {slower} rows below the before build's minimum")


if __name__ == "__main__":
    main()
