"""The suites of docs/workloads.md: their programs, peers, parameters and steps.

A *step* is one run of one program (or one hyperfine / strace call for walk). A suite
turns (runtime, configuration) into steps, one per *job*: the whole program (loop,
sched), one scenario (spawn: one process per scenario, so peak RSS is the scenario's
own), one ring rung, one server thread count (echo,
http) or one tree (walk). A round runs every job once for every runtime; within a job
the runtime order alternates between rounds (odd rounds: saturn first, then the peers;
even rounds: the peers in reverse order, then saturn), so no runtime always runs
first or last. Saturn/peer ratios are taken pair by pair within a round.

Saturn's programs take the same flags as the peers: `--threads N --samples N
--warmup N --scenario NAME[,NAME]` (and `N LAPS` first for the ring), print the
contract's JSON Lines on stdout and diagnostics on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .common import Paths, is_executable
from .arena import DB_PROFILES as ARENA_DB_PROFILES, H2_PROFILES as ARENA_H2_PROFILES, PROFILES as ARENA_PROFILE_ORDER
from .model import Params, Runtime, Step, SuiteRun, runtime_order


@dataclass
class Suite:
    """One suite: saturn's program, the peers and how to run and report them."""

    name: str
    title: str
    saturn_bin: str
    peers: tuple  # (runtime name, binary name)
    quick: Params
    full: Params
    scenarios: tuple  # contract order
    make_steps: Callable[[SuiteRun, Runtime], list]
    figures: dict = field(default_factory=dict)  # scenario -> table figures; "*" default
    gate: dict = field(default_factory=dict)  # scenario -> figures the A/B gate uses
    aliases: dict = field(default_factory=dict)  # saturn-only scenario -> peer scenario
    baselines: dict = field(default_factory=dict)  # saturn scenario -> saturn scenario it is compared with
    plan_round: Callable | None = None  # overrides the generic per-job interleaving
    note: str = ""

    @property
    def smoke(self) -> Params:
        """The CI check's parameters: one round of one sample, no warm-up, 1 s loads."""
        q = self.quick
        return replace(q, rounds=1, samples=1, warmup=0, smoke=True,
                       warmup_big=None if q.warmup_big is None else 0,
                       duration=1 if q.duration else 0, runs=1 if q.runs else 0)

    def figures_for(self, scenario: str) -> tuple:
        return self.figures.get(scenario, self.figures.get("*", ()))

    def gate_for(self, scenario: str) -> tuple:
        return self.gate.get(scenario, self.gate.get("*", ()))

    def peer_path(self, paths: Paths, binary: str) -> Path:
        return paths.peer(binary)

    def available_runtimes(self, paths: Paths) -> tuple[list, list]:
        """(runtimes, notes); saturn first. A peer that was not built stays in the list
        with `missing` set: its runs are recorded as FAILED, so its cells say so."""
        saturn = paths.saturn(self.saturn_bin)
        if not is_executable(saturn):
            return [], [f"{self.name}: skipped, {saturn} does not exist yet"]
        runtimes, notes = [Runtime("saturn", saturn)], []
        for name, binary in self.peers:
            p = self.peer_path(paths, binary)
            if is_executable(p):
                runtimes.append(Runtime(name, p))
            else:
                why = f"not built ({p} missing; see {paths.peers / 'build.log'})"
                runtimes.append(Runtime(name, p, missing=why))
                notes.append(f"{self.name}: peer {name} {why}")
        return runtimes, notes


# ----------------------------------------------------------------- step makers

def _common_flags(run: SuiteRun, warmup: int | None = None) -> list:
    w = run.params.warmup if warmup is None else warmup
    return ["--samples", str(run.params.samples), "--warmup", str(w)]


def _program_step(run: SuiteRun, rt: Runtime, job: str, argv: list, scenarios: tuple,
                  per_sample_s: float, threads: int, context: dict | None = None,
                  warmup: int | None = None) -> Step:
    n = run.params.samples + (run.params.warmup if warmup is None else warmup)
    est = 0.3 + per_sample_s * n  # start-up + samples (measured on the 2-CPU dev VM)
    return Step(run.name, "program", rt.name, job, argv, threads, est,
                timeout=max(120.0, 20 * est), scenarios=scenarios, context=context or {})


LOOP_SCENARIOS = ("nop_batched_128", "nop_pingpong", "await_pingpong", "timer_churn",
                  "timer_churn_kernel", "read_4k_fixed_vs_plain", "effect_direct", "effect_veneer",
                  "effect_io", "effect_io_callback")
# Tier C (effects) against the same work written by hand: saturn only, compared within saturn.
LOOP_EFFECT = ("effect_direct", "effect_veneer", "effect_io", "effect_io_callback")
LOOP_SATURN_ONLY = ("await_pingpong", "timer_churn_kernel") + LOOP_EFFECT


def loop_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process for all scenarios; the peer uses the setup saturn uses."""
    argv = [str(rt.path)] + _common_flags(run)
    scenarios = LOOP_SCENARIOS
    if rt.name != "saturn":
        argv += ["--setup", "defer"]  # SINGLE_ISSUER | DEFER_TASKRUN, like saturn's loop
        scenarios = tuple(s for s in LOOP_SCENARIOS if s not in LOOP_SATURN_ONLY)
    return [_program_step(run, rt, "all", argv, scenarios, 8.5, 1)]


SPAWN_SCENARIOS = ("spawn_join_1m", "suspended_100k", "yield_pingpong")
SPAWN_SAMPLE_S = {"spawn_join_1m": 0.25, "suspended_100k": 0.35, "yield_pingpong": 0.6}


def spawn_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process per scenario (clean peak RSS); TBB implements spawn_join_1m only."""
    steps = []
    for sc in SPAWN_SCENARIOS:
        if rt.name == "tbb" and sc != "spawn_join_1m":
            continue
        argv = [str(rt.path), "--threads", str(run.threads)] + _common_flags(run) + \
               ["--scenario", sc]
        steps.append(_program_step(run, rt, sc, argv, (sc,), SPAWN_SAMPLE_S[sc], run.threads))
    return steps


