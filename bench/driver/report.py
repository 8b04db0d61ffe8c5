"""results.json, results.csv, report.md and the table printed at the end of a run.

Everything here works from the results dictionary alone (what results.json holds), so a
report can be made again from a saved results.json (`./weft bench --report-from FILE`)."""
import csv
import html
import json
import os

from .stats import summary_rows

RED = '<span style="color:red">{}</span>'

CSV_FIELDS = ["index", "case", "pattern", "dir", "fstype", "ranks", "impl", "rep", "status",
              "verified", "write_MiBs", "read_MiBs", "write_s", "read_s", "bytes", "open_w",
              "write", "sync", "close_w", "open_r", "read", "close_r", "wall_s", "error",
              # nonblocking cases (empty for the others)
              "nonblocking", "t_io", "t_comp", "t_total", "hidden", "hidden_raw", "tests_called",
              "t_post", "t_wait", "signal"]

# The goals for the hidden fraction, by rank count: printed next to the figures,
# never checked.
NB_GOALS = {1: 0.8, 2: 0.5}


def write_json(results, out_dir):
    path = os.path.join(out_dir, "results.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=False)
    return path


def write_csv(results, out_dir):
    path = os.path.join(out_dir, "results.csv")
    fstypes = {d["path"]: d["fstype"] for d in results.get("machine", {}).get("dirs", [])}
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in results["runs"]:
            row = dict(r)
            row["fstype"] = fstypes.get(r["dir"], "")
            for k, v in (r.get("seconds") or {}).items():
                row[k] = v
            w.writerow(row)
    return path


def _num(v, digits=0):
    if v is None:
        return "–"
    if v >= 100 or digits == 0:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def _bw(s):
    if s["median"] is None:
        return "–"
    if s["n"] > 1:
        return f"{_num(s['median'], 1)} ({_num(s['min'], 1)}–{_num(s['max'], 1)})"
    return _num(s["median"], 1)


def _ratio(v):
    return "–" if v is None else f"{v:.2f}×"


def _cell(text):
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def _ms(v):
    if v is None:
        return "–"
    v *= 1000.0
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def _frac(s):
    if s["median"] is None:
        return "–"
    if s["n"] > 1:
        return f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"
    return f"{s['median']:.2f}"


def nb_goal(ranks):
    g = NB_GOALS.get(ranks)
    return f"≥ {g}" if g is not None else ""


def failure_mark(r):
    """Short status of a row with failed runs: 'crashed (signal 11)', '1/3 unverified', ..."""
    if not r["failed"]:
        return ""
    bad = [s for s in r["statuses"] if s != "ok"]
    what = f"crashed (signal {', '.join(str(x) for x in r['signals'])})" if r.get("signals") \
        else "/".join(bad)
    return what if r["failed"] == r["runs"] else f"{r['failed']}/{r['runs']} {what}"


def comp_off(nb, tol=0.25):
    """Whether the compute loop's median time alone is off T_io's by more than tol: the loop ran
    at another speed than when it was calibrated (the machine's load changed)."""
    io, comp = nb["t_io"]["median"], nb["t_comp"]["median"]
    return bool(io and comp is not None and abs(comp / io - 1.0) > tol)


def nb_rows(rows):
    """The rows of nonblocking cases, by directory then rank count (the suite's order inside)."""
    out = [r for r in rows if r.get("nb")]
    order = {id(r): i for i, r in enumerate(out)}
    return sorted(out, key=lambda r: (r["dir"], r["ranks"], order[id(r)]))


def rows_for(results):
    return summary_rows(results["runs"], results.get("impls", {}), results.get("limits"))


def fmt_duration(s):
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    return f"{s // 60}m{s % 60:02d}s"


def write_markdown(results, out_dir, plots=()):
    rows = rows_for(results)
    m = results.get("machine", {})
    suite = results.get("suite", {})
    L = []
    L.append("# weft-bench report\n")
    L.append(f"Suite **{suite.get('name', '?')}** — {len(results['runs'])} runs, "
             f"{suite.get('reps', '?')} repetitions interleaved across implementations; "
             f"started {results.get('started', '?')}, took {fmt_duration(results.get('elapsed_s', 0))}.\n")
    if results.get("command"):
        L.append(f"Command: `{results['command']}`\n")
    if results.get("interrupted"):
        L.append(RED.format("The run was interrupted; the results below are partial.") + "\n")

    # machine
    L.append("## Machine\n")
    L.append("| | |\n|---|---|")
    L.append(f"| CPU | {_cell(m.get('cpu', '?'))}, {m.get('cores', '?')} cores |")
    L.append(f"| Memory | {m.get('memory_gib', '?')} GiB |")
    L.append(f"| Kernel | {_cell(m.get('kernel', '?'))} |")
    for k, v in (m.get("mpi") or {}).items():
        L.append(f"| MPI ({k}) | {_cell(v)} |")
    if m.get("fio"):
        L.append(f"| fio | {_cell(m['fio'])} |")
    for d in m.get("dirs", []):
        size = f"{d['size'] / 2**30:.0f} GiB, {d['free'] / 2**30:.0f} GiB free" if d.get("size") else ""
        L.append(f"| {_cell(d['path'])} | {d['fstype']} on {_cell(d['device'])} "
                 f"(mounted at {_cell(d['mount'])}) {size} |")
    L.append("")

    # limits
    lim = results.get("limits") or {}
    if lim.get("fio") or lim.get("pingpong"):
        L.append("## Limits measured in this run\n")
        if lim.get("fio"):
            L.append("fio, sequential 1 MiB buffered I/O, one job per rank, each in its own region "
                     "of one shared file, not preallocated, fsync at the end of the write, read "
                     "right after the write (the conditions of the benchmark runs).\n")
            L.append("| directory | jobs | write MiB/s | read MiB/s | |\n|---|---:|---:|---:|---|")
            for key, f in lim["fio"].items():
                err = RED.format(_cell(f["error"])) if f.get("error") else ""
                L.append(f"| {_cell(f['dir'])} | {f['jobs']} | {_num(f.get('write_MiBs'))} | "
                         f"{_num(f.get('read_MiBs'))} | {err} |")
            L.append("")
        if lim.get("pingpong"):
            L.append("| MPI ping-pong (2 ranks) | MiB/s | |\n|---|---:|---|")
            for flav, p in lim["pingpong"].items():
                err = RED.format(_cell(p["error"])) if p.get("error") else ""
                L.append(f"| {flav} | {_num(p.get('MiBs'))} | {err} |")
            L.append("")

    # implementations
    L.append("## Implementations\n")
    L.append("| name | what | |\n|---|---|---|")
    for name, i in (results.get("impls") or {}).items():
        prob = RED.format(_cell(i["problem"])) if i.get("problem") else ""
        L.append(f"| {name} | {_cell(i.get('desc', ''))} | {prob} |")
    L.append("")

    # results
    L.append("## Bandwidth\n")
    L.append("MiB/s of whole calls including open, sync and close (max over ranks): median over "
             "repetitions, (min–max) when more than one. ×host: ratio to the best host MPI-IO "
             "(ROMIO/OMPIO) median for the same case; ×fio: ratio to the fio limit of the directory.\n")
    groups = {}
    for r in rows:
        groups.setdefault((r["dir"], r["ranks"]), []).append(r)
    for (d, ranks), rs in groups.items():
        L.append(f"### {d}, {ranks} ranks\n")
        L.append("| case | impl | write MiB/s | ×host | ×fio | read MiB/s | ×host | ×fio | runs |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in rs:
            runs = f"{r['ok']}/{r['runs']} ok"
            if r["failed"]:
                runs = RED.format(f"{r['failed']}/{r['runs']} failed")
            L.append(f"| {_cell(r['case'])} | {r['impl']} | {_bw(r['write'])} | "
                     f"{_ratio(r['write']['vs_best_host'])} | {_ratio(r['write']['vs_fio'])} | "
                     f"{_bw(r['read'])} | {_ratio(r['read']['vs_best_host'])} | "
                     f"{_ratio(r['read']['vs_fio'])} | {runs} |")
        L.append("")

    # nonblocking
    nbr = nb_rows(rows)
    if nbr:
        L.append("## Nonblocking collective writes\n")
        L.append("Every run writes the case's file twice, each time into a new file that is read back "
                 "and verified: first with the blocking collective call, whose write phase is "
                 "**T_io**; then with the nonblocking call while every rank runs a compute loop "
                 "(real arithmetic, calibrated once per run to last T_io; **T_comp** is that loop "
                 "timed alone, in between), calling MPI_Test on the request after every millisecond "
                 "of it, then MPI_Wait. **T_total** runs from the nonblocking call to MPI_Wait's "
                 "return. All three are the slowest rank's. "
                 "**hidden = (T_io + T_comp − T_total) / T_io**, clamped to [0, 1]: median over "
                 "repetitions (min–max). *In call*: the time inside the nonblocking call itself (a "
                 "call that does the whole write before returning hides nothing). *Goal*: the "
                 "issue's target for the rank count (shown, not checked). The bandwidth table's "
                 "rows of these cases are their blocking writes'.\n")
        off = False
        for d in dict.fromkeys(r["dir"] for r in nbr):
            L.append(f"### {d}\n")
            L.append("| case | impl | ranks | call | T_io ms | T_comp ms | T_total ms | in call ms | "
                     "MPI_Test calls | hidden | goal | runs |")
            L.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
            for r in (x for x in nbr if x["dir"] == d):
                nb = r["nb"]
                runs = f"{r['ok']}/{r['runs']} ok"
                if r["failed"]:
                    runs = RED.format(_cell(failure_mark(r)))
                tests = "–" if nb["tests_called"]["median"] is None else f"{nb['tests_called']['median']:g}"
                comp = _ms(nb["t_comp"]["median"])
                if comp_off(nb):
                    comp += " †"
                    off = True
                L.append(f"| {_cell(r['case'])} | {r['impl']} | {r['ranks']} | {nb['call'] or '–'} | "
                         f"{_ms(nb['t_io']['median'])} | {comp} | "
                         f"{_ms(nb['t_total']['median'])} | {_ms(nb['t_post']['median'])} | {tests} | "
                         f"{_frac(nb['hidden'])} | {nb_goal(r['ranks'])} | {runs} |")
            L.append("")
        if off:
            L.append("† T_comp is more than 25 % off T_io: the compute loop ran at another speed than "
                     "when it was calibrated (the machine's load changed), so the window for overlap "
                     "was not the blocking write's length. Rerun on a quiet machine.\n")

    # failures
    failed = [r for r in rows if r["failed"]]
    L.append("## Failures\n")
    if not failed:
        L.append("None: every run of every implementation verified.\n")
    else:
        L.append("Verification failures, crashes and timeouts, by implementation and error:\n")
        by = {}
        for r in failed:
            errs = "; ".join(r["errors"]) or "failed"
            by.setdefault((r["impl"], errs), []).append(r)
        for (impl, errs), rs in by.items():
            total = sum(1 for x in rows if x["impl"] == impl)
            if len(rs) == total and total > 1:
                L.append("- " + RED.format(_cell(f"{impl}: {errs}")) + f" — in all {total} measurements")
                continue
            where = ", ".join(f"{r['case']} on {r['dir']} np{r['ranks']} ({r['failed']}/{r['runs']} "
                              f"{'/'.join(s for s in r['statuses'] if s != 'ok')})" for r in rs)
            L.append("- " + RED.format(_cell(f"{impl}: {errs}")) + f" — in {_cell(where)}")
        L.append("")

    if plots:
        L.append("## Plots\n")
        for p in plots:
            L.append(f"![{os.path.basename(p)}]({os.path.basename(p)})\n")

    L.append("## Notes\n")
    L.append("- Every run writes data that depends on the file offset and a per-run seed, reads it "
             "back through the same implementation and checks it, and checks the whole file with "
             "pread (size, data, holes zero). A run whose check fails counts as failed.")
    L.append("- Reads come right after the writes, so they are usually served from the page cache, "
             "as are fio's.")
    if suite.get("bind"):
        L.append(f"- Processes were launched with `--bind-to {suite['bind']}` (Open MPI) / "
                 f"`-bind-to {suite['bind']}` (MPICH).")
    ncores = m.get("cores") or 0
    if any(r["ranks"] > ncores for r in rows) and ncores:
        L.append(f"- Some runs use more ranks than the machine's {ncores} cores: "
                 "they check correctness, their timings mean little.")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    return path


def _text_table(table, red, right, color):
    """Plain-text columns: table[0] the header, red[i] whether row i+1 is a failure."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    out = []
    for n, row in enumerate(table):
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        line = "  ".join(cells).rstrip()
        if color and n > 0 and red[n - 1]:
            line = f"\033[31m{line}\033[0m"
        out.append(line)
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def console_table(results, color=False):
    """The summary table printed at the end of a run (plain text), and the nonblocking
    figures when the suite has such cases."""
    rows = rows_for(results)
    table = [["case", "dir", "np", "impl", "write MiB/s", "×host", "read MiB/s", "×host", "status"]]
    red = []
    for r in rows:
        st = "ok" if not r["failed"] else f"FAILED {r['failed']}/{r['runs']}"
        table.append([r["case"], r["dir"], str(r["ranks"]), r["impl"],
                      _num(r["write"]["median"], 1), _ratio(r["write"]["vs_best_host"]),
                      _num(r["read"]["median"], 1), _ratio(r["read"]["vs_best_host"]), st])
        red.append(bool(r["failed"]))
    out = _text_table(table, red, {2, 4, 5, 6, 7}, color)
    nbr = nb_rows(rows)
    if nbr:
        out += ["", "nonblocking: hidden = (T_io + T_comp - T_total) / T_io, median over repetitions"]
        table = [["case", "dir", "np", "impl", "T_io ms", "T_total ms", "hidden", "goal", "status"]]
        red = []
        for r in nbr:
            nb = r["nb"]
            h = nb["hidden"]["median"]
            table.append([r["case"], r["dir"], str(r["ranks"]), r["impl"], _ms(nb["t_io"]["median"]),
                          _ms(nb["t_total"]["median"]), "–" if h is None else f"{h:.2f}",
                          nb_goal(r["ranks"]), failure_mark(r) or "ok"])
            red.append(bool(r["failed"]))
        out += _text_table(table, red, {2, 4, 5, 6}, color)
    return "\n".join(out)


def write_all(results, out_dir, make_plots=True):
    """Writes every output; returns (report path, [plot paths], plot error or None)."""
    write_json(results, out_dir)
    write_csv(results, out_dir)
    plots, err = [], None
    if make_plots:
        try:
            from . import plots as plotmod
            plots = plotmod.make_plots(results, rows_for(results), out_dir)
        except ImportError as e:
            err = f"no plots: matplotlib is not available ({e})"
        except Exception as e:  # a plot must never lose the report
            err = f"no plots: {type(e).__name__}: {e}"
    path = write_markdown(results, out_dir, plots)
    return path, plots, err
