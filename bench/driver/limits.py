"""The limits measured in the same run: fio sequential write/read (as many jobs as ranks) per
directory, and MPI ping-pong bandwidth per MPI flavour.

fio runs under the same conditions as weft-bench: buffered I/O, every job in its own region of
one shared file (as the ranks of a collective write), the file not preallocated, an fsync at the
end of the write, the read right after the write without dropping the page cache.  (fio's
defaults — a file per job, preallocated with fallocate — measured 2-2.5x more on tmpfs than any
program writing one file can get: Linux serialises buffered writes to one inode, and a
preallocated tmpfs file has its pages before the clock starts.)"""
import glob
import json
import os
import shutil

from .runner import run_cmd, last_lines, parse_json_lines


def fio_command(fio, directory, name, rw, jobs, size_per_job):
    """fio's command line: `jobs` jobs, job i at byte i * size_per_job of one file
    `directory/name.shared`, sequential 1 MiB psync I/O, no preallocation."""
    cmd = [fio, f"--name={name}", f"--filename={os.path.join(directory, name + '.shared')}",
           f"--offset_increment={size_per_job}", f"--rw={rw}", "--bs=1M",
           f"--size={size_per_job}", f"--numjobs={jobs}", "--group_reporting",
           "--fallocate=none", "--ioengine=psync", "--invalidate=0", "--output-format=json"]
    if rw == "write":
        cmd.append("--end_fsync=1")
    return cmd


def fio_limit(directory, jobs, size_per_job, timeout):
    """{'write_MiBs', 'read_MiBs', 'error'} for sequential 1 MiB I/O with `jobs` jobs."""
    res = {"dir": directory, "jobs": jobs, "size_per_job": size_per_job,
           "write_MiBs": None, "read_MiBs": None, "error": None}
    fio = shutil.which("fio")
    if not fio:
        res["error"] = "fio not installed"
        return res
    name = f"weft-bench-fio-{os.getpid()}"
    try:
        for rw in ("write", "read"):
            r = run_cmd(fio_command(fio, directory, name, rw, jobs, size_per_job), timeout)
            if r.timed_out:
                res["error"] = f"fio {rw} timed out after {timeout}s"
                return res
            if r.rc != 0:
                res["error"] = f"fio {rw} failed: {last_lines(r.err or r.out)}"
                return res
            text = r.out[r.out.find("{"):] if "{" in r.out else ""
            try:
                data = json.loads(text)
                job = data["jobs"][0][rw]
                bw = job.get("bw_bytes")
                bw = bw / 1048576.0 if bw is not None else job["bw"] / 1024.0
            except (ValueError, KeyError, IndexError, TypeError) as e:
                res["error"] = f"cannot read fio's output ({e})"
                return res
            res[f"{rw}_MiBs"] = bw
        return res
    finally:
        for f in glob.glob(os.path.join(directory, name + ".*")):
            try:
                os.unlink(f)
            except OSError:
                pass


def pingpong(impl, timeout, msg="4M", iters=20):
    """MPI ping-pong bandwidth between two ranks with the flavour of `impl` (a host Impl)."""
    res = {"flavour": impl.flavour, "msg": msg, "MiBs": None, "error": None, "mpi": None}
    cmd = impl.command(2, ["--pattern", "pingpong", "--msg", str(msg), "--iters", str(iters)])
    r = run_cmd(cmd, timeout)
    recs = [x for x in parse_json_lines(r.out) if x.get("pattern") == "pingpong"]
    if r.timed_out:
        res["error"] = f"timed out after {timeout}s"
    elif r.rc != 0 or not recs:
        res["error"] = f"exit {r.rc}: {last_lines(r.err or r.out)}"
    else:
        res["MiBs"] = recs[0].get("MiBs")
        res["mpi"] = recs[0].get("mpi")
    return res