FORKJOIN_SCENARIOS = ("tree_sum_4m", "quicksort_10m", "matmul_512")
FORKJOIN_SAMPLE_S = 1.3  # the three scenarios, one sample each, at 1 thread (2-CPU dev VM, Go the slowest)


def forkjoin_threads(run: SuiteRun) -> list:
    """The contract's 1 and 2 threads (only the configured count in the smoke check)."""
    return [run.threads] if run.params.smoke else sorted({1, 2, run.threads})


def forkjoin_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process per thread count, all three scenarios in it."""
    steps = []
    for t in forkjoin_threads(run):
        argv = [str(rt.path), "--threads", str(t)] + _common_flags(run)
        steps.append(_program_step(run, rt, f"threads={t}", argv, FORKJOIN_SCENARIOS,
                                   FORKJOIN_SAMPLE_S, t))
    return steps


SCHED_SCENARIOS = ("flood_1m", "contended_spawn_8x", "cpu_work_10us", "cpu_work_100us",
                   "contended_cpu_10us", "nested_fanout_4x", "burst_drain_burst",
                   "mixed_fast_slow")


def sched_steps(run: SuiteRun, rt: Runtime) -> list:
    argv = [str(rt.path), "--threads", str(run.threads)] + _common_flags(run)
    return [_program_step(run, rt, "all", argv, SCHED_SCENARIOS, 1.4, run.threads)]


PROCESS_SCENARIOS = ("spawn_wait", "spawn_wait_poll", "spawn_wait_posix_spawn")


def process_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process for all scenarios; spawn_wait_poll (saturn's fallback wait) and
    spawn_wait_posix_spawn (its fallback spawn) are saturn's own."""
    children = run.params.children or 10_000  # unset (0): the contract's 10,000
    argv = [str(rt.path), "--threads", str(run.threads), "--children", str(children)] + _common_flags(run)
    scenarios = PROCESS_SCENARIOS if rt.name == "saturn" else ("spawn_wait",)
    # 10,000 children of /bin/true: 5-15 s on the 2-CPU dev VM (700-2,000 a second).
    return [_program_step(run, rt, "all", argv, scenarios, children / 1000 * len(scenarios), run.threads)]


OBSERVE_SCENARIOS = ("dump_1m", "stall_50ms", "stall_polite")


def observe_steps(run: SuiteRun, rt: Runtime) -> list:
    """saturn only (what observing a pool costs: issue #31's targets); one process. The
    dump sample spawns and dumps 1,000,000 tasks (~1.5 s on the 2-CPU dev VM), the stall
    samples are 50 ms and 300 ms."""
    argv = [str(rt.path)] + _common_flags(run)
    return [_program_step(run, rt, "all", argv, OBSERVE_SCENARIOS, 2.5, 2)]


RING_LADDER = ((1000, 10), (10000, 10), (100000, 10), (1000000, 1))
RING_SAMPLE_S = {1000: 0.05, 10000: 0.1, 100000: 0.7, 1000000: 3.5}


