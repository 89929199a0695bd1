"""Answer checks: a result that fails its check is recorded as FAILED, never as a number.

check_record(rec, suite, context) returns None when the line is acceptable, else a
short reason. The rules follow docs/workloads.md and what the peer programs print:

  loop   checksum == ops, or == timers (timer_churn), or == 2 * ops * bytes for
         read_4k_fixed_vs_plain (bytes read by both variants, as loop-liburing prints)
  spawn  spawn_join_1m checksum == 499,999,500,000; suspended_100k == tasks;
         yield_pingpong == switches
  sched  tasks == the contract's count for the scenario, checksum == tasks
  ring   checksum == N * LAPS of the rung that was asked for
  walk   printed files / directories == the expected counts (checked in walk.py)
  echo   msgs > 0 (echo-load itself exits non-zero on any wrong byte)
  tls    conns_per_sec (or mb_per_sec for bulk) > 0 (tls-load checks every echo byte and
         that an offered session was resumed, and exits non-zero otherwise)
  process checksum == children (every child exited 0), zombies == 0 (the programs
         also exit non-zero on a zombie or a leftover child)
  forkjoin checksum == the workload's known answer (each program also checks every
         sample against a sequential reference and exits non-zero on a mismatch),
         tasks == 2 x the workload's joins
  http   errors == 0 and non2xx == 0; delay: the fastest response (min_us) took at least
         delay_ms (no answer early)
  pg     checksum == the server's own sum for the scenario (pgsuite.expected, computed by
         Postgres before the run), the workload's query and row counts, a positive CPU
         figure
  rpc    unary / unary_half_load: h2load / rpc-load saw only good answers (the runner,
         rpc.py, fails a run otherwise) and some; cold_start: a positive time; inproc_*: checksum ==
         expected_checksum (the sum of every call's a + b) over a positive call count
"""

from __future__ import annotations

from .figures import is_number

SPAWN_JOIN_SUM = 499_999_500_000

SCHED_TASKS = {
    "flood_1m": 1_000_000, "contended_spawn_8x": 100_000, "cpu_work_10us": 10_000,
    "cpu_work_100us": 2_000, "contended_cpu_10us": 10_000, "nested_fanout_4x": 10_000,
    "burst_drain_burst": 4_000, "mixed_fast_slow": 5_000,
}


def _int(rec: dict, key: str):
    v = rec.get(key)
    return v if is_number(v) else None


def _equal(rec: dict, want, what: str) -> str | None:
    got = _int(rec, "checksum")
    if got is None:
        return "no numeric checksum"
    if got != want:
        return f"checksum {got} != {what} {want}"
    return None


def check_loop(rec: dict, ctx: dict) -> str | None:
    ops, timers, size = _int(rec, "ops"), _int(rec, "timers"), _int(rec, "bytes")
    if timers is not None:
        return _equal(rec, timers, "timers")
    if ops is not None and size is not None:
        return _equal(rec, 2 * ops * size, "2*ops*bytes")
    if ops is not None:
        return _equal(rec, ops, "ops")
    if _int(rec, "checksum") in (None, 0):
        return "no ops/timers field and no non-zero checksum"
    return None


def check_spawn(rec: dict, ctx: dict) -> str | None:
    scenario = rec.get("scenario")
    if scenario == "spawn_join_1m":
        return _equal(rec, SPAWN_JOIN_SUM, "sum of 0..999,999 =")
    if _int(rec, "switches") is not None:
        return _equal(rec, rec["switches"], "switches")
    if _int(rec, "tasks") is not None:
        return _equal(rec, rec["tasks"], "tasks")
    return "no tasks/switches field to check the checksum against"


def check_sched(rec: dict, ctx: dict) -> str | None:
    want = SCHED_TASKS.get(rec.get("scenario"))
    tasks = _int(rec, "tasks")
    if want is not None and tasks != want:
        return f"tasks {tasks} != {want} (the contract's count for {rec.get('scenario')})"
    if tasks is None:
        return "no tasks field"
    return _equal(rec, tasks, "tasks")


