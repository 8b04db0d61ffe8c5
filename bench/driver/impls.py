"""Implementations: which MPI-IO a run uses and how it is launched.

Every implementation is the same weft-bench program, built against one MPI flavour:

  weft[-HINTSET]        Open MPI build, LD_PRELOAD=libweft.so (+ WEFT_HINTS for a hint set)
  weft-mpich[-HINTSET]  MPICH build, LD_PRELOAD=libweft.so
  romio-mpich           MPICH build, its ROMIO
  romio-ompi            Open MPI build, --mca io romio321
  ompio                 Open MPI build, --mca io ompio (Open MPI's own fcoll choice)
  ompio-<fcoll>         ... and --mca fcoll <fcoll>, for every fcoll component ompi_info lists
  posix                 pwrite/pread of the same bytes (patterns in suites.POSIX_PATTERNS)
"""
import os
import re
import shutil
import subprocess

from .errors import BadInput

FLAVOURS = ("openmpi", "mpich")
MPIRUN = {"openmpi": "/usr/bin/mpirun.openmpi", "mpich": "/usr/bin/mpirun.mpich"}

# Named hint sets: weft's overlap schedules (DESIGN §3.2).
BUILTIN_HINT_SETS = {
    f"overlap-{s}": {"weft_overlap": s}
    for s in ("none", "comm", "write", "write-comm", "write-comm-2", "auto")
}

HOST_IMPLS = ("romio-mpich", "romio-ompi", "ompio")  # + ompio-<fcoll>


class Impl:
    """One implementation: a name and how to launch weft-bench for it."""

    def __init__(self, name, flavour, kind, desc, mca=(), hints=None, preload=None, api="mpiio"):
        self.name, self.flavour, self.kind, self.desc = name, flavour, kind, desc
        self.mca = list(mca)          # ["io", "ompio", "fcoll", "vulcan"]
        self.hints = hints or {}      # WEFT_HINTS for weft
        self.preload = preload        # path to libweft.so (weft kinds)
        self.api = api
        self.binary = None
        self.mpirun = None
        self.problem = None           # why every run of it fails (e.g. no libweft.so)

    @property
    def is_host(self):
        return self.kind == "host"

    def supports(self, pattern):
        from .suites import POSIX_PATTERNS
        return self.api != "posix" or pattern in POSIX_PATTERNS

    def supports_case(self, case):
        """posix has no nonblocking collective write either."""
        return self.supports(case["pattern"]) and not (self.api == "posix" and case["args"].get("nonblocking"))

    def env(self, stats=True):
        env = {}
        if self.kind == "weft":
            env["LD_PRELOAD"] = self.preload or ""
            if self.hints:
                env["WEFT_HINTS"] = ";".join(f"{k}={v}" for k, v in self.hints.items())
            if stats:
                env["WEFT_STATS"] = "1"
        return env

    def command(self, ranks, args, stats=True, ncores=None, bind=None):
        """The full mpirun command line running weft-bench with `args`; `bind` is the launcher's
        process binding (none, core, ...), None for its default (Open MPI binds every rank to
        one core up to 2 ranks, MPICH's hydra binds nothing)."""
        ncores = ncores or os.cpu_count() or 1
        cmd = [self.mpirun]
        if self.flavour == "openmpi":
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                cmd.append("--allow-run-as-root")
            cmd += ["--oversubscribe", "--mca", "btl", "self,vader"]
            if bind:
                cmd += ["--bind-to", bind]
            if ranks > ncores:
                cmd += ["--mca", "mpi_yield_when_idle", "1"]
            for i in range(0, len(self.mca), 2):
                cmd += ["--mca", self.mca[i], self.mca[i + 1]]
            for k, v in self.env(stats).items():
                cmd += ["-x", f"{k}={v}"]
        else:
            if bind:
                cmd += ["-bind-to", bind]
            for k, v in self.env(stats).items():
                cmd += ["-genv", k, v]
        cmd += ["-n", str(ranks), self.binary] + list(args) + ["--impl-label", self.name]
        if self.api == "posix":
            cmd += ["--api", "posix"]
        return cmd

    def to_json(self):
        return {"name": self.name, "flavour": self.flavour, "kind": self.kind, "desc": self.desc,
                "mca": self.mca, "hints": self.hints, "preload": self.preload, "api": self.api,
                "binary": self.binary, "problem": self.problem}


def default_build_root(repo):
    return os.environ.get("WEFT_BUILD_DIR") or os.path.join(repo, "build")


def find_binary(build_root, flavour):
    p = os.path.join(build_root, flavour, "bench", "weft-bench", "weft-bench")
    return p if os.access(p, os.X_OK) else None


def find_libweft(build_root, flavour):
    for rel in ("libweft.so", os.path.join("src", "libweft.so"), os.path.join("lib", "libweft.so")):
        p = os.path.join(build_root, flavour, rel)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


def find_mpirun(build_root, flavour):
    """The mpiexec the build used (CMakeCache), else the Debian alternative's name."""
    cache = os.path.join(build_root, flavour, "CMakeCache.txt")
    try:
        with open(cache) as f:
            for line in f:
                if line.startswith("MPIEXEC_EXECUTABLE:"):
                    p = line.split("=", 1)[1].strip()
                    if p and os.access(p, os.X_OK):
                        return p
    except OSError:
        pass
    p = MPIRUN[flavour]
    return p if os.access(p, os.X_OK) else shutil.which(os.path.basename(p))


