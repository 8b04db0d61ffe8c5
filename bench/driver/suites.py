"""Suites: which patterns, at which sizes, on which directories, with how many ranks and reps.

A suite is a JSON file (bench/suites/<name>.json or any path):

    {"name": "quick", "reps": 3, "ranks": [2], "dirs": ["/dev/shm", "/var/tmp"],
     "timeout": 30, "impls": ["weft", "romio-mpich", ...] | "all", "bind": "none" (optional),
     "hint_sets": {"my-set": {"weft_overlap": "write"}},
     "limits": {"fio": true, "fio_size": "32M", "pingpong": true},
     "cases": [{"name": "ior-1M", "pattern": "ior", "args": {"block-size": "1M", "segments": 8}}]}

Case args become weft-bench options (`"tile": [16, 8]` -> `--tile 16 8`).

`"nonblocking": "iwrite_all"` (or "iwrite_at_all") makes a case of a collective write (ior in
coll mode, tile, block3d, flash) a nonblocking measurement: every run writes the file with the
blocking call (T_io) and then with the nonblocking one while computing (T_total), and reports
the fraction of the I/O time hidden (NB_FIELDS; weft-bench --help, docs/PERFORMANCE.md).
"""
import json
import os
import re

from .errors import BadInput

# weft-bench's patterns and the options each accepts.
PATTERNS = {
    "ior": {"block-size", "segments", "transfer-size", "mode", "nonblocking"},
    "tile": {"elem-size", "tile", "grid", "nonblocking"},
    "block3d": {"n", "elem-size", "grid", "nonblocking"},
    "flash": {"nvars", "nxb", "guard", "blocks", "nonblocking"},
    "strided": {"mode", "elem-size", "count", "gap"},
    "checkpoint": {"n", "iters", "every"},
}
COMMON_ARGS = {"no-sync", "no-hole-check", "no-posix-check", "hints"}
# Patterns the posix baseline (pwrite/pread of the same bytes) can do.
POSIX_PATTERNS = {"ior", "tile", "block3d", "flash", "strided"}
# The nonblocking calls weft-bench --nonblocking measures, and what its records add.
NB_CALLS = ("iwrite_all", "iwrite_at_all")
NB_FIELDS = ("nonblocking", "t_io", "t_comp", "t_total", "hidden", "hidden_raw", "tests_called",
             "t_post", "t_wait", "nb_verified")

SUITE_KEYS = {"name", "description", "reps", "ranks", "dirs", "timeout", "impls", "hint_sets",
              "limits", "cases", "bind"}
# Process bindings both launchers know (Open MPI --bind-to, MPICH hydra -bind-to).
BINDINGS = ("none", "core", "socket", "hwthread")

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?)(i?B)?\s*$")


def parse_size(v):
    """'64K' -> 65536, '1.5M' -> 1572864, 42 -> 42."""
    if isinstance(v, bool):
        raise BadInput(f"bad size {v!r}")
    if isinstance(v, (int, float)):
        return int(v)
    m = _SIZE.match(str(v))
    if not m:
        raise BadInput(f"bad size {v!r}")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def fmt_size(n):
    """65536 -> '64KiB', 8 -> '8B'."""
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s and n % s == 0:
            return f"{n // s}{unit}"
    return f"{n}B"


def suite_dir(repo):
    return os.path.join(repo, "bench", "suites")


def available_suites(repo):
    d = suite_dir(repo)
    try:
        return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))
    except OSError:
        return []


def load_suite(name_or_path, repo):
    """Loads and validates a suite by name (bench/suites/NAME.json) or path."""
    path = name_or_path
    if os.path.sep not in name_or_path and not name_or_path.endswith(".json"):
        path = os.path.join(suite_dir(repo), name_or_path + ".json")
        if not os.path.exists(path):
            names = ", ".join(available_suites(repo)) or "none"
            raise BadInput(f"unknown suite '{name_or_path}' (available: {names}; or give a JSON file)")
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise BadInput(f"suite file {path} does not exist")
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read suite {path}: {str(e).splitlines()[0]}")
    return validate_suite(data, source=path)


