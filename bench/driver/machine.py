"""What the report says about the machine: cores, memory, file systems, MPI versions."""
import os
import platform
import shutil
import subprocess


def _first_line(cmd, match=None):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if line.strip() and (match is None or match in line):
            return " ".join(line.split())
    return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    return None


def fs_of(path):
    """(mount point, fs type, device) of the file system holding path."""
    path = os.path.realpath(path)
    best = ("/", "unknown", "unknown")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, typ = line.split()[:3]
                mnt = mnt.replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
                    best = (mnt, typ, dev)
    except OSError:
        pass
    return best


def dir_info(path):
    mnt, typ, dev = fs_of(path)
    try:
        du = shutil.disk_usage(path)
        size, free = du.total, du.free
    except OSError:
        size = free = None
    return {"path": path, "mount": mnt, "fstype": typ, "device": dev, "size": size, "free": free}


def machine_info(dirs, mpiruns):
    info = {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": mem_total_gib(),
        "python": platform.python_version(),
        "dirs": [dir_info(d) for d in dirs],
        "mpi": {},
        "fio": _first_line(["fio", "--version"]) if shutil.which("fio") else None,
    }
    if mpiruns.get("openmpi"):
        info["mpi"]["openmpi"] = _first_line([mpiruns["openmpi"], "--version"])
    if mpiruns.get("mpich"):
        v = _first_line([mpiruns["mpich"], "--version"], "Version")
        info["mpi"]["mpich"] = ("MPICH (hydra) " + v.split(":", 1)[1].strip()) if v and ":" in v else v
    return info