def ompi_fcoll_components(mpirun=None):
    """fcoll components of the installed Open MPI (from ompi_info)."""
    info = None
    if mpirun:
        cand = os.path.join(os.path.dirname(mpirun), "ompi_info")
        if os.access(cand, os.X_OK):
            info = cand
    info = info or shutil.which("ompi_info")
    if not info:
        return []
    try:
        out = subprocess.run([info], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_ompi_info_fcoll(out)


def parse_ompi_info_fcoll(text):
    found = []
    for m in re.finditer(r"MCA fcoll:\s*([A-Za-z0-9_]+)\s*\(", text):
        if m.group(1) not in found:
            found.append(m.group(1))
    return found


class Catalog:
    """Every implementation name this machine offers, and how to run it."""

    def __init__(self, build_root, hint_sets=None, fcolls=None):
        self.build_root = build_root
        self.hint_sets = dict(BUILTIN_HINT_SETS)
        self.hint_sets.update(hint_sets or {})
        self.binaries = {f: find_binary(build_root, f) for f in FLAVOURS}
        self.mpiruns = {f: find_mpirun(build_root, f) for f in FLAVOURS}
        self.libweft = {f: find_libweft(build_root, f) for f in FLAVOURS}
        self.fcolls = fcolls if fcolls is not None else (
            ompi_fcoll_components(self.mpiruns["openmpi"]) if self.binaries["openmpi"] else [])

    # -- names ---------------------------------------------------------------------------
    def default_names(self, with_hint_sets=False):
        """All implementations whose binary exists (weft ones even without libweft.so: they
        are then recorded as failed)."""
        names = []
        if self.binaries["openmpi"]:
            names.append("weft")
            if with_hint_sets:
                names += [f"weft-{h}" for h in self.hint_sets]
        if self.binaries["mpich"]:
            names.append("weft-mpich")
            names.append("romio-mpich")
        if self.binaries["openmpi"]:
            names += ["romio-ompi", "ompio"] + [f"ompio-{f}" for f in self.fcolls]
        if self.binaries["openmpi"] or self.binaries["mpich"]:
            names.append("posix")
        return names

    def known_pattern(self):
        return ("weft, weft-HINTSET, weft-mpich, weft-mpich-HINTSET, romio-mpich, romio-ompi, "
                "ompio, ompio-FCOLL, posix")

    def expand(self, names):
        """Resolves a list of names ('all', 'ompio-*', 'weft-*' allowed) to Impl objects."""
        out, seen = [], set()
        for n in names:
            if n == "all":
                sub = self.default_names(with_hint_sets=True)
            elif n == "ompio-*":
                sub = [f"ompio-{f}" for f in self.fcolls]
            elif n in ("weft-*", "weft-mpich-*"):
                base = n[:-2]
                sub = [f"{base}-{h}" for h in self.hint_sets]
            else:
                sub = [n]
            for s in sub:
                if s not in seen:
                    seen.add(s)
                    out.append(self.get(s))
        return out

    def get(self, name):
        impl = self._make(name)
        impl.mpirun = self.mpiruns[impl.flavour]
        impl.binary = self.binaries[impl.flavour]
        if impl.binary is None:
            raise BadInput(f"implementation '{name}' needs weft-bench built against {impl.flavour}: "
                           f"not found under {os.path.join(self.build_root, impl.flavour)} "
                           f"(build it, or point --build-dir / WEFT_BUILD_DIR at the build)")
        if impl.mpirun is None:
            raise BadInput(f"implementation '{name}': no mpirun for {impl.flavour} found")
        if impl.kind == "weft" and not impl.preload:
            impl.problem = (f"libweft.so not found under {os.path.join(self.build_root, impl.flavour)} "
                            f"(weft not built)")
        return impl

    def _make(self, name):
        if name == "romio-mpich":
            return Impl(name, "mpich", "host", "MPICH's ROMIO")
        if name == "romio-ompi":
            return Impl(name, "openmpi", "host", "Open MPI's ROMIO (io romio321)", mca=["io", "romio321"])
        if name == "ompio":
            return Impl(name, "openmpi", "host", "Open MPI's OMPIO, its own fcoll choice", mca=["io", "ompio"])
        if name.startswith("ompio-"):
            f = name[len("ompio-"):]
            if f not in self.fcolls:
                have = ", ".join(self.fcolls) or "none found by ompi_info"
                raise BadInput(f"unknown implementation '{name}': Open MPI has no fcoll '{f}' ({have})")
            return Impl(name, "openmpi", "host", f"OMPIO with fcoll {f}", mca=["io", "ompio", "fcoll", f])
        if name == "posix":
            flav = "openmpi" if self.binaries["openmpi"] else "mpich"
            return Impl(name, flav, "posix", "pwrite/pread of the same bytes, no MPI-IO", api="posix")
        if name == "weft" or name.startswith("weft-"):
            rest = name[len("weft"):]
            flav = "openmpi"
            if rest == "-mpich" or rest.startswith("-mpich-"):
                flav, rest = "mpich", rest[len("-mpich"):]
            hints, hs = {}, None
            if rest:
                hs = rest[1:]
                if hs not in self.hint_sets:
                    raise BadInput(f"unknown hint set '{hs}' in '{name}' "
                                   f"(known: {', '.join(sorted(self.hint_sets))})")
                hints = {k: str(v) for k, v in self.hint_sets[hs].items()}
            desc = f"weft (LD_PRELOAD, {flav} build)" + (f", hints {hs}" if hs else "")
            return Impl(name, flav, "weft", desc, hints=hints, preload=self.libweft[flav])
        raise BadInput(f"unknown implementation '{name}' (known: {self.known_pattern()})")