def ring_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process per rung; every rung always runs (quick mode: no warm-up on 1M, whose
    sample alone takes seconds and gigabytes)."""
    steps = []
    for n, laps in RING_LADDER[:2] if run.params.smoke else RING_LADDER:
        warmup = run.params.warmup_big if n >= 1000000 else None
        argv = [str(rt.path), str(n), str(laps), "--threads", str(run.threads)] + \
            _common_flags(run, warmup)
        sc = f"ring_{n}_{laps}"
        step = _program_step(run, rt, sc, argv, (sc,), RING_SAMPLE_S[n], run.threads,
                             {"procs": n, "laps": laps}, warmup)
        step.est_s += 1.5 if rt.name == "erlang" and n >= 1000000 else 0.0  # stop wave
        step.est_s += 0.5 if rt.name == "erlang" else 0.0  # BEAM start-up
        steps.append(step)
    return steps


def net_threads(run: SuiteRun) -> list:
    """Server thread counts: 1 and all CPUs (1 and 2 on a 2-CPU machine); the smoke
    check runs only the all-CPU one."""
    return [run.threads] if run.params.smoke else sorted({1, run.threads})


ECHO_PROFILES = ("many-small", "few-large", "single")


def _net_step(run: SuiteRun, rt: Runtime, threads: int, scenarios: tuple, context: dict) -> Step:
    """netrun.py starts the server on 127.0.0.1, checks it, loads it per scenario, stops it."""
    # per scenario: the quiet check (>= 0.5 s), connecting / route checks, warm-up, samples
    per = 0.7 + run.params.warmup + run.params.duration * run.params.samples
    est = 0.5 + len(scenarios) * per
    return Step(run.name, "net", rt.name, f"threads={threads}", [str(rt.path)], threads, est,
                timeout=0, scenarios=scenarios, context=context)


def echo_steps(run: SuiteRun, rt: Runtime) -> list:
    return [_net_step(run, rt, t, ECHO_PROFILES, {}) for t in net_threads(run)]


HTTP_SCENARIOS = ("plaintext", "json", "delay")
HTTP_DELAY_MS = 10  # the workload's delay/10


def http_steps(run: SuiteRun, rt: Runtime) -> list:
    """nginx cannot serve /delay/{ms} (stock nginx has no way to wait): not asked for it."""
    scenarios = HTTP_SCENARIOS if rt.name != "nginx" else ("plaintext", "json")
    return [_net_step(run, rt, t, scenarios, {"delay_ms": HTTP_DELAY_MS})
            for t in net_threads(run)]


TLS_CERTS = ("ecdsa", "rsa")
TLS_SCENARIOS = ("handshake_full_ecdsa", "handshake_resumed_ecdsa", "bulk",
                 "handshake_full_rsa", "handshake_resumed_rsa",
                 "https_full_ecdsa", "https_resumed_ecdsa", "https_bulk", "https_full_rsa", "https_resumed_rsa")
# The https_* scenarios: the handshake scenarios with one small HTTPS request instead of
# the 64-byte echo (tls-load --proto http), for servers with no echo (nginx). saturn runs
# them with saturn-arena's TLS listener, so nginx is compared with saturn's HTTPS server
# doing the same exchange, never with an echo server.
TLS_HTTPS_SCENARIOS = tuple(sc for sc in TLS_SCENARIOS if sc.startswith("https_"))
TLS_HTTP_ONLY = ("nginx",)  # peers with no echo: https_* only
TLS_ECHO_ONLY = ("go", "node", "beast")  # echo servers with no HTTP route: no https_*


def tls_steps(run: SuiteRun, rt: Runtime) -> list:
    """One server per certificate kind and protocol (all CPUs, shared with tls-load); bulk
    and https_bulk run with the ECDSA one only (the record cipher does not depend on the
    certificate).
    saturn's https_* scenarios run on saturn-arena (context "proto": "http")."""
    steps = []
    for proto in ("echo", "http"):
        if (proto == "echo" and rt.name in TLS_HTTP_ONLY) or (proto == "http" and rt.name in TLS_ECHO_ONLY):
            continue
        for kind in TLS_CERTS:
            if proto == "http":
                scenarios = tuple(sc for sc in TLS_HTTPS_SCENARIOS if sc.endswith("_" + kind) or (
                    sc == "https_bulk" and kind == "ecdsa"))
            else:
                scenarios = tuple(sc for sc in TLS_SCENARIOS if not sc.startswith("https_") and (
                    sc.endswith("_" + kind) or (sc == "bulk" and kind == "ecdsa")))
            if rt.name == "node":
                # Node's TLS 1.3 tickets are single-use and a resumed connection gets no new
                # one, so a client resumes every other connection at best (bench/peers/tls/node).
                scenarios = tuple(sc for sc in scenarios if "_resumed_" not in sc)
            if run.only:
                scenarios = tuple(sc for sc in scenarios if sc in run.only)
            if not scenarios:
                continue
            path = rt.path
            if proto == "http" and rt.name == "saturn":
                path = run.paths.saturn("saturn-arena")
            per = 0.7 + run.params.warmup + run.params.duration * run.params.samples
            est = 1.0 + len(scenarios) * per
            steps.append(Step(run.name, "net", rt.name, f"cert={kind} proto={proto}", [str(path)], run.threads,
                              est, timeout=0, scenarios=scenarios, context={"cert": kind, "proto": proto}))
    return steps


# What each arena peer serves (bench/peers/arena/*/README.md says why not the rest).
ARENA_PROFILES = {
    **{rt: ARENA_PROFILE_ORDER for rt in ("saturn", "go")},
    # Node and Beast are HTTP/1.1 peers here (no HTTP/2 server written for them), and
    # have no database routes yet (async-db and crud: saturn and Go).
    **{rt: tuple(p for p in ARENA_PROFILE_ORDER if p not in ARENA_H2_PROFILES + ARENA_DB_PROFILES)
       for rt in ("node", "beast")},
    # hyper closes after a request with Connection: close but does not say so in its
    # answer (RFC 9112 §9.6: SHOULD), so wrk would write the next request into the closed
    # connection: limited-conn cannot be measured for it with wrk.
    # HTTP/2: h2c only (hyper's http2_only server); no TLS crate for baseline-h2 / static-h2.
    "hyper": ("baseline", "pipelined", "json", "upload", "baseline-h2c", "json-h2c"),
    "nginx": ("static",),
    # h2o serves files only (no mruby handler written): static, and static-h2 on its TLS
    # port (h2 by ALPN) — bench/peers/arena/h2o/README.md.
    "h2o": ("static", "static-h2"),
}


def arena_steps(run: SuiteRun, rt: Runtime) -> list:
    """One step per runtime with every profile it serves (a fresh server per profile,
    scripts/bench_lib/arena.py); --threads 2, unpinned, sharing the CPUs with wrk."""
    profiles = tuple(pr for pr in run.suite.scenarios if pr in ARENA_PROFILES.get(rt.name, ())
                     and (not run.only or pr in run.only))
    if not profiles:
        return []
    per = 1.5 + run.params.warmup + run.params.duration * run.params.samples
    return [Step(run.name, "net", rt.name, "arena", [str(rt.path)], run.threads,
                 1.0 + len(profiles) * per, timeout=0, scenarios=profiles)]


def http_client_steps(run: SuiteRun, rt: Runtime) -> list:
    """One run per runtime per round against a fresh nginx (scripts/bench_lib/httpclient.py):
    64 concurrent GETs for `duration` seconds on --threads client threads."""
    from .httpclient import SCENARIO
    return [Step(run.name, "http-client", rt.name, SCENARIO, [str(rt.path)], run.threads,
                 1.0 + run.params.duration, timeout=run.params.duration + 30, scenarios=(SCENARIO,))]


