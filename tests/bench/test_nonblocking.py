"""The nonblocking measurement's harness parts: suite options, crash signals, the report's
table and plot, weft-bench's record check (check_json.py), and a whole run with a fake MPI in
which one implementation segfaults.  No timing is asserted."""
import importlib.util
import json
import os

import pytest

from conftest import REPO
from driver import cli, plan, report, runner, stats, suites
from driver.errors import BadInput
from driver.impls import Impl

# ---------------------------------------------------------------------------------------------
# suites


def test_nonblocking_suite_loads():
    s = suites.load_suite("nonblocking", REPO)
    assert s["ranks"] == [1, 2]
    assert {c["pattern"] for c in s["cases"]} == {"tile", "ior"}
    assert all(suites.is_nonblocking(c) for c in s["cases"])
    tiles = [c for c in s["cases"] if c["pattern"] == "tile"]
    sizes = sorted(suites.parse_size(c["args"].get("elem-size", 8)) for c in tiles)
    assert sizes[0] == 8 and sizes[-1] >= 1 << 16            # 8-byte and large elements
    for c in s["cases"]:
        if c["pattern"] == "ior":
            assert c["args"]["mode"] == "coll"
    assert "posix" not in s["impls"]
    assert s["bind"] == "none"       # a 1-rank run bound to one core has no core free for progress


def test_bind():
    o = Impl("ompio", "openmpi", "host", "o")
    o.mpirun, o.binary = "mpirun", "wb"
    m = Impl("romio-mpich", "mpich", "host", "r")
    m.mpirun, m.binary = "mpiexec", "wb"
    cmd = o.command(1, [], bind="none")
    assert cmd[cmd.index("--bind-to") + 1] == "none"
    cmd = m.command(1, [], bind="none")
    assert cmd[cmd.index("-bind-to") + 1] == "none"
    assert "--bind-to" not in o.command(1, []) and "-bind-to" not in m.command(1, [])
    assert suites.validate_suite({"cases": [{"pattern": "ior"}]})["bind"] is None
    with pytest.raises(BadInput, match="bind is one of"):
        suites.validate_suite({"cases": [{"pattern": "ior"}], "bind": "everywhere"})


def test_nonblocking_case_argv_and_name():
    c = suites.validate_case({"pattern": "ior", "args": {"block-size": "1M", "mode": "coll",
                                                         "nonblocking": "iwrite_at_all"}}, "t")
    assert c["name"] == "ior 1MiB coll iwrite_at_all"
    assert suites.case_argv(c)[-2:] == ["--nonblocking", "iwrite_at_all"]
    c = suites.validate_case({"pattern": "tile", "args": {"nonblocking": "iwrite_all"}}, "t")
    assert c["name"] == "tile 8B iwrite_all" and suites.is_nonblocking(c)
    assert not suites.is_nonblocking(suites.validate_case({"pattern": "tile"}, "t"))


@pytest.mark.parametrize("case,msg", [
    ({"pattern": "ior", "args": {"mode": "indep", "nonblocking": "iwrite_all"}}, "collective"),
    ({"pattern": "tile", "args": {"nonblocking": "iwrite"}}, "iwrite_all or iwrite_at_all"),
    ({"pattern": "tile", "args": {"nonblocking": True}}, "iwrite_all or iwrite_at_all"),
    ({"pattern": "strided", "args": {"nonblocking": "iwrite_all"}}, "has no option"),
    ({"pattern": "checkpoint", "args": {"nonblocking": "iwrite_all"}}, "has no option"),
])
def test_bad_nonblocking_cases(case, msg):
    with pytest.raises(BadInput, match=msg):
        suites.validate_case(case, "t")


def test_posix_has_no_nonblocking_runs():
    nb = suites.validate_case({"pattern": "tile", "args": {"nonblocking": "iwrite_all"}}, "t")
    blk = suites.validate_case({"pattern": "tile"}, "t")
    posix = Impl("posix", "openmpi", "posix", "p", api="posix")
    host = Impl("ompio", "openmpi", "host", "o")
    assert not posix.supports_case(nb) and posix.supports_case(blk) and host.supports_case(nb)
    runs = plan.make_plan([nb, blk], ["/d"], [1], [host, posix], 1)
    assert [(r.case["name"], r.impl.name) for r in runs] == [
        ("tile 8B iwrite_all", "ompio"), ("tile 8B", "ompio"), ("tile 8B", "posix")]


# ---------------------------------------------------------------------------------------------
# crash signals