def _int_list(v, what):
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
        raise BadInput(f"suite: {what} must be a positive integer or a list of them")
    return v


def validate_suite(data, source="suite"):
    if not isinstance(data, dict):
        raise BadInput(f"{source}: a suite is a JSON object")
    unknown = set(data) - SUITE_KEYS
    if unknown:
        raise BadInput(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
    s = {
        "name": str(data.get("name", os.path.basename(source).rsplit(".", 1)[0])),
        "description": str(data.get("description", "")),
        "reps": data.get("reps", 3),
        "ranks": _int_list(data.get("ranks", [2]), "ranks"),
        "dirs": data.get("dirs", ["/dev/shm"]),
        "timeout": data.get("timeout", 120),
        "impls": data.get("impls", "all"),
        "hint_sets": data.get("hint_sets", {}),
        "limits": dict({"fio": True, "fio_size": "64M", "pingpong": True}, **data.get("limits", {})),
        "bind": data.get("bind"),
        "cases": [],
    }
    if s["bind"] is not None and s["bind"] not in BINDINGS:
        raise BadInput(f"{source}: bind is one of {', '.join(BINDINGS)} (or absent: the launcher's default)")
    if not isinstance(s["reps"], int) or isinstance(s["reps"], bool) or s["reps"] < 1:
        raise BadInput(f"{source}: reps must be a positive integer")
    if not isinstance(s["timeout"], (int, float)) or s["timeout"] <= 0:
        raise BadInput(f"{source}: timeout must be a positive number of seconds")
    if not isinstance(s["dirs"], list) or not all(isinstance(d, str) for d in s["dirs"]):
        raise BadInput(f"{source}: dirs must be a list of paths")
    if not (s["impls"] == "all" or (isinstance(s["impls"], list) and all(isinstance(i, str) for i in s["impls"]))):
        raise BadInput(f"{source}: impls must be \"all\" or a list of names")
    if not isinstance(s["hint_sets"], dict) or not all(
            isinstance(v, dict) and all(isinstance(x, (str, int)) for x in v.values())
            for v in s["hint_sets"].values()):
        raise BadInput(f"{source}: hint_sets must map names to {{hint: value}} objects")
    parse_size(s["limits"].get("fio_size", "64M"))
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise BadInput(f"{source}: cases must be a non-empty list")
    names = set()
    for i, c in enumerate(cases):
        case = validate_case(c, f"{source}: case {i + 1}")
        if case["name"] in names:
            raise BadInput(f"{source}: two cases named '{case['name']}'")
        names.add(case["name"])
        s["cases"].append(case)
    return s


def validate_case(c, where):
    if not isinstance(c, dict) or "pattern" not in c:
        raise BadInput(f"{where}: needs a pattern")
    p = c["pattern"]
    if p not in PATTERNS:
        raise BadInput(f"{where}: unknown pattern '{p}' (known: {', '.join(sorted(PATTERNS))})")
    args = c.get("args", {})
    if not isinstance(args, dict):
        raise BadInput(f"{where}: args must be an object")
    bad = set(args) - PATTERNS[p] - COMMON_ARGS
    if bad:
        raise BadInput(f"{where}: pattern {p} has no option(s) {', '.join(sorted(bad))} "
                       f"(it has {', '.join(sorted(PATTERNS[p]))})")
    for k, v in args.items():
        if k in ("block-size", "transfer-size", "elem-size", "count"):
            parse_size(v)
        elif k == "tile":
            if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) and x > 0 for x in v)):
                raise BadInput(f"{where}: tile must be [NX, NY]")
        elif k == "grid":
            want = 2 if p == "tile" else 3
            if not (isinstance(v, list) and len(v) == want and
                    all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v)):
                raise BadInput(f"{where}: grid must be {want} non-negative integers "
                               "(0 = MPI_Dims_create's choice)")
        elif k == "nonblocking":
            if v not in NB_CALLS:
                raise BadInput(f"{where}: nonblocking is {' or '.join(NB_CALLS)}")
        elif k in ("mode", "hints"):
            if not isinstance(v, str):
                raise BadInput(f"{where}: {k} must be a string")
        elif k in COMMON_ARGS:
            if not isinstance(v, bool):
                raise BadInput(f"{where}: {k} must be true or false")
        elif not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
            raise BadInput(f"{where}: {k} must be a non-negative integer")
    if p == "ior" and args.get("mode", "coll") not in ("coll", "indep"):
        raise BadInput(f"{where}: ior mode is coll or indep")
    if "nonblocking" in args and p == "ior" and args.get("mode", "coll") != "coll":
        raise BadInput(f"{where}: nonblocking needs collective writes (ior mode coll)")
    if p == "strided" and args.get("mode", "memtype") not in ("memtype", "fileview"):
        raise BadInput(f"{where}: strided mode is memtype or fileview")
    name = c.get("name") or default_case_name(p, args)
    return {"name": str(name), "pattern": p, "args": dict(args)}


