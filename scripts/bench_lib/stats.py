"""Summary of one suite over rounds, from its raw records (the JSON Lines).

A *row* is (kind, scenario, threads, figure); kind is "" for timings and "strace" for
walk's syscall counts. Per row and runtime: median, min, max over the rounds in which
that runtime's run passed its checks. Per row and peer: the ratio saturn/peer taken
pair by pair within a round (both runs passed), then the median (and min, max) of those
ratios. A saturn-only scenario with an alias (loop: await_pingpong -> nop_pingpong) is
compared with the peer's aliased scenario. A scenario with a *baseline* (loop:
effect_veneer -> effect_direct) also gets `self_ratio`: saturn's figure over saturn's
baseline scenario, pair by pair within a round.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from .figures import direction, is_number

STRACE_FIGURES = ("sys_getdents64", "sys_openat", "sys_futex", "sys_sched_yield")
NOISY_PCT = 15.0  # a run during which others used more than this % of one CPU


def _spread(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def _row_figures(suite, rec: dict) -> tuple:
    return STRACE_FIGURES if rec.get("kind") == "strace" else suite.figures_for(rec["scenario"])


def collect(suite, records: list) -> dict:
    """{(kind, scenario, threads, figure): {runtime: {round: value}}} of passing runs."""
    cells: dict = defaultdict(lambda: defaultdict(dict))
    for rec in records:
        if rec.get("failed") or not isinstance(rec.get("scenario"), str):
            continue
        key0 = (rec.get("kind", ""), rec["scenario"], rec.get("threads", 0))
        for fig in _row_figures(suite, rec):
            v = rec.get(fig)
            if is_number(v):
                cells[key0 + (fig,)][rec["runtime"]][rec.get("round", 0)] = float(v)
    return cells


def runtime_names(suite, records: list) -> list:
    seen = {r.get("runtime") for r in records}
    order = ["saturn"] + [name for name, _ in suite.peers]
    return [n for n in order if n in seen] + sorted(n for n in seen - set(order) if n)


def _ratios(saturn: dict, peer: dict) -> list:
    return [saturn[r] / peer[r] for r in sorted(saturn) if r in peer and peer[r] != 0]


def _row_order(suite, key: tuple) -> tuple:
    kind, scenario, threads, fig = key
    scen = list(suite.scenarios)
    figs = list(suite.figures_for(scenario)) + list(STRACE_FIGURES)
    return (kind, scen.index(scenario) if scenario in scen else len(scen), scenario, threads,
            figs.index(fig) if fig in figs else len(figs))


def make_rows(suite, cells: dict, runtimes: list) -> list:
    rows = []
    for key in sorted(cells, key=lambda k: _row_order(suite, k)):
        kind, scenario, threads, fig = key
        by_rt = cells[key]
        row = {"kind": kind, "scenario": scenario, "threads": threads, "figure": fig,
               "better": direction(fig), "values": {}, "ratios": {}}
        for rt in runtimes:
            if by_rt.get(rt):
                row["values"][rt] = _spread(list(by_rt[rt].values())) | {
                    "rounds": sorted(by_rt[rt].items())}
        alias = suite.aliases.get(scenario)
        for rt in runtimes[1:]:
            peer = by_rt.get(rt) or (cells.get((kind, alias, threads, fig), {}).get(rt)
                                     if alias else None)
            ratios = _ratios(by_rt.get("saturn", {}), peer or {})
            if ratios:
                row["ratios"][rt] = _spread(ratios)
                if not by_rt.get(rt):
                    row["ratios"][rt]["vs_scenario"] = alias
        base = getattr(suite, "baselines", {}).get(scenario)
        if base:
            ratios = _ratios(by_rt.get("saturn", {}),
                             cells.get((kind, base, threads, fig), {}).get("saturn", {}))
            if ratios:
                row["self_ratio"] = _spread(ratios) | {"vs_scenario": base}
        rows.append(row)
    return rows


def failures(records: list) -> list:
    return [{"round": r.get("round"), "runtime": r.get("runtime"), "scenario": r.get("scenario"),
             "threads": r.get("threads"), "reason": r.get("reason", "")}
            for r in records if r.get("failed")]


def _runs(records: list) -> dict:
    """{(round, runtime, other-load figure): [scenarios]}: records grouped by run."""
    runs: dict = {}
    for r in records:
        pct = r.get("run_other_cpu_pct")
        if is_number(pct):
            runs.setdefault((r.get("round"), r.get("runtime"), pct), []).append(r.get("scenario"))
    return runs


def noisy_runs(records: list) -> list:
    """One entry per run during which other processes took more than NOISY_PCT."""
    return [{"round": rnd, "runtime": rt, "other_cpu_pct": pct,
             "scenario": scen[0] if len(scen) == 1 else None}
            for (rnd, rt, pct), scen in _runs(records).items() if pct > NOISY_PCT]


def add_failed_only(suite, cells: dict, records: list) -> None:
    """Empty rows for scenarios whose every run failed, so the table shows FAILED."""
    for r in records:
        if r.get("failed") and isinstance(r.get("scenario"), str) and r.get("kind") != "strace":
            for fig in suite.figures_for(r["scenario"]):
                cells.setdefault(("", r["scenario"], r.get("threads", 0), fig), {})


def summarize(suite, records: list, meta: dict) -> dict:
    """The suite's entry in summary.json."""
    runtimes = runtime_names(suite, records)
    rounds = sorted({r.get("round", 0) for r in records})
    cells = collect(suite, records)
    add_failed_only(suite, cells, records)
    return {
        "suite": suite.name, **meta, "rounds_seen": len(rounds), "runtimes": runtimes,
        "rows": make_rows(suite, cells, runtimes),
        "failures": failures(records), "noisy_runs": noisy_runs(records),
        "runs_with_load_figure": len(_runs(records)),
    }