OMPI_SEGV = """[vm:07045] *** Process received signal ***
[vm:07045] Signal: Segmentation fault (11)
--------------------------------------------------------------------------
mpirun.openmpi noticed that process rank 0 with PID 0 on node vm exited on signal 11 (Segmentation fault).
--------------------------------------------------------------------------
"""
MPICH_SEGV = """===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   EXIT CODE: 11
===================================================================================
YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)
"""
MPICH_KILLED = "=   KILLED BY SIGNAL: 9 (Killed)\n"


def test_crash_signal():
    assert runner.crash_signal(139, OMPI_SEGV) == 11
    assert runner.crash_signal(11, "", MPICH_SEGV) == 11          # hydra's text on stdout
    assert runner.crash_signal(9, MPICH_KILLED) == 9
    assert runner.crash_signal(-6, "") == 6                        # killed directly
    assert runner.crash_signal(134, "no text") == 6                # 128 + SIGABRT
    assert runner.crash_signal(1, "rank 0: 3 wrong byte(s)") is None
    assert runner.crash_signal(3, "MPI_File_open: No such file") is None
    assert runner.signal_name(11) == "SIGSEGV"


# ---------------------------------------------------------------------------------------------
# report


def _nb_run(impl, ranks, rep, hidden=None, t_io=0.010, t_comp=0.010, t_total=None, status="ok",
            error=None, signal=None):
    rec = {"case": "tile 8B iwrite_all", "pattern": "tile", "args": {"nonblocking": "iwrite_all"},
           "dir": "/dev/shm", "ranks": ranks, "impl": impl, "rep": rep, "status": status,
           "error": error, "verified": status == "ok", "seconds": None, "wall_s": 1.0,
           "weft_stats": None, "write_MiBs": None, "read_MiBs": None}
    for k in suites.NB_FIELDS:
        rec[k] = None
    if hidden is not None:
        if t_total is None:
            t_total = t_io + t_comp - hidden * t_io
        rec.update(write_MiBs=800.0, read_MiBs=2000.0, nonblocking="iwrite_all", t_io=t_io,
                   t_comp=t_comp, t_total=t_total, hidden=hidden, hidden_raw=hidden,
                   tests_called=10, t_post=0.0001, t_wait=0.001, nb_verified=True)
    if signal:
        rec["signal"] = signal
    return rec


CANNED = {
    "version": 1, "suite": {"name": "nonblocking", "reps": 3}, "started": "2026-01-01T00:00:00",
    "elapsed_s": 30.0, "command": "weft bench --suite nonblocking",
    "machine": {"cpu": "Test CPU", "cores": 2, "dirs": [{"path": "/dev/shm", "mount": "/dev/shm",
                                                          "fstype": "tmpfs", "device": "tmpfs"}]},
    "impls": {"weft": {"kind": "weft", "desc": "weft", "problem": None},
              "ompio": {"kind": "host", "desc": "OMPIO", "problem": None},
              "romio-ompi": {"kind": "host", "desc": "ROMIO", "problem": None}},
    "limits": {"fio": {}, "pingpong": {}},
}
SEGV = "crashed (signal 11, SIGSEGV): exit 139, no result: mpirun noticed ... exited on signal 11"


def _canned_runs():
    runs = []
    for rep in range(3):
        runs.append(_nb_run("weft", 1, rep, hidden=[0.0, 0.02, 0.01][rep]))
        runs.append(_nb_run("ompio", 1, rep, hidden=[0.9, 0.7, 0.8][rep], t_comp=0.011))
        runs.append(_nb_run("romio-ompi", 1, rep, status="crashed", error=SEGV, signal=11))
        runs.append(_nb_run("weft", 2, rep, hidden=0.25, t_io=0.020, t_comp=0.040))
    return runs


def test_nb_summary_medians():
    rows = {(r["impl"], r["ranks"]): r for r in stats.summary_rows(_canned_runs(), CANNED["impls"])}
    om = rows[("ompio", 1)]["nb"]
    assert om["call"] == "iwrite_all"
    assert om["hidden"]["median"] == 0.8 and om["hidden"]["min"] == 0.7 and om["hidden"]["max"] == 0.9
    assert om["t_io"]["median"] == 0.010 and om["tests_called"]["median"] == 10
    ro = rows[("romio-ompi", 1)]
    assert ro["failed"] == 3 and ro["signals"] == [11] and ro["nb"]["hidden"]["median"] is None
    assert report.failure_mark(ro) == "crashed (signal 11)"
    # a blocking case has no nonblocking summary
    plain = [{"case": "a", "pattern": "ior", "dir": "/d", "ranks": 2, "impl": "ompio", "rep": 0,
              "status": "ok", "error": None, "write_MiBs": 1.0, "read_MiBs": 1.0}]
    assert stats.summary_rows(plain, {})[0]["nb"] is None