def check_ring(rec: dict, ctx: dict) -> str | None:
    n, laps = ctx["procs"], ctx["laps"]
    if rec.get("scenario") != f"ring_{n}_{laps}":
        return f"scenario {rec.get('scenario')!r}, asked for ring_{n}_{laps}"
    return _equal(rec, n * laps, "N*LAPS")


def check_echo(rec: dict, ctx: dict) -> str | None:
    msgs = _int(rec, "msgs")
    if not msgs or msgs <= 0:
        return "no messages echoed"
    return None


def check_http(rec: dict, ctx: dict) -> str | None:
    for key in ("errors", "non2xx"):
        v = rec.get(key, 0)
        if v != 0:
            return f"{key} = {v} (must be 0)"
    if not _int(rec, "rps"):
        return "no requests answered"
    if rec.get("scenario") == "delay":
        return check_not_early(rec)
    return None


def check_not_early(rec: dict) -> str | None:
    """GET /delay/{ms} must answer "after at least ms milliseconds" (docs/workloads.md, "http").
    No client sees a response before the server sent it, so a fastest latency (min_us,
    printed by bench/peers/wrk/result.lua) under the delay means some answer came early."""
    fastest = rec.get("min_us")
    delay_ms = rec.get("delay_ms")
    if not is_number(delay_ms) or not is_number(fastest):
        return f"delay record without a numeric delay_ms / min_us ({delay_ms!r}, {fastest!r})"
    if fastest < delay_ms * 1000:
        return (f"answered early: the fastest response took {fastest:.0f} µs, "
                f"/delay/{delay_ms:g} must take at least {delay_ms * 1000:.0f} µs")
    return None


def check_walk(rec: dict, ctx: dict) -> str | None:
    want = ctx.get("expect")
    if want and (rec.get("files"), rec.get("dirs")) != want:
        return f"counts {rec.get('files')}/{rec.get('dirs')} != expected {want[0]}/{want[1]}"
    return None


def check_tls(rec: dict, ctx: dict) -> str | None:
    """tls-load exits non-zero on any wrong byte, failed handshake or session not resumed;
    a record must still carry its rate."""
    key = "mb_per_sec" if rec.get("scenario") in ("bulk", "https_bulk") else "conns_per_sec"
    v = rec.get(key)
    if not is_number(v) or v <= 0:
        return f"no positive {key}"
    return None


def check_arena(rec: dict, ctx: dict) -> str | None:
    """Every answer was checked before the load (arena.check_profile, check_h2_profile);
    under load wrk (h2load) must see no socket error and no non-2xx answer, and h2load must
    have negotiated HTTP/2 (h2 by ALPN, h2c by prior knowledge)."""
    for key in ("errors", "non2xx"):
        v = rec.get(key, 0)
        if v != 0:
            return f"{key} = {v} (must be 0)"
    if not _int(rec, "rps"):
        return "no requests answered"
    proto = rec.get("protocol")  # the arena's h2load runs: what h2load negotiated
    if proto is not None and proto not in ("h2", "h2c"):
        return f"h2load negotiated {proto!r}, not HTTP/2"
    return None


def check_process(rec: dict, ctx: dict) -> str | None:
    if _int(rec, "zombies") != 0:
        return f"zombies = {rec.get('zombies')} (must be 0)"
    children = _int(rec, "children")
    if not children:
        return "no children field"
    return _equal(rec, children, "children")


def check_observe(rec: dict, ctx: dict) -> str | None:
    """dump_1m: the dump found every task (checksum = tasks); stall_50ms: one report per
    sample (checksum = samples reported late by report_late_ms); stall_polite: 0 reports."""
    sc = rec.get("scenario")
    if sc == "dump_1m":
        tasks = _int(rec, "tasks")
        if not tasks:
            return "no tasks field"
        return _equal(rec, tasks, "tasks")
    if sc == "stall_50ms":
        if not _int(rec, "checksum") or not isinstance(rec.get("report_late_ms"), (int, float)):
            return "no report_late_ms or no sample"
        return None
    if sc == "stall_polite":
        return None if rec.get("reports") == 0 and rec.get("checksum") == 0 else f"reports = {rec.get('reports')}"
    return f"unknown scenario {sc!r}"