def default_case_name(p, a):
    name = _default_name(p, a)
    return f"{name} {a['nonblocking']}" if a.get("nonblocking") else name


def is_nonblocking(case):
    return bool(case["args"].get("nonblocking"))


def _default_name(p, a):
    if p == "ior":
        return f"ior {fmt_size(parse_size(a.get('block-size', '1M')))} {a.get('mode', 'coll')}"
    if p == "tile":
        return f"tile {fmt_size(parse_size(a.get('elem-size', 8)))}"
    if p == "strided":
        return f"strided {a.get('mode', 'memtype')} {fmt_size(parse_size(a.get('elem-size', 8)))}"
    return p


def case_argv(case):
    """weft-bench options for a case."""
    out = ["--pattern", case["pattern"]]
    for k, v in case["args"].items():
        if k in COMMON_ARGS and isinstance(v, bool):
            if v:
                out.append("--" + k)
        elif isinstance(v, list):
            out += ["--" + k] + [str(x) for x in v]
        else:
            out += ["--" + k, str(v)]
    return out


def _dims_create(n, nd):
    """MPI_Dims_create for the balanced grid (enough for size estimates)."""
    dims = [1] * nd
    f, m = [], n
    d = 2
    while d * d <= m:
        while m % d == 0:
            f.append(d)
            m //= d
        d += 1
    if m > 1:
        f.append(m)
    for x in sorted(f, reverse=True):
        i = dims.index(min(dims))
        dims[i] *= x
    return sorted(dims, reverse=True)


def file_bytes(case, ranks):
    """Size of the file a case makes with `ranks` processes (as weft-bench computes it)."""
    a, p, P = case["args"], case["pattern"], ranks
    if p == "ior":
        return parse_size(a.get("block-size", "1M")) * int(a.get("segments", 4)) * P
    if p == "tile":
        nx, ny = a.get("tile", [64, 64])
        return nx * ny * parse_size(a.get("elem-size", 8)) * P
    if p == "block3d":
        n = int(a.get("n", 64))
        return n ** 3 * parse_size(a.get("elem-size", 4))
    if p == "flash":
        x = int(a.get("nxb", 8))
        return int(a.get("nvars", 24)) * P * int(a.get("blocks", 8)) * x ** 3 * 8
    if p == "strided":
        e, n, h = parse_size(a.get("elem-size", 8)), parse_size(a.get("count", 65536)), int(a.get("gap", 4))
        if a.get("mode", "memtype") == "fileview":
            return n * P * (e + h) - h
        return n * e * P
    if p == "checkpoint":
        n = int(a.get("n", 512))
        return n * n * 8 + 64
    raise BadInput(f"unknown pattern '{p}'")
