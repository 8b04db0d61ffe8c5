"""Statistics over repetitions: median and min-max."""

# The nonblocking figures summarized over repetitions (seconds, the fraction, a count).
NB_STATS = ("t_io", "t_comp", "t_total", "hidden", "hidden_raw", "tests_called", "t_post", "t_wait")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    m = n // 2
    return xs[m] if n % 2 else (xs[m - 1] + xs[m]) / 2.0


def summarize(values):
    """{'n', 'median', 'min', 'max'} of the numbers (None when there are none)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return {"n": 0, "median": None, "min": None, "max": None}
    return {"n": len(vals), "median": median(vals), "min": min(vals), "max": max(vals)}


def group_runs(runs):
    """Groups run records by (case, dir, ranks, impl), keeping first-seen order."""
    groups = {}
    for r in runs:
        groups.setdefault((r["case"], r["dir"], r["ranks"], r["impl"]), []).append(r)
    return groups


def summary_rows(runs, impls_meta, limits=None):
    """One row per (case, dir, ranks, impl): medians, ranges, ratios, failures.

    Bandwidths count only runs that produced numbers; a run that failed verification still
    has numbers but the row is marked failed.  The ratio to the best host MPI-IO compares with
    the best median among host implementations (ROMIO, OMPIO) whose runs all verified.
    """
    rows = []
    for (case, d, ranks, impl), rs in group_runs(runs).items():
        ok = [r for r in rs if r["status"] == "ok"]
        measured = [r for r in rs if r.get("write_MiBs") is not None]
        w = summarize([r["write_MiBs"] for r in measured])
        rd = summarize([r["read_MiBs"] for r in measured])
        errors = []
        for r in rs:
            if r["status"] != "ok" and r.get("error"):
                if r["error"] not in errors:
                    errors.append(r["error"])
        rows.append({
            "case": case, "pattern": rs[0]["pattern"], "dir": d, "ranks": ranks, "impl": impl,
            "nb": _nb_summary(rs),
            "signals": sorted({r["signal"] for r in rs if r.get("signal")}),
            "kind": (impls_meta.get(impl) or {}).get("kind", "host"),
            "runs": len(rs), "ok": len(ok),
            "failed": len(rs) - len(ok),
            "statuses": sorted({r["status"] for r in rs}),
            "write": w, "read": rd, "errors": errors,
            "weft_stats": _stats_medians([r.get("weft_stats") for r in rs]),
        })
    # ratios
    best = {}
    for row in rows:
        if row["kind"] != "host" or row["failed"]:
            continue
        k = (row["case"], row["dir"], row["ranks"])
        for m in ("write", "read"):
            v = row[m]["median"]
            if v is not None and v > best.get((k, m), 0):
                best[(k, m)] = v
    fio = (limits or {}).get("fio", {})
    for row in rows:
        k = (row["case"], row["dir"], row["ranks"])
        for m in ("write", "read"):
            v = row[m]["median"]
            b = best.get((k, m))
            row[m]["vs_best_host"] = (v / b) if (v is not None and b) else None
            lim = (fio.get(f"{row['dir']}|{row['ranks']}") or {}).get(f"{m}_MiBs")
            row[m]["vs_fio"] = (v / lim) if (v is not None and lim) else None
    return rows


def _nb_summary(rs):
    """Medians and ranges of the nonblocking figures (each over the runs that produced it), the
    call measured; None for a case that is not nonblocking."""
    call = next((r.get("nonblocking") or (r.get("args") or {}).get("nonblocking")
                 for r in rs if r.get("nonblocking") or (r.get("args") or {}).get("nonblocking")), None)
    if call is None and not any("hidden" in r for r in rs):
        return None
    out = {k: summarize([r.get(k) for r in rs]) for k in NB_STATS}
    out["call"] = call
    return out


def _stats_medians(stats_list):
    """Medians of weft-stats *_seconds fields over repetitions (None when absent)."""
    stats_list = [s for s in stats_list if s]
    if not stats_list:
        return None
    keys = []
    for s in stats_list:
        for k in s:
            if k not in keys:
                keys.append(k)
    return {k: median([s[k] for s in stats_list if k in s]) for k in keys}
