#!/usr/bin/python3
"""Serial check of a file written by a client test, with the host's own tools (no MPI-IO of
weft involved: this runs without LD_PRELOAD).

  verify_dump.py h5 FILE SEED NP NY NX DATASET...   h5dump -b each dataset, compare to expected
  verify_dump.py nc FILE SEED NP NY NX NREC         ncmpidump the file, compare `temp` and `rec`
"""
import array
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client_common as cc  # noqa: E402


def compare(name, got, want):
    if len(got) != len(want):
        print(f"verify_dump: {name}: {len(got)} values, want {len(want)}")
        return 1
    bad = [k for k in range(len(want)) if got[k] != want[k]]
    for k in bad[:5]:
        print(f"verify_dump: {name}[{k}] = {got[k]}, want {want[k]}")
    if bad:
        print(f"verify_dump: {name}: {len(bad)} of {len(want)} values wrong")
    else:
        print(f"verify_dump: {name}: {len(want)} values OK")
    return 1 if bad else 0


def check_h5(path, seed, np_, ny, nx, dsets):
    want = cc.expected_array(seed, np_, ny, nx)
    fails = 0
    for ds in dsets:
        out = f"{path}.{ds.strip('/').replace('/', '_')}.bin"
        r = subprocess.run(["h5dump", "-d", ds, "-b", "LE", "-o", out, path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print(f"verify_dump: h5dump -d {ds} failed ({r.returncode}):\n{r.stdout}")
            fails += 1
            continue
        got = array.array("i")
        with open(out, "rb") as f:
            got.frombytes(f.read())
        os.unlink(out)
        if sys.byteorder != "little":
            got.byteswap()
        fails += compare(ds, list(got), want)
    return fails


def nc_values(text, var):
    m = re.search(r"^\s*" + re.escape(var) + r"\s*=\s*(.*?);", text, re.S | re.M)
    if not m:
        return None
    return [int(v) for v in re.findall(r"-?\d+", m.group(1))]


def check_nc(path, seed, np_, ny, nx, nrec):
    r = subprocess.run(["ncmpidump", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        print(f"verify_dump: ncmpidump failed ({r.returncode}):\n{r.stdout}")
        return 1
    data = r.stdout.split("\ndata:", 1)
    if len(data) != 2:
        print(f"verify_dump: no data section in ncmpidump output:\n{r.stdout[:2000]}")
        return 1
    fails = 0
    if not re.search(r":seed\s*=\s*%d[uU]?\s*;" % seed, data[0]):
        print("verify_dump: global attribute seed missing or wrong in header:\n" + data[0])
        fails += 1
    got = nc_values(data[1], "temp")
    fails += compare("temp", got or [], cc.expected_array(seed, np_, ny, nx))
    want = [cc.value((seed + 7919 * (t + 1)) & cc.MASK32, t, j, nx, cc.part_of(nx, np_, j))
            for t in range(nrec) for j in range(nx)]
    got = nc_values(data[1], "rec")
    fails += compare("rec", got or [], want)
    return fails


def main(argv):
    if len(argv) < 7:
        print(__doc__)
        return 2
    kind, path = argv[1], argv[2]
    seed, np_, ny, nx = (int(a) for a in argv[3:7])
    print(f"verify_dump: {kind} {path} seed={seed} np={np_} dims={ny}x{nx}")
    if kind == "h5":
        fails = check_h5(path, seed, np_, ny, nx, argv[7:])
    elif kind == "nc":
        fails = check_nc(path, seed, np_, ny, nx, int(argv[7]))
    else:
        print(__doc__)
        return 2
    print("verify_dump: " + ("FAIL" if fails else "PASS"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
