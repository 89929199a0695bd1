"""The walk suite: trees, count verification, hyperfine timing and strace counts.

Protocol:
  1. (round 1, once) For every shape, saturn's gen-tree (apps/gen-tree) builds
     <repo>/build/walk-trees/<shape> unless a tree with the right expected counts is
     already there (`gen-tree --shape S --expect` against the saved <shape>.expected),
     and `find` must agree with gen-tree's counts.
  2. (every round, every root: the four shapes, then /usr) Each walker runs once and
     its printed `<N> file(s)` / `<M> directories(s)` must equal the expected counts
     (for /usr: `find /usr -mindepth 1 ! -type d | wc -l` and `-type d` + 1, and so the
     walkers agree with each other). A walker that is wrong is recorded as FAILED for
     that root and round and is not timed. Then one hyperfine call times the verified
     walkers (`hyperfine -N --warmup 3 --runs N`), in the round's runtime order; each
     walker's median run time becomes its `wall_s` for the round.
  3. (after the last round) `strace -f -c` counts getdents64, openat (+ openat2), futex and
     sched_yield for each walker on the deep tree (one run each).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from .common import log, run_process, which
from .model import Step, SuiteRun, runtime_order

SHAPES = ("wide", "deep", "balanced", "dense")
ROOT_NAMES = SHAPES + ("usr",)
STRACE_CALLS = ("getdents64", "openat", "openat2", "futex", "sched_yield")
# Counted together: both open a directory (saturn-walk opens with openat2 for RESOLVE_NO_XDEV).
STRACE_FOLD = {"openat2": "openat"}
HYPERFINE_WARMUP = 3


def root_path(run: SuiteRun, name: str) -> Path:
    return Path("/usr") if name == "usr" else run.paths.walk_trees / name


def plan_round(run: SuiteRun, rnd: int) -> list:
    steps = []
    if rnd == 1:
        gen = str(run.paths.saturn("gen-tree"))
        for shape in SHAPES:
            steps.append(Step("walk", "walk-prepare", "", shape, [gen, "--shape", shape],
                              run.threads, est_s=2.0, timeout=900, context={"shape": shape}))
    order = [rt.name for rt in runtime_order(run.runtimes, rnd)]
    n = len(run.runtimes)
    for name in SHAPES if run.params.smoke else ROOT_NAMES:  # smoke: no /usr, no strace
        per_run = 0.3 if name == "usr" else 0.1  # seconds per walk, hot cache
        est = (2.0 if name == "usr" else 0.0) + \
            n * (0.3 + per_run * (HYPERFINE_WARMUP + run.params.runs + 1))
        steps.append(Step("walk", "walk-time", "", name, [], run.threads, est_s=est,
                          timeout=600 + 60 * est, round=rnd,
                          context={"order": order, "root": str(root_path(run, name))}))
    if rnd == run.params.rounds and not run.params.smoke:
        steps.append(Step("walk", "walk-strace", "", "strace-deep", [], run.threads,
                          est_s=3.0 * n, timeout=600, round=rnd,
                          context={"root": str(root_path(run, "deep"))}))
    return steps


# ----------------------------------------------------------------- counts

def format_counts(files: int, dirs: int) -> str:
    return f"{files} file(s)\n{dirs} directories(s)\n"


def parse_counts(text: str) -> tuple[int, int] | None:
    """(files, dirs) from a walker's output, or None when it is not the contract's shape."""
    lines = text.strip().splitlines()
    if len(lines) != 2:
        return None
    try:
        f, fword = lines[0].split()
        d, dword = lines[1].split()
        if fword != "file(s)" or dword != "directories(s)":
            return None
        return int(f), int(d)
    except ValueError:
        return None


def find_counts(root: Path) -> tuple[int, int]:
    """The oracle, in one pass: entries below ROOT that are not directories
    (`find ROOT -mindepth 1 ! -type d`) and directories + 1 (`-type d`, plus ROOT)."""
    out = subprocess.run(["find", str(root), "-mindepth", "1", "-printf", "%y"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"find {root} failed: {out.stderr.strip()[:200]}")
    dirs = out.stdout.count("d")
    return len(out.stdout) - dirs, dirs + 1


def expected_counts(run: SuiteRun, name: str) -> tuple[int, int]:
    if name == "usr":
        return find_counts(Path("/usr"))
    text = (run.paths.walk_trees / f"{name}.expected").read_text()
    counts = parse_counts(text)
    if counts is None:
        raise RuntimeError(f"unreadable {name}.expected; delete {run.paths.walk_trees} and rerun")
    return counts


def prepare_tree(run: SuiteRun, step: Step, log_path: Path) -> str | None:
    """Build one shape's tree if needed and check it with find. Returns an error or None."""
    shape = step.context["shape"]
    gen = step.argv[0]
    root = run.paths.walk_trees / shape
    saved = run.paths.walk_trees / f"{shape}.expected"
    want = run_process([gen, "--shape", shape, "--expect"], timeout=60, log_path=log_path,
                       header=f"walk: expected counts of {shape}")
    if not want.ok or parse_counts(want.stdout) is None:
        return f"gen-tree --expect failed for {shape}"
    if not (root.is_dir() and saved.is_file() and saved.read_text() == want.stdout):
        log(f"walk: generating the {shape} tree under {root}")
        root.parent.mkdir(parents=True, exist_ok=True)
        made = run_process([gen, "--shape", shape, "--force", str(root)], timeout=step.timeout,
                           log_path=log_path, header=f"walk: gen-tree {shape}")
        if not made.ok or made.stdout != want.stdout:
            return f"gen-tree --shape {shape} failed (see the log)"
        saved.write_text(want.stdout)
    if find_counts(root) != parse_counts(want.stdout):
        return f"find disagrees with gen-tree for {shape}: delete {root} and rerun"
    return None