def check_http_client(rec: dict, ctx: dict) -> str | None:
    """Every answer checked by the client (status 200, exact body): 0 errors, some requests,
    and a CPU figure (the runner adds nginx's own count, httpclient.cross_check)."""
    if rec.get("errors", 1) != 0:
        return f"errors = {rec.get('errors')} (must be 0)"
    if not _int(rec, "requests"):
        return "no requests answered"
    if not isinstance(rec.get("cpu_us_per_req"), (int, float)) or rec["cpu_us_per_req"] <= 0:
        return "no cpu_us_per_req"
    return None


# forkjoin (docs/workloads.md): the answers and task counts, the same for every runtime
# and thread count. quicksort_10m's task count follows from the fixed input and pivot rule.
FORKJOIN_ANSWERS = {
    "tree_sum_4m": (9_007_198_346_674_176, 4_194_302),
    "quicksort_10m": (95_159_760_890_692_621, 16_882),
    "matmul_512": (9_223_372_036_854_775_364, 449_388),
}


def check_forkjoin(rec: dict, ctx: dict) -> str | None:
    want = FORKJOIN_ANSWERS.get(rec.get("scenario"))
    if want is None:
        return f"unknown forkjoin scenario {rec.get('scenario')!r}"
    if _int(rec, "tasks") != want[1]:
        return f"tasks {rec.get('tasks')} != {want[1]}"
    return _equal(rec, want[0], "the workload's answer")
def check_pg(rec: dict, ctx: dict) -> str | None:
    from .pgsuite import FETCH_ROWS, QUERIES
    sc = rec.get("scenario")
    want = ctx.get("expect", {}).get(sc)
    if want is None:
        return f"no expected checksum for scenario {sc!r}"
    if sc == "fetch_100k":
        if _int(rec, "rows") != FETCH_ROWS:
            return f"rows {rec.get('rows')} != {FETCH_ROWS}"
        cpu = "cpu_ns_per_row"
    else:
        if _int(rec, "queries") != QUERIES.get(sc):
            return f"queries {rec.get('queries')} != {QUERIES.get(sc)}"
        cpu = "cpu_us_per_query"
    if not is_number(rec.get(cpu)) or rec[cpu] <= 0:
        return f"no positive {cpu}"
    return _equal(rec, want, "the server's own sum")


def check_rpc(rec: dict, ctx: dict) -> str | None:
    sc = rec.get("scenario", "")
    if sc.startswith("inproc_"):
        if not _int(rec, "calls"):
            return "no calls field"
        want = _int(rec, "expected_checksum")
        if want is None:
            return "no expected_checksum field"
        return _equal(rec, want, "the sum of a + b over the calls")
    if sc == "cold_start":
        v = rec.get("cold_start_ms")
        return None if is_number(v) and v > 0 else "no positive cold_start_ms"
    for key in ("streams_failed", "streams_errored", "streams_timeout"):
        if rec.get(key, 0) != 0:
            return f"{key} = {rec.get(key)} (must be 0)"
    if not _int(rec, "streams_succeeded"):
        return "no calls answered"
    if sc == "unary" and not rec.get("calls_per_cpu_s"):
        return "no calls_per_cpu_s"
    return None


CHECKS = {
    "loop": check_loop, "spawn": check_spawn, "sched": check_sched, "ring": check_ring,
    "echo": check_echo, "http": check_http, "walk": check_walk, "tls": check_tls,
    "arena": check_arena, "process": check_process, "http-client": check_http_client,
    "forkjoin": check_forkjoin, "observe": check_observe,
    "rpc": check_rpc, "pg": check_pg,
}


def check_record(rec: dict, suite: str, runtime: str, context: dict) -> str | None:
    """Common checks (suite, runtime fields), then the suite's own."""
    if rec.get("suite") != suite:
        return f"suite field {rec.get('suite')!r}, expected {suite!r}"
    if rec.get("runtime") != runtime:
        return f"runtime field {rec.get('runtime')!r}, expected {runtime!r}"
    if not isinstance(rec.get("scenario"), str):
        return "no scenario field"
    return CHECKS[suite](rec, context)