def pg_steps(run: SuiteRun, rt: Runtime) -> list:
    """One process per runtime per round with the three scenarios, against the runner's
    shared PostgreSQL (scripts/bench_lib/pgsuite.py adds --url)."""
    from .pgsuite import SCENARIOS
    n = run.params.samples + run.params.warmup
    # per sample of the three scenarios: ~1.2 s (saturn, tokio, asyncpg), ~3.5 s (node)
    est = 1.0 + n * (3.5 if rt.name == "node" else 1.5)
    argv = [str(rt.path), "--threads", str(run.threads)] + _common_flags(run)
    return [Step(run.name, "pg", rt.name, "all", argv, run.threads, est, timeout=max(120.0, 10 * est),
                 scenarios=SCENARIOS)]


from .rpc import SCENARIOS as RPC_SCENARIOS  # noqa: E402


def _rpc_steps(run: SuiteRun, rt: Runtime) -> list:
    """A fresh server for the load (unary, then half of its rate), one for each of the
    cold starts, and the in-process program (scripts/bench_lib/rpc.py)."""
    from .rpc import rpc_steps
    return rpc_steps(run, rt)


# ----------------------------------------------------------------- interleaving

def generic_plan_round(run: SuiteRun, rnd: int) -> list:
    """Every job once per runtime, runtimes interleaved within each job."""
    per_rt = {rt.name: run.suite.make_steps(run, rt) for rt in run.runtimes}
    jobs: list = []
    for steps in per_rt.values():
        for s in steps:
            if s.job not in jobs:
                jobs.append(s.job)
    plan = []
    for job in jobs:
        for rt in runtime_order(run.runtimes, rnd):
            for s in per_rt[rt.name]:
                if s.job == job:
                    plan.append(replace(s, round=rnd))
    return plan


def plan_round(run: SuiteRun, rnd: int) -> list:
    fn = run.suite.plan_round or generic_plan_round
    return fn(run, rnd)


# ----------------------------------------------------------------- the table

def _walk_steps(run: SuiteRun, rt: Runtime) -> list:
    return []  # walk plans whole rounds itself (walk.plan_round)


