#!/usr/bin/python3
"""Checks weft-bench's JSON lines (the smoke tests' output): every line is one well-formed
JSON object with the fields the driver reads, and verified is true -- or false for the runs
made with --corrupt-for-test.  Records of --nonblocking runs (and every line of a file whose
name starts with nb_ or corrupt_nb) must carry the nonblocking figures, consistent with each
other; their values are not judged.  usage: check_json.py [--lines N] DIR|FILE..."""
import json
import os
import sys

REQUIRED = ("pattern", "params", "impl", "ranks", "bytes", "seconds", "write_s", "read_s",
            "write_MiBs", "read_MiBs", "verified", "error")
NB_REQUIRED = ("nonblocking", "t_io", "t_comp", "t_total", "hidden", "hidden_raw", "tests_called",
               "t_post", "t_wait", "nb_verified", "nb_seconds")


def nb_problems(rec):
    """What is wrong with the nonblocking fields of a record (empty: nothing)."""
    missing = [k for k in NB_REQUIRED if k not in rec]
    if missing:
        return [f"missing nonblocking field(s) {missing}"]
    out = []
    if rec["nonblocking"] not in ("iwrite_all", "iwrite_at_all"):
        out.append(f"nonblocking={rec['nonblocking']!r}")
    for k in ("t_io", "t_comp", "t_total", "t_post", "t_wait"):
        if not isinstance(rec[k], (int, float)) or rec[k] < 0:
            out.append(f"{k}={rec[k]!r}")
    if not isinstance(rec["tests_called"], int) or rec["tests_called"] < 0:
        out.append(f"tests_called={rec['tests_called']!r}")
    if out:
        return out
    if not 0.0 <= rec["hidden"] <= 1.0:
        out.append(f"hidden={rec['hidden']} outside [0, 1]")
    if rec["t_io"] > 0:
        raw = (rec["t_io"] + rec["t_comp"] - rec["t_total"]) / rec["t_io"]
        # printed in ns and to 4 decimals: the three times' rounding, the quotient's
        slack = (1.5e-9 + abs(raw) * 0.5e-9) / rec["t_io"] + 1e-4 * max(1.0, abs(raw))
        if abs(raw - rec["hidden_raw"]) > slack:
            out.append(f"hidden_raw={rec['hidden_raw']}, (t_io + t_comp - t_total) / t_io = {raw:.4f}")
    if abs(min(1.0, max(0.0, rec["hidden_raw"])) - rec["hidden"]) > 1e-4:
        out.append(f"hidden={rec['hidden']} is not hidden_raw={rec['hidden_raw']} clamped")
    if rec.get("corrupted_for_test") and rec["nb_verified"] is not False:
        out.append("--corrupt-for-test: the nonblocking write's file should have failed verification")
    return out


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
    n, nb, bad = 0, 0, 0
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
                name = os.path.basename(path)
                if "nonblocking" in rec or name.startswith(("nb_", "corrupt_nb")):
                    nb += 1
                    for msg in nb_problems(rec):
                        print(f"{where}: {msg}")
                        bad += 1
    if want_lines is not None and n != want_lines:
        print(f"{n} JSON lines, expected {want_lines}")
        bad += 1
    print(f"{n} records checked ({nb} nonblocking), {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
