"""Run one step and turn what it printed into checked records.

Every record that comes back carries "round". A record with "failed": true (and a
"reason") is kept in the raw JSON Lines as evidence but never enters a statistic:
a run that exits non-zero, times out, prints no JSON line for a scenario it was asked
for, or prints a line that fails its check (checks.py) yields such records.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import httpclient, netrun, pgsuite, rpc, walk
from .checks import check_record
from .common import log, run_process, wait_quiet
from .model import Step, SuiteRun


def failed_record(step: Step, scenario: str, reason: str, base: dict | None = None) -> dict:
    rec = dict(base or {"suite": step.suite, "scenario": scenario, "runtime": step.runtime,
                        "threads": step.threads})
    rec.update({"round": step.round, "failed": True, "reason": reason})
    return rec


def parse_json_lines(text: str) -> tuple[list, list]:
    """(JSON objects, lines that were not JSON objects)."""
    objs, bad = [], []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            objs.append(obj)
        else:
            bad.append(line)
    return objs, bad


def _select(step: Step, objs: list) -> tuple[dict, list]:
    """First line per asked-for scenario; notes about extra or repeated lines."""
    chosen, notes = {}, []
    for obj in objs:
        sc = obj.get("scenario")
        if step.scenarios and sc not in step.scenarios:
            notes.append(f"ignored a line for scenario {sc!r} (not asked for)")
        elif sc in chosen:
            notes.append(f"ignored a repeated line for scenario {sc!r}")
        else:
            chosen[sc] = obj
    return chosen, notes


def records_from_objects(step: Step, objs: list, run_failure: str = "",
                         other_pct: float | None = None,
                         reasons: dict | None = None) -> tuple[list, list]:
    """Checked records for every scenario the step was asked for, plus notes.

    run_failure fails every scenario (the program exited non-zero); reasons fails the
    scenarios it names (netrun: a route check, the load generator, the server died)."""
    chosen, notes = _select(step, objs)
    reasons = reasons or {}
    wanted = list(step.scenarios) or list(chosen)
    if not wanted:
        return [failed_record(step, "?", run_failure or "printed no JSON line")], notes
    records = []
    for sc in wanted + [s for s in chosen if s not in wanted]:
        obj = chosen.get(sc)
        failure = "; ".join(r for r in (run_failure, reasons.get(sc, "")) if r)
        if obj is None:
            records.append(failed_record(step, sc, failure or "printed no JSON line for it"))
            continue
        rec = dict(obj)
        rec["round"] = step.round
        if other_pct is not None:
            rec["run_other_cpu_pct"] = other_pct
        reason = check_record(obj, step.suite, step.runtime, step.context)
        if failure or reason:
            rec.update(failed=True, reason="; ".join(r for r in (failure, reason) if r))
        records.append(rec)
    return records, notes


def records_from_output(step: Step, returncode: int | None, error: str, stdout: str,
                        other_pct: float | None) -> tuple[list, list]:
    """Checked records from what a program printed (its JSON Lines) and how it ended."""
    objs, bad = parse_json_lines(stdout)
    notes = [f"{len(bad)} stdout line(s) were not JSON objects"] if bad else []
    run_failure = error or (f"exit status {returncode}" if returncode != 0 else "")
    records, more = records_from_objects(step, objs, run_failure, other_pct)
    return records, notes + more


def run_program(step: Step, run: SuiteRun, log_path: Path) -> list:
    wait_quiet(run.quiet_wait)
    res = run_process(step.argv, env=step.env, timeout=step.timeout, log_path=log_path,
                      header=f"{step.suite} {step.runtime} {step.job} round {step.round}")
    records, notes = records_from_output(step, res.returncode, res.error, res.stdout,
                                         res.other_cpu_pct)
    for n in notes:
        log(f"  note ({step.runtime} {step.job}): {n}")
    return records


def run_net(step: Step, run: SuiteRun, log_path: Path) -> list:
    """A server step: netrun starts, checks, loads and stops the server."""
    objs, reasons = netrun.run_net(step, run, log_path)
    records, notes = records_from_objects(step, objs, reasons=reasons)
    for n in notes:
        log(f"  note ({step.runtime} {step.job}): {n}")
    return records


def missing_records(step: Step, run: SuiteRun) -> list | None:
    """FAILED records for a step of a peer that was not built; None when it can run."""
    names = [step.runtime] if step.runtime else step.context.get("order", [])
    missing = {n: rt.missing for n in names if (rt := run.runtime(n)) and rt.missing}
    if not missing or step.kind not in ("program", "net", "http-client", "rpc-load", "rpc-cold", "pg"):
        return None
    return [failed_record(step, sc, missing[step.runtime]) for sc in step.scenarios or ("?",)]


def execute(step: Step, run: SuiteRun, out_dir: Path) -> list:
    """Run one step; records (checked, with "round") for the raw JSON Lines."""
    log_path = out_dir / f"{step.suite}.log"
    scratch = out_dir / "scratch"
    missing = missing_records(step, run)
    if missing is not None:
        return missing
    if step.kind == "program":
        return run_program(step, run, log_path)
    if step.kind == "net":
        return run_net(step, run, log_path)
    if step.kind == "http-client":
        return httpclient.run_step(step, run, log_path)
    if step.kind == "pg":
        return pgsuite.run_step(step, run, log_path)
    if step.kind in ("rpc-load", "rpc-cold"):
        objs, reasons = rpc.run_step(step, run, log_path)
        records, notes = records_from_objects(step, objs, reasons=reasons)
        for n in notes:
            log(f"  note ({step.runtime} {step.job}): {n}")
        return records
    if step.kind == "walk-prepare":
        err = walk.prepare_tree(run, step, log_path)
        return [] if err is None else [
            failed_record(step, step.job, err, {"suite": "walk", "scenario": step.job,
                                                 "runtime": rt.name, "threads": step.threads})
            for rt in run.runtimes]
    if step.kind == "walk-time":
        wait_quiet(run.quiet_wait)
        return walk.time_root(run, step, log_path, scratch)
    if step.kind == "walk-strace":
        return walk.strace_counts(run, step, log_path, scratch)
    raise ValueError(f"unknown step kind {step.kind}")
