"""One benchmark session: peer builds, progress/ETA, and the files it writes.

Files of a session (bench/results/<YYYY-MM-DD>-<host>/):
  <suite>.jsonl   every run's JSON line + "round" (+ "failed"/"reason" when it failed)
  <suite>.log     stderr of every run, under a header line with the command
  summary.json    per suite: rows of median/min/max and saturn/peer ratios, failures
  machine.txt     CPU, nproc, kernel, g++, date
  scratch/        hyperfine exports and strace outputs (git-ignored)
Suites that did not run keep their earlier entries in summary.json.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from . import plots, report, stats
from .common import BenchError, Paths, log, machine_text
from .model import Step

# ----------------------------------------------------------------- peer builds

def build_peers(paths: Paths, suites: list, quick: bool = False) -> bool:
    """bench/peers/build.sh build/peers [--quick] SUITE...; its progress lines go to our
    stderr. A failed build is reported, not raised: the peers it left missing are
    recorded as FAILED runs. True when everything built."""
    argv = [str(paths.peers_build), str(paths.peers)] + (["--quick"] if quick else []) + suites
    log(f"building peers: {' '.join(argv)}")
    res = subprocess.run(argv, stdin=subprocess.DEVNULL)
    if res.returncode == 2:
        raise BenchError(f"{paths.peers_build}: bad usage (exit 2)")
    if res.returncode != 0:
        log(f"some peers did not build (exit {res.returncode}); they are reported as FAILED "
            f"(log: {paths.peers / 'build.log'})")
    return res.returncode == 0


# ----------------------------------------------------------------- progress

def fmt_duration(s: float) -> str:
    s = int(round(s))
    return f"{s}s" if s < 120 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """Prints `[bench] loop  saturn  round 3/5  elapsed 41s  eta ~30s` per step.

    The ETA sums, over the steps still to run, the measured duration of the same step in
    an earlier round, or the step's own estimate when it has not run yet."""

    def __init__(self, steps: list, rounds: dict):
        self.remaining = list(steps)
        self.rounds = rounds  # suite -> number of rounds
        self.measured: dict = {}
        self.t0 = time.monotonic()

    def _est(self, step: Step) -> float:
        return self.measured.get(step.key, step.est_s)

    def begin(self, step: Step) -> float:
        eta = sum(self._est(s) for s in self.remaining)
        who = step.context.get("side") or step.runtime or {"walk-prepare": "gen-tree", "walk-time": "hyperfine",
                               "walk-strace": "strace"}.get(step.kind, step.kind)
        job = "" if step.job == "all" else f"  {step.job}"
        rnd = f"round {step.round}/{self.rounds[step.suite]}" if step.round else "prepare"
        log(f"{step.suite:<11} {who:<9}{job}  {rnd}  elapsed "
            f"{fmt_duration(time.monotonic() - self.t0)}  eta ~{fmt_duration(eta)}")
        return time.monotonic()

    def end(self, step: Step, started: float) -> None:
        self.measured[step.key] = time.monotonic() - started
        if self.remaining and self.remaining[0] is step:
            self.remaining.pop(0)
        elif step in self.remaining:
            self.remaining.remove(step)

    def total_estimate(self) -> float:
        return sum(s.est_s for s in self.remaining)

    def elapsed(self) -> float:
        return time.monotonic() - self.t0


def failure_summary(failures: list) -> list:
    """Lines `FAILED suite runtime: scenario (N runs): first reason`, one per
    (suite, runtime, scenario), saturn's first."""
    groups: dict = {}
    for f in failures:
        groups.setdefault((f["suite"], f["runtime"], f["scenario"]), []).append(f)
    order = sorted(groups, key=lambda k: (k[1] != "saturn", k))
    return [f"FAILED {suite} {rt}: {sc} ({len(groups[(suite, rt, sc)])} run(s)): "
            f"{groups[(suite, rt, sc)][0]['reason']}" for suite, rt, sc in order]


def report_step(step: Step, records: list) -> None:
    for r in records:
        if r.get("failed"):
            log(f"  FAILED {r.get('runtime')} {r.get('scenario')}: {r.get('reason')}")
    noisy = {r.get("run_other_cpu_pct") for r in records
             if (r.get("run_other_cpu_pct") or 0) > stats.NOISY_PCT}
    if noisy:
        log(f"  note: other processes used ~{max(noisy):.0f}% of one CPU during this run")


# ----------------------------------------------------------------- results files

def write_jsonl(path: Path, records: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def read_jsonl(path: Path) -> list:
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def write_machine(out_dir: Path, facts: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "machine.txt").write_text(machine_text(facts))


def update_summary(out_dir: Path, facts: dict, suite_summaries: dict) -> Path:
    path = out_dir / "summary.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    data["machine"] = facts
    data.setdefault("suites", {}).update(suite_summaries)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def update_docs(paths: Paths, suites: dict, summary_file: Path, names: list, facts: dict,
                machine_suites: list, make_plots: bool = True) -> None:
    """Rewrite the machine section and the sections of `names` in docs/benchmarks.md."""
    doc = paths.repo / "docs" / "benchmarks.md"
    text = report.ensure_document(doc, suites)
    data = json.loads(summary_file.read_text())["suites"]
    results_rel = report.relpath(summary_file.parent, doc)
    machine = report.machine_body(facts, machine_suites, results_rel)
    failed = report.failed_summary_lines(data, machine_suites)
    machine += "\n" + "\n".join(failed) if failed else ""
    text = report.replace_section(text, "machine", machine)
    for name in names:
        plot_rel = None
        if make_plots:
            svg = paths.repo / "docs" / "plots" / f"{name}.svg"
            note = plots.plot(summary_file, name, svg)
            if note:
                log(f"{name}: no plot ({note})")
            else:
                plot_rel = report.relpath(svg, doc)
        notes = {rt: paths.fairness_note(name, rt) for rt, _ in suites[name].peers
                 if paths.fairness_note(name, rt).is_file()}
        body = report.suite_body(suites[name], data[name], results_rel, plot_rel, notes, doc)
        text = report.replace_section(text, name, body, suites[name].title)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text)
    log(f"updated {doc} ({', '.join(names)})")
