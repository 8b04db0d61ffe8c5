import os
import time

import pytest

from driver import impls, runner
from driver.errors import BadInput

OMPI_INFO = """
                 MCA fbtl: posix (MCA v2.1.0, API v2.0.0, Component v4.1.4)
               MCA fcoll: dynamic_gen2 (MCA v2.1.0, API v2.0.0, Component v4.1.4)
               MCA fcoll: two_phase (MCA v2.1.0, API v2.0.0, Component v4.1.4)
               MCA fcoll: vulcan (MCA v2.1.0, API v2.0.0, Component v4.1.4)
                  MCA io: romio321 (MCA v2.1.0, API v2.0.0, Component v4.1.4)
"""


def test_parse_ompi_info():
    assert impls.parse_ompi_info_fcoll(OMPI_INFO) == ["dynamic_gen2", "two_phase", "vulcan"]


def fake_build(tmp_path, flavours=("openmpi", "mpich"), libweft=False):
    for f in flavours:
        d = tmp_path / f / "bench" / "weft-bench"
        d.mkdir(parents=True)
        b = d / "weft-bench"
        b.write_text("#!/bin/sh\n")
        b.chmod(0o755)
        if libweft:
            (tmp_path / f / "libweft.so").write_text("")
    return str(tmp_path)


def test_catalog_names_and_commands(tmp_path):
    root = fake_build(tmp_path, libweft=True)
    cat = impls.Catalog(root, {"mine": {"weft_cb": "x"}}, fcolls=["vulcan", "two_phase"])
    names = cat.default_names(with_hint_sets=True)
    for n in ("weft", "weft-overlap-write", "weft-mine", "weft-mpich", "romio-mpich", "romio-ompi",
              "ompio", "ompio-vulcan", "ompio-two_phase", "posix"):
        assert n in names
    w = cat.get("weft-overlap-write-comm-2")
    assert w.flavour == "openmpi" and w.hints == {"weft_overlap": "write-comm-2"} and not w.problem
    cmd = w.command(4, ["--pattern", "ior"], ncores=2)
    assert "-x" in cmd and any(c.startswith("LD_PRELOAD=") and c.endswith("libweft.so") for c in cmd)
    assert "WEFT_HINTS=weft_overlap=write-comm-2" in cmd and "mpi_yield_when_idle" in cmd
    assert cmd[-2:] == ["--impl-label", "weft-overlap-write-comm-2"]
    m = cat.get("weft-mpich-overlap-comm")
    cmd = m.command(2, [])
    assert m.flavour == "mpich" and cmd[cmd.index("-genv") + 1] == "LD_PRELOAD"
    assert "WEFT_HINTS" in cmd and "weft_overlap=comm" in cmd
    r = cat.get("romio-ompi").command(2, [])
    assert r[r.index("io") + 1] == "romio321" and "LD_PRELOAD" not in " ".join(r)
    f = cat.get("ompio-vulcan").command(2, [])
    assert "fcoll" in f and f[f.index("fcoll") + 1] == "vulcan"
    assert cat.get("posix").command(2, [])[-2:] == ["--api", "posix"]
    assert [i.name for i in cat.expand(["ompio-*"])] == ["ompio-vulcan", "ompio-two_phase"]


def test_catalog_bad_names(tmp_path):
    cat = impls.Catalog(fake_build(tmp_path), fcolls=["vulcan"])
    with pytest.raises(BadInput, match="unknown implementation 'nope'"):
        cat.get("nope")
    with pytest.raises(BadInput, match="unknown hint set 'bogus'"):
        cat.get("weft-bogus")
    with pytest.raises(BadInput, match="no fcoll 'dynamic'"):
        cat.get("ompio-dynamic")
    # weft without libweft.so is known but every run of it fails
    assert "libweft.so not found" in cat.get("weft").problem


def test_missing_flavour(tmp_path):
    cat = impls.Catalog(fake_build(tmp_path, flavours=("openmpi",)), fcolls=[])
    assert "romio-mpich" not in cat.default_names()
    with pytest.raises(BadInput, match="needs weft-bench built against mpich"):
        cat.get("romio-mpich")


def test_run_cmd_timeout_kills_group(tmp_path):
    marker = tmp_path / "child.pid"
    # the child of the shell would outlive a plain kill of the shell
    t0 = time.monotonic()
    r = runner.run_cmd(["sh", "-c", f"sleep 30 & echo $! > {marker}; wait"], timeout=1)
    assert r.timed_out and time.monotonic() - t0 < 15
    pid = int(marker.read_text())
    time.sleep(0.2)
    try:
        with open(f"/proc/{pid}/status") as f:
            state = [l for l in f if l.startswith("State:")][0]
        assert "Z" in state or "X" in state  # dead, waiting to be reaped
    except FileNotFoundError:
        pass


def test_run_cmd_ok_and_missing():
    r = runner.run_cmd(["sh", "-c", "echo hi; echo err >&2; exit 3"], timeout=10)
    assert (r.rc, r.out, r.err, r.timed_out) == (3, "hi\n", "err\n", False)
    r = runner.run_cmd(["/nonexistent/prog"], timeout=10)
    assert r.rc == 127 and "cannot start" in r.err


def test_parse_output():
    out = ('noise\n{"pattern":"ior","verified":true}\n{broken\n'
           'weft-stats /d/f: ranks=2 written=10 open_seconds=0.5 access_seconds=0.25 bandwidth_MBps=1.0\n'
           'weft-stats /d/f: ranks=2 read=10 open_seconds=0.5 access_seconds=0.5 shuffle_seconds=0.1\n')
    assert runner.parse_json_lines(out) == [{"pattern": "ior", "verified": True}]
    st = runner.parse_weft_stats(out)
    assert st == {"open_seconds": 1.0, "access_seconds": 0.75, "shuffle_seconds": 0.1}
    assert runner.parse_weft_stats("nothing") is None