def test_failure_mark_partial_and_unverified():
    row = {"failed": 1, "runs": 3, "statuses": ["ok", "unverified"], "signals": []}
    assert report.failure_mark(row) == "1/3 unverified"
    row = {"failed": 1, "runs": 2, "statuses": ["crashed", "ok"], "signals": [6]}
    assert report.failure_mark(row) == "1/2 crashed (signal 6)"
    assert report.failure_mark({"failed": 0}) == ""


def test_nb_report_table_and_plot(tmp_path):
    res = dict(CANNED, runs=_canned_runs())
    path, plots, err = report.write_all(res, str(tmp_path))
    assert err is None
    md = open(path).read()
    sec = md[md.index("## Nonblocking collective writes"):md.index("## Failures")]
    assert "hidden = (T_io + T_comp − T_total) / T_io" in sec and "clamped to [0, 1]" in sec
    lines = [l for l in sec.splitlines() if l.startswith("| tile 8B iwrite_all")]
    # 1 rank first, then 2 ranks; the suite's order of implementations inside
    assert [l.split(" | ")[1:3] for l in lines] == [["weft", "1"], ["ompio", "1"], ["romio-ompi", "1"],
                                                    ["weft", "2"]]
    assert "| 10.0 | 11.0 | 13.0 | 0.10 | 10 |" in lines[1]     # T_io, T_comp, T_total, in call ms; tests
    assert "| 0.80 (0.70–0.90) | ≥ 0.8 | 3/3 ok |" in lines[1]
    assert "| 0.01 (0.00–0.02) | ≥ 0.8 |" in lines[0]
    assert '<span style="color:red">crashed (signal 11)</span>' in lines[2]
    assert "| – | – | – | – | – | – | ≥ 0.8 |" in lines[2]
    assert "| 40.0 † |" in lines[3] and "| ≥ 0.5 |" in lines[3] and "† T_comp is more than 25 %" in sec
    assert "romio-ompi: crashed (signal 11, SIGSEGV)" in md         # the Failures section
    assert "hidden_dev_shm.png" in {os.path.basename(p) for p in plots}
    with open(tmp_path / "hidden_dev_shm.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    csv = (tmp_path / "results.csv").read_text().splitlines()
    head = csv[0].split(",")
    assert {"hidden", "t_io", "t_total", "tests_called", "signal"} <= set(head)
    first = dict(zip(head, csv[1].split(",")))
    assert first["hidden"] == "0.0" and first["nonblocking"] == "iwrite_all"
    table = report.console_table(res)
    assert "nonblocking: hidden" in table
    nb_lines = table[table.index("nonblocking: hidden"):].splitlines()
    assert any("ompio" in l and "0.80" in l and "≥ 0.8" in l for l in nb_lines)
    assert any("romio-ompi" in l and "crashed (signal 11)" in l for l in nb_lines)


def test_report_without_nonblocking_cases_has_no_section(tmp_path):
    runs = [{"case": "a", "pattern": "ior", "args": {}, "dir": "/dev/shm", "ranks": 2, "impl": "ompio",
             "rep": 0, "status": "ok", "error": None, "write_MiBs": 1.0, "read_MiBs": 1.0,
             "verified": True, "seconds": None, "wall_s": 1.0, "weft_stats": None}]
    path, plots, err = report.write_all(dict(CANNED, runs=runs), str(tmp_path), make_plots=False)
    assert "Nonblocking" not in open(path).read()
    assert "nonblocking" not in report.console_table(dict(CANNED, runs=runs))


# ---------------------------------------------------------------------------------------------
# weft-bench's record check


def _check_json():
    spec = importlib.util.spec_from_file_location(
        "check_json", os.path.join(REPO, "bench", "weft-bench", "check_json.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GOOD = {"pattern": "tile", "params": {}, "impl": "x", "ranks": 2, "bytes": 1024,
        "seconds": {"write": 0.001}, "write_s": 0.002, "read_s": 0.001, "write_MiBs": 1.0,
        "read_MiBs": 1.0, "verified": True, "error": None, "nonblocking": "iwrite_all",
        "t_io": 0.010, "t_comp": 0.011, "t_total": 0.015, "hidden": 0.6, "hidden_raw": 0.6,
        "tests_called": 10, "t_post": 0.0001, "t_wait": 0.002, "nb_verified": True,
        "nb_seconds": {"write": 0.015}}


def test_check_json_nonblocking_fields(tmp_path):
    cj = _check_json()
    assert cj.nb_problems(GOOD) == []
    assert cj.nb_problems(dict(GOOD, hidden_raw=-0.3, hidden=0.0, t_total=0.024)) == []
    assert "missing" in cj.nb_problems({k: v for k, v in GOOD.items() if k != "tests_called"})[0]
    assert any("hidden_raw" in p for p in cj.nb_problems(dict(GOOD, hidden_raw=0.9, hidden=0.9)))
    assert any("clamped" in p for p in cj.nb_problems(dict(GOOD, hidden_raw=1.5, hidden=0.6, t_total=0.006)))
    assert any("nonblocking write's file" in p
               for p in cj.nb_problems(dict(GOOD, corrupted_for_test=True, verified=False)))
    # files named nb_* must hold nonblocking records
    (tmp_path / "nb_x.jsonl").write_text(json.dumps({k: v for k, v in GOOD.items()
                                                     if k not in ("nonblocking", "hidden")}) + "\n")
    (tmp_path / "plain.jsonl").write_text(json.dumps(
        {k: v for k, v in GOOD.items() if k in cj.REQUIRED}) + "\n")
    assert cj.main([str(tmp_path / "plain.jsonl")]) == 0
    assert cj.main(["--lines", "2", str(tmp_path)]) == 1


# ---------------------------------------------------------------------------------------------
# a whole run with a fake MPI: romio-ompi segfaults in the nonblocking call, the suite goes on

FAKE_MPIRUN = r'''#!/usr/bin/python3
import os, sys
a = sys.argv[1:]
i = 0
while i < len(a):
    if a[i] == "-x":
        i += 2
    elif a[i] == "-genv":
        i += 3
    elif a[i] == "--mca":
        i += 3
    elif a[i] == "-n":
        prog = a[i + 2:]; break
    else:
        i += 1
os.execv(prog[0], prog)
'''

FAKE_BENCH = r'''#!/usr/bin/python3
import json, sys
a = sys.argv[1:]
opt = lambda k, d=None: a[a.index(k) + 1] if k in a else d
label, call = opt("--impl-label"), opt("--nonblocking")
assert call == "iwrite_all", a
if label == "romio-ompi":
    sys.stderr.write("[vm:1] *** Process received signal ***\n[vm:1] Signal: Segmentation fault (11)\n"
                     "mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 11 "
                     "(Segmentation fault).\n")
    sys.exit(139)
open(opt("--file"), "w").write("x")
h = {"weft": 0.0, "ompio": 0.75}.get(label, 0.5)
print(json.dumps({"pattern": opt("--pattern"), "params": {}, "impl": label, "ranks": 1, "bytes": 1 << 20,
                  "seconds": {"write": 0.01}, "write_s": 0.011, "read_s": 0.005, "write_MiBs": 90.0,
                  "read_MiBs": 200.0, "nonblocking": call, "t_io": 0.01, "t_comp": 0.01,
                  "t_total": 0.02 - h * 0.01, "hidden": h, "hidden_raw": h, "tests_called": 10,
                  "t_post": 0.0001, "t_wait": 0.001, "nb_verified": True, "verified": True,
                  "error": None}))
'''


def test_run_with_a_crashing_implementation(tmp_path, capsys):
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
        (root / f / "libweft.so").write_text("")
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    rc = cli.main(["--suite", "nonblocking", "--build-dir", str(root), "--dir", str(data),
                   "--ranks", "1", "--reps", "2", "--case", "tile 8B iwrite_all",
                   "--out", str(out), "--no-plots"], REPO)
    assert rc == 0
    assert "crashed (signal 11)" in capsys.readouterr().out
    res = json.loads((out / "results.json").read_text())
    by = {}
    for r in res["runs"]:
        by.setdefault(r["impl"], []).append(r)
    assert set(by) == {"weft", "ompio", "romio-ompi", "romio-mpich"} and len(res["runs"]) == 8
    assert all(r["status"] == "crashed" and r["signal"] == 11 and r["hidden"] is None
               and r["error"].startswith("crashed (signal 11, SIGSEGV)") for r in by["romio-ompi"])
    assert all(r["status"] == "ok" and r["hidden"] == 0.75 and r["tests_called"] == 10
               for r in by["ompio"])
    assert all("--bind-to none" in r["cmd"] or "-bind-to none" in r["cmd"] for r in res["runs"])
    md = (out / "report.md").read_text()
    assert "launched with `--bind-to none`" in md
    assert '<span style="color:red">crashed (signal 11)</span>' in md
    assert "| tile 8B iwrite_all | ompio | 1 | iwrite_all |" in md
    assert os.listdir(data) == []
