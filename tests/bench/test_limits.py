"""The fio limit is measured under the benchmark's conditions: one shared file, each job in its
own region, no preallocation."""
import os
import shutil

import pytest

from driver import limits


def test_fio_command_shares_one_file():
    cmd = limits.fio_command("/usr/bin/fio", "/d", "n", "write", 2, "128M")
    assert "--filename=/d/n.shared" in cmd
    assert not any(a.startswith("--directory") for a in cmd)  # not a file per job
    assert "--offset_increment=128M" in cmd and "--size=128M" in cmd and "--numjobs=2" in cmd
    assert "--fallocate=none" in cmd
    assert "--end_fsync=1" in cmd
    assert "--end_fsync=1" not in limits.fio_command("fio", "/d", "n", "read", 2, "1M")


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed")
def test_fio_limit_runs_and_cleans_up(tmp_path):
    res = limits.fio_limit(str(tmp_path), 2, "4M", 60)
    assert res["error"] is None, res["error"]
    assert res["write_MiBs"] > 0 and res["read_MiBs"] > 0
    assert os.listdir(tmp_path) == []  # the shared file is removed
