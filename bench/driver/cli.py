"""`./weft bench`: run a suite over implementations and directories, verify, report."""
import argparse
import datetime
import os
import shutil
import signal
import sys
import tempfile
import time

from . import impls as implmod
from . import limits as limmod
from . import report as repmod
from . import suites as suitemod
from .errors import BadInput
from .machine import machine_info
from .plan import make_plan
from .runner import crash_signal, last_lines, parse_json_lines, parse_weft_stats, run_cmd, signal_name

DESCRIPTION = """\
Measure weft and every MPI-IO this machine has on the same access patterns, side by side,
verifying every byte, against the storage's own limit (fio) and the MPI's ping-pong
bandwidth; write results.json, results.csv, PNG plots and report.md."""

EPILOG = """\
implementations (--impl):
  weft                weft (LD_PRELOAD=libweft.so) under weft-bench built with Open MPI
  weft-mpich          the same under the MPICH build
  weft-HINTSET        weft with a named hint set passed as WEFT_HINTS, e.g. weft-overlap-write
                      (hint sets: overlap-none|comm|write|write-comm|write-comm-2|auto, and the
                      suite's own "hint_sets"); weft-mpich-HINTSET likewise
  romio-mpich         MPICH's ROMIO
  romio-ompi          Open MPI's ROMIO (--mca io romio321)
  ompio               Open MPI's OMPIO with its own fcoll choice
  ompio-FCOLL         OMPIO with one fcoll component (every one ompi_info lists)
  posix               pwrite/pread of the same bytes (not for checkpoint)
  all                 everything above that is built; ompio-* / weft-* expand to each fcoll / hint set
  An implementation that crashes, fails verification or hangs (per-run timeout) is recorded as
  failed and the suite goes on; weft without a built libweft.so is recorded as failed.

patterns (suite cases, --pattern to select): ior, tile, block3d, flash, strided, checkpoint

nonblocking collective writes: a case of ior (coll), tile, block3d or flash with
  "nonblocking": "iwrite_all" | "iwrite_at_all" writes with the blocking call (T_io), then with
  the nonblocking one while every rank computes for T_io (MPI_Test every millisecond, then
  MPI_Wait: T_total), and reports hidden = (T_io + T_comp - T_total) / T_io in [0, 1]
  (docs/PERFORMANCE.md). The suite "nonblocking" has them:
  ./weft bench --suite nonblocking --ranks 1      (and --ranks 2)

binaries: weft-bench is looked for in BUILD/{openmpi,mpich}/bench/weft-bench/ and libweft.so in
  BUILD/{openmpi,mpich}/, BUILD being --build-dir, $WEFT_BUILD_DIR or <repo>/build.

exit status: 0 done (failed implementations are results, see the report; --strict makes them
  exit 1), 2 bad input (one line on stderr), 130 interrupted (partial results are written)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise BadInput(message)


def build_parser(prog="weft bench"):
    p = _Parser(prog=prog, description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="quick", metavar="quick|standard|nonblocking|FILE",
                   help="suite name (bench/suites/NAME.json) or a suite JSON file (default: quick)")
    p.add_argument("--impl", action="extend", nargs="+", metavar="NAME",
                   help="implementations to run (default: the suite's list, or all that are built); "
                        "comma-separated lists are accepted")
    p.add_argument("--dir", action="extend", nargs="+", metavar="PATH",
                   help="directories to benchmark, one file system each (default: the suite's, "
                        "e.g. /dev/shm and /var/tmp)")
    p.add_argument("--ranks", action="extend", nargs="+", type=int, metavar="N",
                   help="MPI process counts (default: the suite's)")
    p.add_argument("--reps", type=int, metavar="N", help="repetitions of every measurement, "
                   "interleaved across implementations (default: the suite's)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/<timestamp>)")
    p.add_argument("--pattern", action="extend", nargs="+", metavar="P",
                   help="run only the suite's cases of these patterns")
    p.add_argument("--case", action="extend", nargs="+", metavar="NAME",
                   help="run only the suite's cases with these names")
    p.add_argument("--timeout", type=float, metavar="SEC",
                   help="per-run timeout in seconds (default: the suite's); the run's process "
                        "group is killed and the run recorded as failed")
    p.add_argument("--bind-to", choices=suitemod.BINDINGS, metavar="none|core|socket|hwthread",
                   help="the launcher's process binding (default: the suite's \"bind\", else the "
                        "launcher's own: Open MPI binds each rank to a core up to 2 ranks)")
    p.add_argument("--build-dir", metavar="DIR",
                   help="build tree holding openmpi/ and mpich/ builds (default: $WEFT_BUILD_DIR "
                        "or <repo>/build)")
    p.add_argument("--no-limits", action="store_true",
                   help="skip the fio and ping-pong limit measurements")
    p.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any run failed (verification, crash or timeout)")
    p.add_argument("--list", action="store_true",
                   help="list the suites, the suite's cases and the implementations found, and exit")
    p.add_argument("--dry-run", action="store_true", help="print the planned runs and exit")
    p.add_argument("--report-from", metavar="RESULTS_JSON",
                   help="make the report again from a saved results.json (into --out or its folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    return p


def _split(values):
    out = []
    for v in values or []:
        out += [x for x in v.split(",") if x]
    return out


def check_dir(d):
    if not os.path.exists(d):
        raise BadInput(f"directory {d} does not exist")
    if not os.path.isdir(d):
        raise BadInput(f"{d} is not a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".weft-bench-probe-", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise BadInput(f"directory {d} is not writable ({e.strerror})")
    return os.path.abspath(d)


def check_space(d, cases, ranks_list, fio_bytes):
    need_case = max(suitemod.file_bytes(c, r) for c in cases for r in ranks_list)
    need = max(int(need_case * 1.05), fio_bytes * max(ranks_list)) + (16 << 20)
    free = shutil.disk_usage(d).free
    if free < need:
        raise BadInput(f"not enough free space in {d}: the chosen sizes need "
                       f"{need / 2**20:.0f} MiB, {free / 2**20:.0f} MiB free")
    return need


class Progress:
    def __init__(self, total, quiet=False, stream=None):
        self.total, self.quiet, self.stream = total, quiet, stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self.durations = {}   # run key -> last wall seconds
        self.by_case = {}     # case name -> [seconds]
        self.done = 0

    def eta(self, remaining):
        if not self.by_case and not self.durations:
            return None
        allv = [v for vs in self.by_case.values() for v in vs]
        glob = sum(allv) / len(allv) if allv else 1.0
        t = 0.0
        for r in remaining:
            if r.key in self.durations:
                t += self.durations[r.key]
            elif r.case["name"] in self.by_case:
                vs = self.by_case[r.case["name"]]
                t += sum(vs) / len(vs)
            else:
                t += glob
        return t

    def start(self, run, remaining):
        if self.quiet:
            return
        eta = self.eta(remaining)
        s = f"[{run.index + 1}/{self.total}] {run.label()} …"
        if eta is not None:
            s += f" ETA {repmod.fmt_duration(eta)}"
        if self.tty:
            cols = shutil.get_terminal_size((120, 20)).columns
            self.stream.write("\r\033[K" + s[:cols - 1])
        else:
            self.stream.write(s + "\n")
        self.stream.flush()

    def finish(self, run, rec):
        self.done += 1
        if rec["status"] not in ("skipped",):
            self.durations[run.key] = rec["wall_s"]
            self.by_case.setdefault(run.case["name"], []).append(rec["wall_s"])
        if rec["status"] != "ok" and not self.quiet:
            msg = f"  {rec['status'].upper()}: {run.label()}: {rec.get('error') or ''}"
            if self.tty:
                self.stream.write("\r\033[K\033[31m" + msg[:400] + "\033[0m\n")
            else:
                self.stream.write(msg[:400] + "\n")
            self.stream.flush()

    def note(self, text):
        if self.quiet:
            return
        self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.stream.flush()

    def end(self):
        if self.tty and not self.quiet:
            self.stream.write("\r\033[K")
            self.stream.flush()


def execute(run, timeout, state):
    """Runs one planned run; returns its record."""
    impl, case = run.impl, run.case
    rec = {"index": run.index, "case": case["name"], "pattern": case["pattern"], "args": case["args"],
           "dir": run.dir, "ranks": run.ranks, "impl": impl.name, "rep": run.rep, "status": "ok",
           "error": None, "verified": None, "write_MiBs": None, "read_MiBs": None, "write_s": None,
           "read_s": None, "bytes": None, "seconds": None, "wall_s": 0.0, "weft_stats": None, "cmd": None}
    nonblocking = suitemod.is_nonblocking(case)
    if nonblocking:
        rec.update({k: None for k in suitemod.NB_FIELDS})
    if impl.problem:
        rec.update(status="failed", error=impl.problem, verified=False)
        return rec
    if impl.name in state["broken"]:
        rec.update(status="skipped", error=f"{impl.name} timed out twice; its other runs are skipped")
        return rec
    if run.key in state["timed_out"]:
        rec.update(status="skipped", error="timed out in an earlier repetition")
        return rec
    path = os.path.join(run.dir, f"weft-bench.{os.getpid()}.{run.index}.dat")
    args = suitemod.case_argv(case) + ["--file", path, "--seed", str(state["seed"] + run.index)]
    cmd = impl.command(run.ranks, args, bind=state.get("bind"))
    rec["cmd"] = " ".join(cmd)
    # Untimed: write back what earlier runs left dirty (their unlinked files' journal, other
    # files), so a run is not throttled for its predecessor's writeback — on ext4 that made any
    # implementation's write 5-10x slower at random.
    os.sync()
    try:
        r = run_cmd(cmd, timeout)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    rec["wall_s"] = round(r.seconds, 3)
    recs = [x for x in parse_json_lines(r.out) if x.get("pattern") == case["pattern"]]
    full = [x for x in recs if "write_MiBs" in x]
    data = full[0] if full else (recs[0] if recs else None)
    if data:
        for k in ("verified", "write_MiBs", "read_MiBs", "write_s", "read_s", "bytes", "seconds"):
            rec[k] = data.get(k)
        if nonblocking:
            for k in suitemod.NB_FIELDS:
                rec[k] = data.get(k)
        rec["record"] = data
    rec["weft_stats"] = parse_weft_stats(r.out)
    sig = None if r.timed_out or r.rc == 0 else crash_signal(r.rc, r.err, r.out)
    crashed = f"crashed (signal {sig}, {signal_name(sig)}): " if sig else ""
    if sig:
        rec["signal"] = sig
    if r.timed_out:
        state["timed_out"].add(run.key)
        state["timeouts"][impl.name] = state["timeouts"].get(impl.name, 0) + 1
        if state["timeouts"][impl.name] >= 2:
            state["broken"].add(impl.name)
        tail = last_lines(r.err)
        rec.update(status="timeout", verified=False,
                   error=f"timed out after {timeout:g}s (killed)" + (f": {tail}" if tail else ""))
    elif impl.kind == "weft" and "cannot be preloaded" in r.err:
        # ld.so ignored libweft.so: the run measured the host's MPI-IO, not weft
        line = next(l for l in r.err.splitlines() if "cannot be preloaded" in l)
        rec.update(status="failed", verified=False, write_MiBs=None, read_MiBs=None,
                   error=f"libweft.so was not loaded: {line.strip()[:300]}")
    elif data is None:
        rec.update(status="crashed", verified=False,
                   error=f"{crashed}exit {r.rc}, no result: {last_lines(r.err or r.out) or 'no output'}")
    elif not full:
        rec.update(status="crashed", verified=False, error=crashed + (data.get("error") or f"exit {r.rc}"))
    elif data.get("verified") is not True:
        rec.update(status="unverified", error=data.get("error") or "verification failed")
    elif r.rc != 0:
        rec.update(status="crashed", error=f"{crashed}exit {r.rc} after a verified run: {last_lines(r.err)}")
    return rec


def resolve_impls(args, suite, catalog):
    if args.impl:
        names = _split(args.impl)
        return catalog.expand(names), []
    wanted = suite["impls"]
    names = catalog.default_names(with_hint_sets=True) if wanted == "all" else list(wanted)
    out, notes = [], []
    for n in names:
        try:
            out += catalog.expand([n])
        except BadInput as e:
            # the suite's list names what it would like; skip what this machine lacks
            if "needs weft-bench built" not in str(e) and "has no fcoll" not in str(e):
                raise
            notes.append(f"skipping {n}: {e}")
    return out, notes


def main(argv, repo, prog="weft bench"):
    try:
        return _main(argv, repo, prog)
    except BadInput as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2


def _main(argv, repo, prog):
    args = build_parser(prog).parse_args(argv)
    if args.report_from:
        return report_from(args)
    suite = suitemod.load_suite(args.suite, repo)
    if args.reps is not None and args.reps < 1:
        raise BadInput("--reps must be at least 1")
    if args.ranks is not None and any(n < 1 for n in args.ranks):
        raise BadInput("--ranks must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise BadInput("--timeout must be positive")
    cases = suite["cases"]
    if args.pattern:
        pats = _split(args.pattern)
        for p in pats:
            if p not in suitemod.PATTERNS:
                raise BadInput(f"unknown pattern '{p}' (known: {', '.join(sorted(suitemod.PATTERNS))})")
        cases = [c for c in cases if c["pattern"] in pats]
        if not cases:
            raise BadInput(f"suite {suite['name']} has no case of pattern(s) {', '.join(pats)}")
    if args.case:
        names = _split(args.case)
        for n in names:
            if n not in [c["name"] for c in suite["cases"]]:
                raise BadInput(f"suite {suite['name']} has no case '{n}' "
                               f"(cases: {', '.join(c['name'] for c in suite['cases'])})")
        cases = [c for c in cases if c["name"] in names]
    reps = args.reps or suite["reps"]
    bind = args.bind_to or suite["bind"]
    ranks_list = list(dict.fromkeys(args.ranks or suite["ranks"]))
    timeout = args.timeout or suite["timeout"]
    build_root = os.path.abspath(args.build_dir or implmod.default_build_root(repo))
    if args.build_dir and not os.path.isdir(build_root):
        raise BadInput(f"build directory {build_root} does not exist")
    catalog = implmod.Catalog(build_root, suite["hint_sets"])
    if args.list:
        return list_things(repo, suite, cases, catalog)
    if not any(catalog.binaries.values()):
        raise BadInput(f"weft-bench is not built under {build_root}/{{openmpi,mpich}} "
                       f"(cmake --build --preset openmpi, or give --build-dir)")
    impls, notes = resolve_impls(args, suite, catalog)
    if not impls:
        raise BadInput("no implementation to run")
    dirs = list(dict.fromkeys(check_dir(d) for d in (args.dir or suite["dirs"])))
    fio_size = suitemod.parse_size(suite["limits"].get("fio_size", "64M"))
    run_limits = not args.no_limits
    for d in dirs:
        check_space(d, cases, ranks_list, fio_size if run_limits and suite["limits"].get("fio") else 0)
    plan = make_plan(cases, dirs, ranks_list, impls, reps)
    if args.dry_run:
        for r in plan:
            print(f"[{r.index + 1}/{len(plan)}] {r.label()}")
        return 0
    out_dir = args.out or os.path.join("results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    try:
        os.makedirs(out_dir, exist_ok=True)
        probe = os.path.join(out_dir, ".probe")
        open(probe, "w").close()
        os.unlink(probe)
    except OSError as e:
        raise BadInput(f"cannot write to output directory {out_dir}: {e.strerror}")

    progress = Progress(len(plan), args.quiet)
    for n in notes:
        progress.note(n)
    t0 = time.time()
    results = {
        # The suite as run: --reps/--ranks override its defaults, and the report says so.
        "version": 1, "suite": dict(suite, reps=reps, ranks=ranks_list, bind=bind),
        "command": " ".join([prog] + list(argv)),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(dirs, catalog.mpiruns),
        "build_dir": build_root,
        "impls": {i.name: i.to_json() for i in impls},
        "limits": {"fio": {}, "pingpong": {}}, "runs": [],
    }
    interrupted = False
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if run_limits:
            measure_limits(results, suite, dirs, ranks_list, impls, catalog, timeout, fio_size, progress)
        state = {"timed_out": set(), "timeouts": {}, "broken": set(),
                 "seed": int(time.time()) & 0xffffffff, "bind": bind}
        for i, run in enumerate(plan):
            progress.start(run, plan[i:])
            rec = execute(run, timeout, state)
            results["runs"].append(rec)
            progress.finish(run, rec)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, old_term)
        progress.end()
    results["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    results["elapsed_s"] = round(time.time() - t0, 1)
    results["interrupted"] = interrupted
    path, plots, err = repmod.write_all(results, out_dir, make_plots=not args.no_plots)
    if results["runs"]:
        print(repmod.console_table(results, color=sys.stdout.isatty()))
    if err:
        print(err, file=sys.stderr)
    nfail = sum(1 for r in results["runs"] if r["status"] != "ok")
    print(f"\n{len(results['runs'])} runs, {nfail} failed, {repmod.fmt_duration(results['elapsed_s'])}. "
          f"Report: {path}")
    if interrupted:
        return 130
    return 1 if (args.strict and nfail) else 0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def measure_limits(results, suite, dirs, ranks_list, impls, catalog, timeout, fio_size, progress):
    lim = suite["limits"]
    if lim.get("fio"):
        for d in dirs:
            for n in ranks_list:
                progress.note(f"limit: fio {d}, {n} job(s) of {suitemod.fmt_size(fio_size)}")
                results["limits"]["fio"][f"{d}|{n}"] = limmod.fio_limit(d, n, fio_size, max(timeout, 60))
    if lim.get("pingpong"):
        flavours = list(dict.fromkeys(i.flavour for i in impls))
        for f in flavours:
            if not catalog.binaries.get(f):
                continue
            host = catalog.get("romio-mpich" if f == "mpich" else "ompio")
            progress.note(f"limit: MPI ping-pong ({f})")
            results["limits"]["pingpong"][f] = limmod.pingpong(host, timeout)


def list_things(repo, suite, cases, catalog):
    print("suites: " + ", ".join(suitemod.available_suites(repo)))
    print(f"suite {suite['name']}: reps {suite['reps']}, ranks {suite['ranks']}, dirs {suite['dirs']}, "
          f"timeout {suite['timeout']}s" + (f", bind-to {suite['bind']}" if suite.get("bind") else ""))
    for c in cases:
        print(f"  case {c['name']!r}: {' '.join(suitemod.case_argv(c))}")
    print(f"build dir: {catalog.build_root}")
    for f in implmod.FLAVOURS:
        print(f"  {f}: weft-bench {catalog.binaries[f] or 'NOT BUILT'}, libweft.so "
              f"{catalog.libweft[f] or 'NOT BUILT'}, mpirun {catalog.mpiruns[f]}")
    print("implementations:")
    for n in catalog.default_names(with_hint_sets=True):
        i = catalog.get(n)
        print(f"  {n:28s} {i.desc}" + (f"  [{i.problem}]" if i.problem else ""))
    print("hint sets: " + ", ".join(f"{k} ({';'.join(f'{a}={b}' for a, b in v.items())})"
                                    for k, v in catalog.hint_sets.items()))
    return 0


def report_from(args):
    src = args.report_from
    import json
    try:
        with open(src) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read {src}: {e}")
    if not isinstance(results, dict) or "runs" not in results:
        raise BadInput(f"{src} is not a weft-bench results.json")
    out_dir = args.out or os.path.dirname(os.path.abspath(src))
    os.makedirs(out_dir, exist_ok=True)
    path, plots, err = repmod.write_all(results, out_dir, make_plots=not args.no_plots)
    print(repmod.console_table(results, color=sys.stdout.isatty()))
    if err:
        print(err, file=sys.stderr)
    print(f"\nReport: {path}")
    return 0