# ----------------------------------------------------------------- timing

def _record(name: str, rt: str, run: SuiteRun, rnd: int, **fields) -> dict:
    rec = {"suite": "walk", "scenario": name, "runtime": rt, "threads": run.threads}
    rec.update(fields)
    rec["round"] = rnd
    return rec


def _failed(name: str, rt: str, run: SuiteRun, rnd: int, reason: str) -> dict:
    return _record(name, rt, run, rnd, failed=True, reason=reason)


def verify_walkers(run: SuiteRun, step: Step, want: tuple, log_path: Path) -> tuple[list, list]:
    """Run each walker once on the root; (verified runtime names, failure records)."""
    ok, failures = [], []
    paths = {rt.name: rt.path for rt in run.runtimes}
    for name in step.context["order"]:
        if run.runtime(name).missing:
            failures.append(_failed(step.job, name, run, step.round, run.runtime(name).missing))
            continue
        res = run_process([str(paths[name]), step.context["root"]], timeout=300,
                          log_path=log_path, header=f"walk: verify {name} on {step.job}")
        got = parse_counts(res.stdout)
        if not res.ok:
            reason = res.error or f"exit {res.returncode}"
        elif got is None:
            reason = f"output is not '<N> file(s) / <M> directories(s)': {res.stdout[:80]!r}"
        elif got != want:
            reason = f"counts {got[0]}/{got[1]} != expected {want[0]}/{want[1]}"
        else:
            ok.append(name)
            continue
        failures.append(_failed(step.job, name, run, step.round, reason))
    return ok, failures


def hyperfine_argv(run: SuiteRun, names: list, root: str, export: Path) -> list:
    paths = {rt.name: rt.path for rt in run.runtimes}
    argv = ["hyperfine", "-N", "--warmup", str(HYPERFINE_WARMUP), "--runs", str(run.params.runs),
            "--style", "none", "--export-json", str(export)]
    for name in names:
        argv += ["-n", name, f"{shlex.quote(str(paths[name]))} {shlex.quote(root)}"]
    return argv


def time_root(run: SuiteRun, step: Step, log_path: Path, scratch: Path) -> list:
    """Verify the walkers on one root, then time the verified ones with hyperfine."""
    try:
        want = expected_counts(run, step.job)
    except (OSError, RuntimeError) as e:
        return [_failed(step.job, rt.name, run, step.round, f"no expected counts: {e}")
                for rt in run.runtimes]
    names, records = verify_walkers(run, step, want, log_path)
    if not names:
        return records
    export = scratch / f"walk-{step.job}-r{step.round}.json"
    export.parent.mkdir(parents=True, exist_ok=True)
    res = run_process(hyperfine_argv(run, names, step.context["root"], export),
                      timeout=step.timeout, log_path=log_path,
                      header=f"walk: hyperfine {step.job} round {step.round}")
    if not res.ok:
        reason = res.error or f"hyperfine exit {res.returncode} (see walk.log)"
        return records + [_failed(step.job, n, run, step.round, reason) for n in names]
    results = {r["command"]: r for r in json.loads(export.read_text())["results"]}
    for name in names:
        r = results[name]
        records.append(_record(step.job, name, run, step.round, wall_s=round(r["median"], 6),
                               wall_s_mean=round(r["mean"], 6), wall_s_min=round(r["min"], 6),
                               wall_s_max=round(r["max"], 6), runs=len(r["times"]),
                               files=want[0], dirs=want[1]))
        if res.other_cpu_pct is not None:
            records[-1]["run_other_cpu_pct"] = res.other_cpu_pct
    return records


# ----------------------------------------------------------------- strace

def parse_strace_summary(text: str) -> dict:
    """{syscall: calls} from `strace -c` output (columns: % time, seconds, usecs/call,
    calls, [errors], syscall)."""
    counts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in STRACE_CALLS and parts[3].isdigit():
            counts[parts[-1]] = int(parts[3])
    return counts


def strace_counts(run: SuiteRun, step: Step, log_path: Path, scratch: Path) -> list:
    """One `strace -f -c` run per walker on the deep tree."""
    if not which("strace"):
        return [_failed("deep", rt.name, run, step.round, "strace is not installed")
                for rt in run.runtimes]
    records = []
    for rt in run.runtimes:
        if rt.missing:
            records.append(_failed("deep", rt.name, run, step.round, rt.missing))
            continue
        out = scratch / f"strace-{rt.name}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        argv = ["strace", "-f", "-c", "-o", str(out), "-e", "trace=" + ",".join(STRACE_CALLS),
                "--", str(rt.path), step.context["root"]]
        res = run_process(argv, timeout=step.timeout, log_path=log_path,
                          header=f"walk: strace {rt.name}")
        if not res.ok or not out.is_file():
            records.append(_failed("deep", rt.name, run, step.round,
                                   res.error or f"strace exit {res.returncode} (see walk.log)"))
            continue
        counts = parse_strace_summary(out.read_text())
        for src, dst in STRACE_FOLD.items():
            counts[dst] = counts.get(dst, 0) + counts.pop(src, 0)
        fields = {f"sys_{c}": counts.get(c, 0) for c in STRACE_CALLS if c not in STRACE_FOLD}
        records.append(_record("deep", rt.name, run, step.round, kind="strace", **fields))
    return records
