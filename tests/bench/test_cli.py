"""The driver end to end with a fake MPI (a fake mpirun and weft-bench), and its bad-input
handling through the real ./weft script."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO
from driver import cli

FAKE_MPIRUN = r'''#!/usr/bin/python3
import os, sys
a = sys.argv[1:]
env = dict(os.environ)
i = 0
while i < len(a):
    if a[i] == "-x":
        k, v = a[i + 1].split("=", 1); env[k] = v; i += 2
    elif a[i] == "-genv":
        env[a[i + 1]] = a[i + 2]; i += 3
    elif a[i] == "--mca":
        i += 3
    elif a[i] == "-n":
        prog = a[i + 2:]; break
    else:
        i += 1
env.pop("LD_PRELOAD", None)  # the fake libweft.so is no library
os.execve(prog[0], prog, env)
'''

FAKE_BENCH = r'''#!/usr/bin/python3
import json, os, sys, time
a = sys.argv[1:]
opt = lambda k, d=None: a[a.index(k) + 1] if k in a else d
pat, label = opt("--pattern"), opt("--impl-label", "x")
if pat == "pingpong":
    print(json.dumps({"pattern": "pingpong", "MiBs": 1000.0, "verified": True, "error": None, "mpi": "fake"}))
    sys.exit(0)
if label == "romio-ompi":
    time.sleep(60)
if label == "posix":
    print("segfault", file=sys.stderr); sys.exit(139)
f = opt("--file")
open(f, "w").write("x")
ok = label != "ompio"
w = {"romio-mpich": 100.0, "weft": 150.0}.get(label, 80.0)
rec = {"pattern": pat, "params": {}, "impl": label, "ranks": 2, "bytes": 1 << 20,
       "seconds": {"open_w": 0.001, "write": 0.01, "sync": 0.0, "close_w": 0.0, "open_r": 0.0,
                   "read": 0.005, "close_r": 0.0},
       "write_s": 0.011, "read_s": 0.005, "write_MiBs": w, "read_MiBs": 2 * w,
       "verified": ok, "error": None if ok else "rank 0: 3 wrong byte(s) read back"}
print(json.dumps(rec))
if "WEFT_STATS" in os.environ:
    print(f"weft-stats {f}: ranks=2 open_seconds=0.02 access_seconds=0.004 shuffle_seconds=0.003")
sys.exit(0 if ok else 1)
'''


@pytest.fixture
def fake(tmp_path):
    root = tmp_path / "build"
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(FAKE_MPIRUN)
    mpirun.chmod(0o755)
    for f in ("openmpi", "mpich"):
        d = root / f / "bench" / "weft-bench"
        d.mkdir(parents=True)
        (d / "weft-bench").write_text(FAKE_BENCH)
        (d / "weft-bench").chmod(0o755)
        (root / f / "CMakeCache.txt").write_text(f"MPIEXEC_EXECUTABLE:FILEPATH={mpirun}\n")
    (root / "openmpi" / "libweft.so").write_text("")   # weft "built" for Open MPI only
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({
        "name": "tiny", "reps": 2, "ranks": [2], "timeout": 30,
        "limits": {"fio": False, "pingpong": True},
        "cases": [{"name": "ior small", "pattern": "ior", "args": {"block-size": "64K", "segments": 2}},
                  {"name": "ck", "pattern": "checkpoint", "args": {"n": 32}}]}))
    data = tmp_path / "data"
    data.mkdir()
    return {"root": str(root), "suite": str(suite), "data": str(data), "tmp": tmp_path}


def test_end_to_end_with_failures(fake, capsys):
    out = fake["tmp"] / "out"
    rc = cli.main(["--suite", fake["suite"], "--build-dir", fake["root"], "--dir", fake["data"],
                   "--impl", "weft,weft-mpich", "romio-mpich", "ompio", "posix", "romio-ompi",
                   "--timeout", "2", "--out", str(out), "--no-plots"], REPO)
    assert rc == 0
    captured = capsys.readouterr()
    assert "Report:" in captured.out and "romio-mpich" in captured.out
    assert "[1/" in captured.err and "rep 2/2" in captured.err
    res = json.loads((out / "results.json").read_text())
    by = {}
    for r in res["runs"]:
        by.setdefault(r["impl"], []).append(r)
    assert all(r["status"] == "ok" for r in by["weft"] + by["romio-mpich"])
    assert by["weft"][0]["weft_stats"]["shuffle_seconds"] == 0.003
    assert all(r["status"] == "failed" and "libweft.so not found" in r["error"] for r in by["weft-mpich"])
    assert all(r["status"] == "unverified" and "wrong byte" in r["error"] for r in by["ompio"])
    assert all(r["status"] == "crashed" and "exit 139" in r["error"] for r in by["posix"])
    assert {r["case"] for r in by["posix"]} == {"ior small"}        # posix cannot checkpoint
    # romio-ompi hangs: killed at the timeout, the next rep of the same case skipped, and after
    # two timeouts the implementation is skipped altogether
    st = [r["status"] for r in by["romio-ompi"]]
    assert st.count("timeout") == 2 and "skipped" in st
    assert res["limits"]["pingpong"]["openmpi"]["MiBs"] == 1000.0
    md = (out / "report.md").read_text()
    assert '<span style="color:red">' in md and "wrong byte" in md and "exit 139" in md
    assert "1.50×" in md   # weft vs the best host (romio-mpich, 100 MiB/s)
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert len(csv_lines) == len(res["runs"]) + 1
    # no data file is left behind
    assert os.listdir(fake["data"]) == []


def test_report_states_the_repetitions_run(fake):
    out = fake["tmp"] / "out1"
    rc = cli.main(["--suite", fake["suite"], "--build-dir", fake["root"], "--dir", fake["data"],
                   "--impl", "romio-mpich", "--reps", "1", "--case", "ck", "--no-limits",
                   "--out", str(out), "--no-plots"], REPO)
    assert rc == 0
    res = json.loads((out / "results.json").read_text())
    assert res["suite"]["reps"] == 1 and len(res["runs"]) == 1     # the suite says 2
    assert "1 repetitions interleaved" in (out / "report.md").read_text()


def test_dry_run_and_list(fake, capsys):
    rc = cli.main(["--suite", fake["suite"], "--build-dir", fake["root"], "--dir", fake["data"],
                   "--impl", "romio-mpich", "posix", "--dry-run"], REPO)
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * (2 + 1)
    rc = cli.main(["--suite", fake["suite"], "--build-dir", fake["root"], "--list"], REPO)
    assert rc == 0 and "romio-mpich" in capsys.readouterr().out


def weft(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, os.path.join(REPO, "weft"), "bench"] + list(args),
                          capture_output=True, text=True, env=e, timeout=60)


@pytest.mark.parametrize("args,msg", [
    (["--impl", "nope"], "unknown implementation 'nope'"),
    (["--impl", "weft-bogus"], "unknown hint set 'bogus'"),
    (["--pattern", "nope"], "unknown pattern 'nope'"),
    (["--suite", "nope"], "unknown suite 'nope'"),
    (["--dir", "/nonexistent/dir"], "does not exist"),
    (["--dir", "/etc/hostname"], "is not a directory"),
    (["--reps", "0"], "--reps"),
    (["--ranks", "0"], "--ranks"),
    (["--bogus-option"], "unrecognized arguments"),
    (["--reps", "x"], "invalid int value"),
])
def test_bad_input_one_line_exit_2(fake, args, msg):
    r = weft("--suite", fake["suite"], "--build-dir", fake["root"], "--dir", fake["data"], *args)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_not_writable_and_no_space(fake):
    if os.geteuid() != 0:
        ro = fake["tmp"] / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        r = weft("--suite", fake["suite"], "--build-dir", fake["root"], "--dir", str(ro))
        assert r.returncode == 2 and "not writable" in r.stderr
    else:
        r = weft("--suite", fake["suite"], "--build-dir", fake["root"], "--dir", "/proc")
        assert r.returncode == 2 and "not writable" in r.stderr
    big = fake["tmp"] / "big.json"
    big.write_text(json.dumps({"cases": [{"pattern": "ior", "args": {"block-size": "4096G", "segments": 1024}}]}))
    r = weft("--suite", str(big), "--build-dir", fake["root"], "--dir", fake["data"])
    assert r.returncode == 2 and "not enough free space" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_no_build(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    r = weft("--build-dir", str(tmp_path), "--dir", str(d))
    assert r.returncode == 2 and "not built" in r.stderr


def test_help_explains_options():
    r = weft("--help")
    assert r.returncode == 0
    for opt in ("--suite", "--impl", "--dir", "--ranks", "--reps", "--out", "--timeout",
                "--build-dir", "romio-ompi", "ompio-FCOLL", "weft-HINTSET"):
        assert opt in r.stdout
