"""Report generation from canned results."""
import json
import os

from driver import report

CANNED = {
    "version": 1,
    "suite": {"name": "canned", "reps": 2},
    "started": "2026-01-01T00:00:00", "elapsed_s": 75.0, "command": "weft bench --suite canned",
    "machine": {"cpu": "Test CPU", "cores": 2, "memory_gib": 8, "kernel": "6.0",
                "mpi": {"openmpi": "Open MPI 4.1.4", "mpich": "MPICH 4.0.2"},
                "dirs": [{"path": "/dev/shm", "mount": "/dev/shm", "fstype": "tmpfs", "device": "tmpfs",
                          "size": 2 << 30, "free": 1 << 30}]},
    "impls": {"weft": {"kind": "weft", "desc": "weft", "problem": None},
              "romio-mpich": {"kind": "host", "desc": "ROMIO", "problem": None},
              "ompio": {"kind": "host", "desc": "OMPIO", "problem": None}},
    "limits": {"fio": {"/dev/shm|2": {"dir": "/dev/shm", "jobs": 2, "write_MiBs": 1000.0,
                                      "read_MiBs": 4000.0, "error": None}},
               "pingpong": {"openmpi": {"MiBs": 5000.0, "error": None}}},
    "runs": [],
}


def _runs():
    runs = []
    for rep in range(2):
        for impl, w, r, status, err in (("romio-mpich", 400 + rep * 100, 2000, "ok", None),
                                        ("ompio", 300, 3000, "ok", None),
                                        ("weft", 900, 1000, "ok" if rep == 0 else "crashed",
                                         None if rep == 0 else "exit 139, no result: Segmentation fault")):
            runs.append({"case": "tile 8B", "pattern": "tile", "dir": "/dev/shm", "ranks": 2,
                         "impl": impl, "rep": rep, "status": status, "error": err,
                         "write_MiBs": w if status == "ok" else None,
                         "read_MiBs": r if status == "ok" else None, "verified": status == "ok",
                         "seconds": {"write": 0.1}, "wall_s": 0.5,
                         "weft_stats": {"access_seconds": 0.2, "shuffle_seconds": 0.1,
                                        "open_seconds": 1.0} if impl == "weft" and status == "ok" else None})
    return runs


def test_report_from_canned(tmp_path):
    res = dict(CANNED, runs=_runs())
    path, plots, err = report.write_all(res, str(tmp_path))
    assert err is None
    md = open(path).read()
    assert "Test CPU, 2 cores" in md and "tmpfs" in md and "MPICH 4.0.2" in md
    # romio-mpich: median of 400 and 500 = 450 (min-max 400-500), best host write
    assert "| tile 8B | romio-mpich | 450 (400–500) | 1.00× | 0.45× |" in md
    # weft: one good run of 900 = 2.00x the best host, failure in red with its error
    assert "| tile 8B | weft | 900 | 2.00× | 0.90× |" in md
    assert '<span style="color:red">1/2 failed</span>' in md
    assert '<span style="color:red">weft: exit 139, no result: Segmentation fault</span>' in md
    assert "| /dev/shm | 2 | 1,000 | 4,000 |" in md
    names = sorted(os.path.basename(p) for p in plots)
    assert names == ["bandwidth_dev_shm_np2.png", "weft_phases.png"]
    for p in plots:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert json.load(open(tmp_path / "results.json"))["runs"][0]["impl"] == "romio-mpich"
    csv = open(tmp_path / "results.csv").read().splitlines()
    assert csv[0].startswith("index,case,pattern") and len(csv) == 7
    table = report.console_table(res)
    assert "tile 8B" in table and "FAILED 1/2" in table and "2.00×" in table


def test_report_without_failures_or_plots(tmp_path):
    runs = [r for r in _runs() if r["status"] == "ok"]
    res = dict(CANNED, runs=runs)
    path, plots, err = report.write_all(res, str(tmp_path), make_plots=False)
    md = open(path).read()
    assert "None: every run of every implementation verified." in md and plots == []
