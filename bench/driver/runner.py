"""Running one command: a timeout, the whole process group killed when it expires."""
import json
import os
import re
import signal
import subprocess
import time


class Result:
    def __init__(self, rc, out, err, seconds, timed_out):
        self.rc, self.out, self.err, self.seconds, self.timed_out = rc, out, err, seconds, timed_out


def run_cmd(cmd, timeout, env=None, cwd=None):
    """Runs cmd in its own session; on timeout kills the process group (TERM, then KILL)."""
    t0 = time.monotonic()
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=full_env, cwd=cwd, start_new_session=True)
    except OSError as e:
        return Result(127, "", f"cannot start {cmd[0]}: {e}", 0.0, False)
    try:
        out, err = p.communicate(timeout=timeout)
        return Result(p.returncode, out, err, time.monotonic() - t0, False)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        return Result(p.returncode if p.returncode is not None else -9, out or "", err or "",
                      time.monotonic() - t0, True)
    except BaseException:
        _kill_group(p)
        raise


def _kill_group(p):
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def parse_json_lines(text):
    recs = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


_STATS = re.compile(r"^weft-stats (.*?): (.*)$")
_KV = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([-+0-9.eE]+)(?=\s|$)")


def parse_weft_stats(text):
    """The 'weft-stats <path>: k=v ...' lines weft prints at close with WEFT_STATS=1.
    Returns the numeric fields ending in _seconds summed over the lines (None if none)."""
    total, found = {}, False
    for line in text.splitlines():
        m = _STATS.match(line.strip())
        if not m:
            continue
        found = True
        for k, v in _KV.findall(m.group(2)):
            if k.endswith("_seconds"):
                try:
                    total[k] = total.get(k, 0.0) + float(v)
                except ValueError:
                    pass
    return total if found else None


# How each launcher says a rank died of a signal.
_SIGNAL_RES = (
    re.compile(r"exited on signal (\d+)"),                  # Open MPI's mpirun
    re.compile(r"KILLED BY SIGNAL: (\d+)"),                 # MPICH's hydra
    re.compile(r"EXIT STRING: [^\n]*\(signal (\d+)\)"),     # MPICH's hydra
    re.compile(r"\bSignal: [^\n]*\((\d+)\)"),               # Open MPI's signal handler
    re.compile(r"Caught signal (\d+)\b"),                   # UCX's handler
)


def crash_signal(rc, *texts):
    """The signal that killed the run (a rank, or the launcher itself), or None."""
    if rc is not None and rc < 0:
        return -rc
    for rx in _SIGNAL_RES:
        for t in texts:
            m = rx.search(t or "")
            if m and 0 < int(m.group(1)) < 65:
                return int(m.group(1))
    if rc is not None and 128 < rc < 160:   # a shell's or launcher's 128 + signal
        return rc - 128
    return None


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def last_lines(text, n=3, width=300):
    lines = [l.strip() for l in text.splitlines() if l.strip() and not set(l.strip()) <= set("-=*")]
    s = " | ".join(lines[-n:])
    return s[:width]