def _make_suites() -> dict:
    from . import walk  # late import: walk imports this module

    pct = ("ops_per_sec", "p50_us", "p99_us")
    suites = [
        Suite("loop", "loop — event-loop floor (against raw liburing)", "saturn-bench-loop",
              (("liburing", "loop-liburing"),),
              quick=Params(rounds=2, samples=1, warmup=1), full=Params(rounds=10, samples=3, warmup=1),
              scenarios=LOOP_SCENARIOS, make_steps=loop_steps,
              figures={"nop_batched_128": ("ops_per_sec", "ns_per_op"),
                       "nop_pingpong": ("ns_per_op",), "await_pingpong": ("ns_per_op",),
                       "timer_churn": ("ns_per_timer",), "timer_churn_kernel": ("ns_per_timer",),
                       "read_4k_fixed_vs_plain": ("ns_per_op_fixed", "ns_per_op_plain"),
                       "effect_direct": ("ns_per_eval",), "effect_veneer": ("ns_per_eval",),
                       "effect_io": ("ns_per_op",), "effect_io_callback": ("ns_per_op",)},
              gate={"nop_batched_128": ("ops_per_sec",), "nop_pingpong": ("ns_per_op",),
                    "await_pingpong": ("ns_per_op",), "timer_churn": ("ns_per_timer",),
                    "timer_churn_kernel": ("ns_per_timer",),
                    "read_4k_fixed_vs_plain": ("ns_per_op_fixed", "ns_per_op_plain"),
                    "effect_veneer": ("ns_per_eval",), "effect_io": ("ns_per_op",)},
              aliases={"await_pingpong": "nop_pingpong", "timer_churn_kernel": "timer_churn"},
              baselines={"effect_veneer": "effect_direct", "effect_io": "effect_io_callback"},
              note="One thread, one ring. The peer runs with `--setup defer` "
                   "(SINGLE_ISSUER | DEFER_TASKRUN), the setup saturn uses. await_pingpong "
                   "and timer_churn_kernel (one kernel timeout per timer, through saturn's "
                   "loop) exist only for saturn; their ratios are against liburing's "
                   "nop_pingpong and timer_churn, the raw floor. The effect_* scenarios (tier C) "
                   "are saturn only and compared within saturn: effect_veneer (a three-node "
                   "map chain through the effect types) with effect_direct (the same written "
                   "directly), effect_io (a chain with one nop leaf) with effect_io_callback "
                   "(the same through tier A); see \"Within saturn\" below the table."),
        Suite("spawn", "spawn — lightweight task cost", "saturn-bench-spawn",
              (("tokio", "spawn-tokio"), ("go", "spawn-go"), ("tbb", "spawn-tbb")),
              quick=Params(rounds=2, samples=1, warmup=1), full=Params(rounds=10, samples=3, warmup=1),
              scenarios=SPAWN_SCENARIOS, make_steps=spawn_steps,
              figures={"spawn_join_1m": ("ns_per_task", "peak_rss_kib"),
                       "suspended_100k": ("bytes_per_task",), "yield_pingpong": ("ns_per_switch",)},
              gate={"spawn_join_1m": ("ns_per_task",), "suspended_100k": ("bytes_per_task",),
                    "yield_pingpong": ("ns_per_switch",)},
              note="Each scenario runs in its own process (clean peak RSS). TBB implements "
                   "spawn_join_1m only."),
        Suite("forkjoin", "forkjoin — recursive fork-join (join of two branches)", "saturn-bench-forkjoin",
              (("rayon", "forkjoin-rayon"), ("tbb", "forkjoin-tbb"), ("tokio", "forkjoin-tokio"),
               ("go", "forkjoin-go")),
              quick=Params(rounds=2, samples=1, warmup=1), full=Params(rounds=10, samples=3, warmup=1),
              scenarios=FORKJOIN_SCENARIOS, make_steps=forkjoin_steps,
              figures={"*": ("ns_per_task", "wall_s")}, gate={"*": ("ns_per_task",)},
              note="At 1 and 2 threads. A task is one branch of a join (tasks = 2 x joins). "
                   "saturn: saturn::join on a thread_pool (io mode); rayon: rayon::join; oneTBB: "
                   "task_group run + wait; Tokio: tokio::spawn of the second branch, the first "
                   "awaited inline, then the JoinHandle; Go: a goroutine and a WaitGroup. The C++ "
                   "sides share the workload code (bench/peers/common/cxx/forkjoin_work.hpp, -O3); "
                   "Rust and Go run translations of it, so quicksort_10m and matmul_512 (whose "
                   "leaves dominate) also compare compilers. Every sample's checksum is checked "
                   "against a sequential reference inside each program."),
        Suite("process", "process — child processes (spawn and wait)", "saturn-bench-process",
              (("tokio", "process-tokio"),),
              # quick: one sample of 4,000 children, no warm-up sample (10,000 and a
              # warm-up sample made the suite 4.5 of make bench's 35 minutes at ~700
              # children/s); --full keeps 10,000 and a warm-up.
              quick=Params(rounds=2, samples=1, warmup=0, children=4000),
              full=Params(rounds=5, samples=3, warmup=1, children=10_000),
              scenarios=PROCESS_SCENARIOS, make_steps=process_steps,
              figures={"*": ("ops_per_sec", "cpu_us_per_child")}, gate={"*": ("ops_per_sec",)},
              aliases={"spawn_wait_poll": "spawn_wait", "spawn_wait_posix_spawn": "spawn_wait"},
              note="4,000 children of /bin/true per sample in make bench (10,000 with --full), "
                   "64 in flight; Tokio's side is "
                   "tokio::process::Command::status(). Every sample checks that no zombie and no "
                   "child is left. spawn_wait_poll is saturn's fallback wait (ring poll on the "
                   "pidfd, then waitid) and spawn_wait_posix_spawn saturn's fallback spawn "
                   "(posix_spawn + pidfd_open instead of clone3); their ratios are against "
                   "Tokio's spawn_wait. "
                   "`CPU µs/child` is the benchmark process's own CPU, children excluded."),
        Suite("observe", "observe — task dump and stall detector (saturn only)", "saturn-bench-observe",
              (),
              quick=Params(rounds=1, samples=3, warmup=1), full=Params(rounds=3, samples=5, warmup=1),
              scenarios=OBSERVE_SCENARIOS, make_steps=observe_steps,
              figures={"dump_1m": ("wall_s", "longest_pause_ms"), "stall_50ms": ("report_late_ms", "max_late_ms"),
                       "stall_polite": ("reports",)},
              gate={"dump_1m": ("wall_s", "longest_pause_ms"), "stall_50ms": ("report_late_ms",)},
              note="No peer: issue #31's targets for saturn's own observability. dump_1m: "
                   "1,000,000 tasks suspended on one event (2 workers), then one "
                   "dump_tasks() that must find every one of them (target: ≤ 1 s, no pause of "
                   "the workers over 10 ms). stall_50ms: a 50 ms busy loop under a stall "
                   "detector with a 10 ms threshold; `report late ms` is when the one report "
                   "came, after the threshold (target: ≤ 20 ms). stall_polite: a task that "
                   "yields every 1 ms for 300 ms; any report fails the run."),
        Suite("sched", "sched — thread-pool scenario matrix", "saturn-bench-sched",
              (("tokio", "sched-tokio"), ("go", "sched-go"), ("tbb", "sched-tbb")),
              quick=Params(rounds=2, samples=1, warmup=1), full=Params(rounds=10, samples=3, warmup=1),
              scenarios=SCHED_SCENARIOS, make_steps=sched_steps,
              figures={"*": pct}, gate={"*": ("ops_per_sec",)},
              note="Latencies are completion − submit over every task of the median sample."),
        Suite("ring", "ring — process ring (Erlang style)", "saturn-bench-ring",
              (("erlang", "ring-erlang"), ("go", "ring-go")),
              quick=Params(rounds=2, samples=1, warmup=1, warmup_big=0),
              full=Params(rounds=5, samples=3, warmup=1),
              scenarios=tuple(f"ring_{n}_{l}" for n, l in RING_LADDER), make_steps=ring_steps,
              figures={"*": ("hops_per_sec", "spawn_ns_per_proc", "peak_rss_kib")},
              gate={"*": ("hops_per_sec", "spawn_ns_per_proc")},
              note="Every rung of the ladder runs in its own process."),
        Suite("walk", "walk — parallel directory walk", "saturn-walk",
              (("rayon", "walk-rayon"), ("go", "walk-go")),
              quick=Params(rounds=2, runs=3), full=Params(rounds=5, runs=10),
              scenarios=walk.ROOT_NAMES, make_steps=_walk_steps, plan_round=walk.plan_round,
              figures={"*": ("wall_s",)}, gate={"*": ("wall_s",)},
              note="Whole process, hot cache: `hyperfine -N --warmup 3`, median of the runs "
                   "of a round; every walker's printed counts are checked against gen-tree's "
                   "(for /usr: against `find` and each other) before it is timed."),
        Suite("echo", "echo — TCP echo", "saturn-echo",
              (("asio", "echo-asio"), ("libuv", "echo-libuv"), ("tokio", "echo-tokio"),
               ("go", "echo-go")),
              quick=Params(rounds=2, samples=1, warmup=1, duration=1),
              full=Params(rounds=5, samples=1, warmup=1, duration=5),
              scenarios=ECHO_PROFILES, make_steps=echo_steps,
              figures={"*": ("msgs_per_sec", "p50_us", "p99_us", "p999_us",
                             "server_cpu_us_per_msg")},
              gate={"*": ("msgs_per_sec", "server_cpu_us_per_msg")},
              note="Server and echo-load (bench/peers/load, checks every byte) share the "
                   "machine's CPUs on loopback (scripts/bench_lib/netrun.py). With 1 server "
                   "thread the server is pinned to one CPU and the load generator to the other. "
                   "`server CPU µs/msg` is the most direct efficiency figure."),
        Suite("http", "http — HTTP/1.1 server", "saturn-http",
              (("asio", "http-asio"), ("go", "http-go"), ("hyper", "http-hyper"),
               ("node", "http-node"), ("nginx", "http-nginx")),
              quick=Params(rounds=2, samples=1, warmup=1, duration=1),
              full=Params(rounds=5, samples=1, warmup=1, duration=5),
              scenarios=HTTP_SCENARIOS, make_steps=http_steps,
              figures={"*": ("rps", "p50_us", "p99_us", "server_cpu_us_per_req"),
                       "delay": ("rps", "p50_us", "p99_us", "min_us", "server_cpu_us_per_req")},
              gate={"*": ("rps", "server_cpu_us_per_req")},
              note="wrk on loopback (scripts/bench_lib/netrun.py, scripts in bench/peers/wrk); "
                   "every route is checked once before the load (status, headers, body, 404, "
                   "/delay/10 not early) and a result counts only with 0 socket errors and 0 "
                   "non-2xx. nginx cannot serve /delay. Plaintext latency percentiles are per "
                   "pipelined batch (wrk), indicative only. `fastest µs` is wrk's fastest "
                   "response; a delay/10 run whose fastest response took less than 10 ms "
                   "answered early and counts as FAILED, whichever server it was."),
        Suite("tls", "tls — TLS handshakes and bulk transfer", "saturn-echo",
              (("go", "tls-go"), ("node", "tls-node"), ("beast", "tls-beast"), ("nginx", "tls-nginx")),
              quick=Params(rounds=2, samples=1, warmup=1, duration=1),
              full=Params(rounds=5, samples=3, warmup=1, duration=2),
              scenarios=TLS_SCENARIOS, make_steps=tls_steps,
              figures={"*": ("conns_per_sec", "server_cpu_us_per_op"),
                       "bulk": ("mb_per_sec", "server_cpu_us_per_mib"),
                       "https_bulk": ("mb_per_sec", "server_cpu_us_per_mib")},
              gate={"*": ("conns_per_sec", "server_cpu_us_per_op"), "bulk": ("mb_per_sec",),
                    "https_bulk": ("mb_per_sec",)},
              note="TLS echo servers (saturn-echo --tls, Go crypto/tls, Node tls, Boost.Beast ssl_stream) with a "
                   "self-signed RSA-2048 or ECDSA P-256 certificate; tls-load (bench/peers/load, "
                   "OpenSSL) makes sequential connections on 2 threads — a full handshake (or a "
                   "resumed one), a 64-byte echo checked, close_notify — and, for bulk, sends "
                   "256 MiB over one connection in 16 KiB records (TLS_AES_128_GCM_SHA256) while "
                   "checking the echo. The `https_*` rows are the same handshakes with one small "
                   "HTTPS GET (`/baseline11`, answer \"2\") instead of the echo, for nginx (no echo) "
                   "and saturn's HTTPS server (saturn-arena's TLS listener): nginx is compared only "
                   "there. `https_bulk` is the HTTPS download of the same 256 MiB: GET of a "
                   "16 MiB file (/static/bulk.bin, the bulk pattern) again and again on one "
                   "keep-alive connection, every byte checked, from nginx (its defaults) and "
                   "saturn-arena's static files, TLS_AES_128_GCM_SHA256. Server and load share the machine's CPUs. Node is not asked "
                   "for resumed handshakes: its TLS 1.3 tickets are single-use and it sends no new "
                   "one on a resumed connection. "
                   "`server CPU µs/handshake` is the efficiency figure."),
        Suite("arena", "arena — HttpArena's HTTP/1.1 profiles, json-tls and HTTP/2", "saturn-arena",
              (("go", "arena-go"), ("node", "arena-node"), ("beast", "arena-beast"),
               ("hyper", "arena-hyper"), ("nginx", "arena-nginx"), ("h2o", "arena-h2o")),
              quick=Params(rounds=2, samples=1, warmup=1, duration=1),
              full=Params(rounds=5, samples=1, warmup=1, duration=5),
              scenarios=ARENA_PROFILE_ORDER,
              make_steps=arena_steps,
              figures={"*": ("rps", "p50_us", "p99_us", "server_cpu_us_per_req",
                             "server_user_us_per_req", "server_sys_us_per_req", "peak_rss_kib"),
                       "json-comp": ("rps", "bytes_per_resp", "p99_us", "server_cpu_us_per_req",
                                     "server_user_us_per_req", "peak_rss_kib"),
                       "upload": ("rps", "mb_per_sec", "server_cpu_us_per_req",
                                  "server_user_us_per_req", "peak_rss_kib"),
                       "static": ("rps", "mb_per_sec", "p99_us", "server_cpu_us_per_req",
                                  "server_user_us_per_req", "peak_rss_kib"),
                       # h2load prints no latency percentiles: rps and CPU only.
                       **{pr: ("rps", "server_cpu_us_per_req", "server_user_us_per_req",
                               "server_sys_us_per_req", "peak_rss_kib")
                          for pr in ("baseline-h2c", "json-h2c", "baseline-h2")},
                       "static-h2": ("rps", "mb_per_sec", "server_cpu_us_per_req",
                                     "server_user_us_per_req", "peak_rss_kib"),
                       "echo-ws": ("msgs_per_sec", "p50_us", "p99_us", "server_cpu_us_per_req",
                                   "server_user_us_per_req", "server_sys_us_per_req", "peak_rss_kib")},
              gate={"*": ("rps", "server_cpu_us_per_req", "server_user_us_per_req"),
                    "echo-ws": ("msgs_per_sec", "server_cpu_us_per_req", "server_user_us_per_req")},
              note="HttpArena's profiles (docs/arena.md) under wrk with bench/peers/wrk/arena.lua, "
                   "a fresh server per profile, --threads 2, server and wrk sharing the 2 CPUs. "
                   "Before the load every answer of the profile is checked (sums, pipelined order, "
                   "JSON totals, compressed bodies decoded, upload counts, all 20 static files byte "
                   "for byte, ALPN http/1.1 on the TLS port); a run counts only with 0 socket errors "
                   "and 0 non-2xx. Connections: 512 (baseline, pipelined ×16, limited-conn, json, "
                   "json-comp, json-tls), 1024 (static), 32 (upload, 2 MiB bodies). limited-conn "
                   "sends Connection: close on every 10th request (wrk reconnects). CPU is the "
                   "server's whole process tree, split into user and system time; peak RSS is the "
                   "tree's summed VmHWM. nginx and h2o serve static only; hyper no compression, "
                   "static, TLS or limited-conn (each README says why). echo-ws: ws-load (bench/peers/load/ws_load.c, "
                   "epoll, plain C), 512 connections with one 5-byte text frame in flight each, every echo "
                   "checked; its CPU figures are per message. HTTP/2 profiles: h2load (nghttp2 1.52, "
                   "2 threads, timed -D), HttpArena's smallest connection count — 256 (baseline-h2c, "
                   "baseline-h2, static-h2), 1024 (json-h2c) — and its streams per connection, "
                   "-m 100 (baseline-h2c, baseline-h2) or -m 32 (json-h2c, static-h2); h2c by prior "
                   "knowledge on a cleartext port that must refuse HTTP/1.1, h2 by ALPN over TLS "
                   "(RSA-2048). json-h2c rotates HttpArena's seven /json URIs (-i), static-h2 the 20 "
                   "files with Accept-Encoding: br;q=1, gzip;q=0.8. Before the load curl checks every "
                   "answer over HTTP/2 (sums, JSON totals, all 20 files decoded byte for byte, 404); a "
                   "run counts only if h2load negotiated h2/h2c with 0 failed/errored/timed-out and "
                   "0 non-2xx. h2load reports no percentiles; req/s is h2load's own (succeeded requests over the -D window, as HttpArena reads it). When h2load 1.52 has stopped every client but does not exit (a few stray connections keep sending, seen against Go's TLS port), the runner closes those connections 0.5 s later with ss -K and keeps a note (`unstuck`) in the record; the counts were final at the stop. HTTP/2 peers: Go (net/http's h2 over TLS, "
                   "golang.org/x/net/http2/h2c, defaults) on every h2 profile; hyper 0.14 (http2_only, "
                   "defaults) on baseline-h2c and json-h2c (no TLS crate in Debian's registry); h2o 2.2.5 on static-h2 "
                   "only (file handler, file.send-compressed; h2o 2.2.5 ignores `br;q=1`-style entries, "
                   "so it sends identity bodies, ~4.7× the bytes); Node and Beast serve no "
                   "HTTP/2 here. make bench-smoke loads the h2 profiles with 32 connections."),
        Suite("http-client", "http-client — HTTP/1.1 client, keep-alive pool", "saturn-bench-http_client",
              (("go", "http_client-go"), ("hyper", "http_client-hyper"), ("curl", "http_client-curl")),
              quick=Params(rounds=2, samples=1, warmup=0, duration=3),
              full=Params(rounds=7, samples=1, warmup=0, duration=10),
              scenarios=("get_keepalive_64",), make_steps=http_client_steps,
              figures={"*": ("ops_per_sec", "cpu_us_per_req")},
              gate={"*": ("ops_per_sec", "cpu_us_per_req")},
              note="64 concurrent GETs over a keep-alive pool (up to 64 connections) against "
                   "nginx (1 worker, `return 200 \"Hello, World!\"`, a fresh one per run, "
                   "scripts/bench_lib/httpclient.py); each client checks every answer (status 200, "
                   "exact body) and its count is checked against nginx's stub_status counter. "
                   "--threads client threads; client and nginx share the machine's CPUs, so rps "
                   "is bounded by what CPU nginx gets: `client CPU µs/req` (the client process's "
                   "user+sys over the run, getrusage) is the cleaner figure. Peers: Go net/http, "
                   "hyper 0.14's Client, libcurl's multi interface (bench/peers/http_client)."),
        Suite("rpc", "rpc — unary gRPC over h2c, half-load latency, cold start, in-process calls",
              "saturn-arena", (("go", "rpc-go"), ("grpcpp", "rpc-grpcpp")),
              quick=Params(rounds=2, samples=1, warmup=1, duration=2),
              full=Params(rounds=5, samples=1, warmup=1, duration=5),
              scenarios=RPC_SCENARIOS, make_steps=_rpc_steps,
              figures={"unary": ("rps", "calls_per_cpu_s", "server_cpu_us_per_req"),
                       "unary_half_load": ("rps", "p50_us", "p99_us", "p999_us"),
                       "cold_start": ("cold_start_ms", "client_ms"),
                       "inproc_unary": ("ns_per_call", "cpu_ns_per_call"),
                       "inproc_unary_ctx": ("ns_per_call", "cpu_ns_per_call")},
              gate={"unary": ("calls_per_cpu_s",), "unary_half_load": ("p99_us",),
                    "cold_start": ("cold_start_ms",), "inproc_unary": ("ns_per_call",),
                    "inproc_unary_ctx": ("ns_per_call",)},
              aliases={"inproc_unary_ctx": "inproc_unary"},
              note="HttpArena's unary-grpc (benchmark.BenchmarkService/GetSum) over h2c prior "
                   "knowledge (scripts/bench_lib/rpc.py). Servers: saturn-arena, grpc-go 1.33 "
                   "(Debian's golang-google-grpc-dev, grpc.NewServer() defaults, GOMAXPROCS 2) and "
                   "libgrpc++ 1.51's async completion-queue server (2 queues, 2 polling threads, 64 "
                   "calls armed per queue), each --threads 2, sharing the 2 CPUs with h2load. Before "
                   "and after each load, 1,000 GetSum calls with random operands (python3-grpcio) must "
                   "all return grpc-status 0 and a + b, and Health/Check SERVING. unary: h2load -c 16 "
                   "-m 100 -t 1 with HttpArena's pre-encoded 9-byte request (a=1, b=2); a run counts "
                   "only with 0 failed/errored streams, no non-2xx answer and 7 DATA bytes per answer "
                   "(SumReply{3}; only streams still open at the end may add to the count; h2load "
                   "reads no trailers, so grpc-status is counted by the checks around the load); "
                   "`calls/server CPU-s` = answers / the server's user+system CPU "
                   "seconds (/proc/<pid>/stat), the efficiency figure. unary_half_load: rpc-load "
                   "(bench/peers/load/rpc_load.c: epoll + nghttp2, 16 connections, ≤ 100 open calls "
                   "each) on an even schedule, call i due at start + i/R and timed from when it was due "
                   "(queueing counted), at R = half of the highest rate the same server sustains on that "
                   "schedule (found from a fifth of its unary rps up by √2 a step; sustained = every answer "
                   "good, ≥ 97 % answered, p99 ≤ 10 ms), median of the samples by p99; `target req/s` is "
                   "R. h2load --rps is not used for it: its pacer fires at most every 10 ms and sends "
                   "bursts (~600 calls at once at 60 k/s), so it timed burst draining. cold_start: "
                   "fork/exec of the server to the first Health/Check SERVING (python3-h2 client "
                   "polling every 200 µs), median of 10; `client's own ms` is that client's connect "
                   "+ Check against a warm server, included in the figure (fork/exec itself is Python's "
                   "subprocess.Popen); each server is linked the way it ships: saturn-arena with its "
                   "libraries static (libc shared; README's SATURN_STATIC_PROGRAMS), grpc-go static as Go "
                   "links, libgrpc++ against Debian's shared libraries. inproc_unary: "
                   "saturn's grpc::local_method (co_await sum(in, out), 10 M calls, checksummed) "
                   "against libgrpc++'s InProcessChannel with a synchronous stub (serializes, "
                   "crosses to the server's threads); inproc_unary_ctx passes the caller's "
                   "call_context (one coroutine frame less). `CPU ns/call` (saturn only) is the "
                   "calling thread's own CPU time per call: on a busy machine wall time also counts "
                   "other processes' time slices. grpc-go has no in-process entry."),
        Suite("pg", "pg — PostgreSQL drivers on one connection", "saturn-bench-pg",
              (("tokio", "pg-tokio"), ("node", "pg-node"), ("asyncpg", "pg-asyncpg")),
              quick=Params(rounds=2, samples=2, warmup=1),
              full=Params(rounds=5, samples=5, warmup=1),
              scenarios=("roundtrip", "pipelined_10k", "fetch_100k"), make_steps=pg_steps,
              figures={"roundtrip": ("ops_per_sec", "p50_us", "p99_us", "cpu_us_per_query"),
                       "pipelined_10k": ("ops_per_sec", "cpu_us_per_query"),
                       "fetch_100k": ("rows_per_sec", "cpu_ns_per_row")},
              gate={"roundtrip": ("ops_per_sec", "cpu_us_per_query"),
                    "pipelined_10k": ("ops_per_sec", "cpu_us_per_query"),
                    "fetch_100k": ("rows_per_sec", "cpu_ns_per_row")},
              note="One connection over TCP to one PostgreSQL 15 shared by every driver (the arena "
                   "suite's cluster: the HttpArena items table, 100,000 rows, scram-sha-256; "
                   "scripts/bench_lib/pgsuite.py), statements prepared once. roundtrip: 10,000 "
                   "`SELECT id, name, price FROM items WHERE id = $1` one after the other; "
                   "pipelined_10k: the same 10,000 handed to the driver at once (saturn "
                   "`conn.pipeline()`, tokio-postgres `try_join_all` of `query_one` futures, "
                   "node-postgres `Promise.all` on a `pipeline: true` client; asyncpg cannot "
                   "pipeline queries that return rows, so it runs them one after the other); "
                   "fetch_100k: one query of 100,000 rows, materialised, 8 columns decoded. "
                   "Every sample's checksum (a sum over the rows) must equal the one Postgres "
                   "computes for the same rows before the run. `client CPU` is the driver "
                   "process's own user+sys time (getrusage) per query or row; Postgres shares "
                   "the machine's CPUs and its CPU is not counted. saturn and tokio run "
                   "--threads workers; Node and asyncpg one event-loop thread."),
    ]
    return {s.name: s for s in suites}


SUITES = _make_suites()
