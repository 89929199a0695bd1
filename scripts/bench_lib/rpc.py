"""The rpc suite (issue #27 item 5): unary gRPC over h2c, latency at half load, cold
start to the first health answer, in-process calls.

Servers: saturn-arena (`--port P`: HTTP/1.1 and h2c prior knowledge; its other
listeners off), rpc-go (grpc-go) and rpc-grpcpp (libgrpc++'s async server), each with
`--port P --threads 2` on 127.0.0.1 (netrun.Server: started in its own session,
stopped by PID), sharing the machine's 2 CPUs with the load generator. Steps:

  load (scenarios unary, unary_half_load), one fresh server:
    1. bench/peers/rpc/grpc_client.py check (Debian's python3-grpcio): 1,000 GetSum
       calls with random a, b, each counted good only with grpc-status 0 and
       result == a + b, and Health/Check(benchmark.BenchmarkService) == SERVING. Any
       bad call fails both scenarios before a load runs.
    2. unary: h2load (nghttp2-client) `-c 16 -m 100 -t 1 -D DURATION` POSTs HttpArena's
       pre-encoded request frame (00 00000004 0801 1002: SumRequest{a=1, b=2}) to
       /benchmark.BenchmarkService/GetSum with content-type application/grpc and
       te: trailers; an unmeasured warm-up run, then SAMPLES measured ones (median by
       rps). A run counts only with 0 failed / errored / timed-out streams, every
       finished stream succeeded, no non-2xx answer, and 7 DATA bytes per answer
       (00 00000002 0803: the 5-byte prefix and SumReply{result=3}; only the streams
       still open when the time is up may add to the 2xx and DATA counts; h2load checks
       no body, so this is the under-load check; grpc-status is in the trailers, which h2load does not read —
       step 1 and 4 count it). calls_per_cpu_s = answers / server CPU seconds (the
       server's process tree, /proc/<pid>/stat utime + stime, netrun.measured_load).
    3. unary_half_load: latency at half load on an even schedule. h2load --rps cannot
       give one: its pacing timer fires at most every 10 ms, so it sends each
       connection's calls in bursts (at 60 k/s, ~600 calls at once over 16
       connections) and times how fast a server drains a burst (p50 2-4 ms for saturn,
       grpc-go and libgrpc++ alike). rpc-load (bench/peers/load/rpc_load.c: epoll and
       nghttp2, 16 connections, ≤ 100 open calls each) makes call i due at
       start + i / R and times it from when it was due to its answer, queueing
       included. An even schedule costs more per call than a pipelined one (one TCP
       segment per call each way; on these 2 shared CPUs the client alone takes most
       of a CPU at 20 k/s), so half of h2load's rate can be more than a server sustains
       at all. So R is half of this server's capacity on that schedule: rpc-load at a
       fifth of the unary rps (halved while not sustained), then √2 times more a step
       (0.3 s warm-up, 1 s measured), until a rate is not sustained (a bad or missing answer, < 97 % of the
       rate answered, or p99 > 10 ms); capacity = the last sustained rate. The search
       runs in a server's first round; its later rounds take that capacity again
       (`capacity_from_round`), so every round measures the same rate and the rounds'
       p99s differ by the machine only (a new search each round landed up to 2x apart,
       and the p99 followed the rate). Then
       SAMPLES runs at capacity / 2 (1 s warm-up, DURATION measured), the median by
       p99. Every answer must be :status 200, SumReply{3} and grpc-status 0.
    4. the check of step 1 again (the server answers right after the load).
  cold_start: grpc_client.py cold: 10 (smoke: 3) times fork/exec of the server, then
    connect + Health/Check over python3-h2, retried every 200 µs, until SERVING; median.
    The client's own cost (connect + Check against the warm server, median of 20) is
    reported next to it as client_ms and is included in cold_start_ms.
  inproc: saturn-bench-rpc (grpc::local_method, bench/rpc/main.cpp) and rpc-grpcpp
    --inproc (libgrpc++'s InProcessChannel with a synchronous stub): ns per unary call,
    checksummed. grpc-go has no in-process call here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .common import run_process, wait_quiet
from .model import Runtime, Step, SuiteRun

SCENARIOS = ("unary", "unary_half_load", "cold_start", "inproc_unary", "inproc_unary_ctx")
CONNS, STREAMS, H2LOAD_THREADS = 16, 100, 1  # HttpArena: 100 streams per connection
REQUEST = bytes.fromhex("00000000040801" "1002")  # SumRequest{a=1, b=2}
REPLY_DATA_BYTES = 7  # 00 00000002 0803: SumReply{result=3}
METHOD_PATH = "/benchmark.BenchmarkService/GetSum"
CHECK_CALLS = 1000
COLD_RUNS, COLD_RUNS_SMOKE = 10, 3
INPROC_CALLS = {"saturn": 10_000_000, "grpcpp": 20_000}  # grpcpp: ~60 µs a call
INPROC_SAMPLES = 5  # per round (not in the smoke check), the median reported
INPROC_CALLS_SMOKE = {"saturn": 200_000, "grpcpp": 500}
PYTHON = "/usr/bin/python3"  # Debian's, with python3-grpcio and python3-h2


def client_script(run: SuiteRun) -> Path:
    return run.paths.repo / "bench" / "peers" / "rpc" / "grpc_client.py"


def server_argv(rt: Runtime) -> list:
    """The server without --port / --threads (netrun.Server adds them)."""
    if rt.name == "saturn":
        return [str(rt.path), "--h2c-port", "0", "--tls-port", "0", "--h2-port", "0"]
    return [str(rt.path)]


# ----------------------------------------------------------------- steps

def rpc_steps(run: SuiteRun, rt: Runtime) -> list:
    p = run.params
    steps = []
    # a typical capacity search: 5 rates, made in the first round only, spread over all
    cap_s = (CAP_WARMUP_S + CAP_SECONDS + 0.4) * 5 / max(1, p.rounds)
    per_load = p.warmup * p.duration + p.samples * p.duration + cap_s + \
        p.samples * (HALF_WARMUP_S + p.duration) + 4.0
    steps.append(Step(run.name, "rpc-load", rt.name, "load", server_argv(rt), run.threads, per_load,
                      timeout=0, scenarios=("unary", "unary_half_load")))
    runs = COLD_RUNS_SMOKE if p.smoke else COLD_RUNS
    steps.append(Step(run.name, "rpc-cold", rt.name, "cold_start", server_argv(rt), run.threads,
                      0.2 * runs + 1.0, timeout=60 + 10 * runs, scenarios=("cold_start",),
                      context={"runs": runs}))
    calls = (INPROC_CALLS_SMOKE if p.smoke else INPROC_CALLS).get(rt.name)
    if rt.name == "saturn":
        prog = run.paths.saturn("saturn-bench-rpc")
        # The median of INPROC_SAMPLES samples (0.3-0.6 s each): one sample a round read
        # 28 ns in one round and 61 ns in the next on this VM (a neighbour's burst).
        samples = p.samples if p.smoke else max(p.samples, INPROC_SAMPLES)
        argv = [str(prog), "--threads", "1", "--samples", str(samples), "--warmup", str(p.warmup),
                "--calls", str(calls)]
        steps.append(Step(run.name, "program", rt.name, "inproc", argv, 1, 2.0 + 1e-7 * calls * (samples + p.warmup) * 2,
                          timeout=120, scenarios=("inproc_unary", "inproc_unary_ctx")))
    elif calls:
        argv = [str(rt.path), "--inproc", str(calls)]
        steps.append(Step(run.name, "program", rt.name, "inproc", argv, 1, 1.0 + 6e-5 * calls,
                          timeout=120, scenarios=("inproc_unary",)))
    return steps


# ----------------------------------------------------------------- h2load

def h2load_argv(port: int, seconds: int, req_file: str) -> list:
    return ["h2load", "-c", str(CONNS), "-m", str(STREAMS), "-t", str(H2LOAD_THREADS),
            "-D", str(seconds), "-d", req_file,
            "-H", "content-type: application/grpc", "-H", "te: trailers",
            f"http://127.0.0.1:{port}{METHOD_PATH}"]


def parse_h2load(text: str) -> dict | None:
    """h2load's summary: the counts of its `requests:`, `status codes:` and `traffic:`
    lines, and req/s of `finished in`."""
    out: dict = {}
    for line in text.splitlines():
        words = line.replace(",", "").split()
        if line.startswith("finished in"):
            out["rps"] = float(words[3])
        elif line.startswith("requests:"):
            for k in ("total", "started", "done", "succeeded", "failed", "errored", "timeout"):
                out["streams_" + k] = int(words[words.index(k) - 1])
        elif line.startswith("status codes:"):
            for k in ("2xx", "3xx", "4xx", "5xx"):
                out["status_" + k] = int(words[words.index(k) - 1])
        elif line.startswith("traffic:"):
            # traffic: 7.21MB (7558312) total, 385.27KB (394518) headers (...), 1.32MB (1380141) data
            nums = [int(w.strip("()")) for w in words if w.startswith("(") and w.strip("()").isdigit()]
            if len(nums) >= 3:
                out["bytes_total"], out["bytes_headers"], out["bytes_data"] = nums[0], nums[1], nums[2]
    if "rps" not in out or "streams_succeeded" not in out:
        return None
    out["requests"] = out["streams_succeeded"]
    return out


def h2load_failure(r: dict) -> str:
    for k in ("failed", "errored", "timeout"):
        if r.get("streams_" + k, 0) != 0:
            return f"h2load: {r['streams_' + k]} {k} streams"
    n = r.get("streams_succeeded")
    if not n:
        return "h2load: no answer"
    if r.get("streams_done") != n:
        return f"h2load: {n} of {r.get('streams_done')} finished streams succeeded"
    bad = sum(r.get("status_" + k, 0) for k in ("3xx", "4xx", "5xx"))
    if bad:
        return f"h2load: {bad} answers not 2xx"
    # Streams still open when the time is up (started - done, at most connections x 100)
    # may have their HEADERS or DATA counted without being done; nothing else may add.
    open_ = max(0, r.get("streams_started", n) - n)
    if not n <= r.get("status_2xx", 0) <= n + open_:
        return f"h2load: {r.get('status_2xx')} 2xx answers for {n} finished and {open_} open streams"
    data = r.get("bytes_data", -1)
    if not REPLY_DATA_BYTES * n <= data <= REPLY_DATA_BYTES * (n + open_):
        return (f"h2load: {data} DATA bytes for {n} answers ({open_} streams open at the end), "
                f"want {REPLY_DATA_BYTES} per answer (00 00000002 0803)")
    return ""


# ----------------------------------------------------------------- runs

# ----------------------------------------------------------------- rpc-load

HALF_WARMUP_S = 1
# The capacity search: rates from a fifth of h2load's saturated rate (halved while even
# that is not sustained) up by √2 a step, each 0.3 s of warm-up and 1 s measured; a rate
# is sustained when every call due in the window was answered well, at ≥ 97 % of the
# rate, with p99 ≤ 10 ms.
CAP_WARMUP_S, CAP_SECONDS, CAP_P99_US, CAP_STEPS = 0.3, 1.0, 10_000.0, 10
# rpc-load sends the calls due by each 25 µs tick together (--tick-us): a wake-up per
# call made the client itself the busiest thread (5-10 µs of CPU a wake-up on this VM) and
# its own queueing the p99 (saturn-arena at 90 k calls/s, 4 interleaved rounds: p99 6.0 ms
# with a wake-up per call, 2.1 ms with 25 µs ticks). Latency still counts from each call's
# due time: the ticks can only add (≤ 25 µs) to a server's figures.
TICK_US = 25


def rpc_load_argv(tool: Path, port: int, rps: int, warmup: float, seconds: float) -> list:
    return [str(tool), "--port", str(port), "--rps", str(rps), "--conns", str(CONNS),
            "--streams", str(STREAMS), "--warmup", str(warmup), "--duration", str(seconds),
            "--path", METHOD_PATH, "--tick-us", str(TICK_US)]


def parse_rpc_load(text: str) -> dict | None:
    """rpc-load's RPC_RESULT line, with the fields the checks and tables read: rps (the
    answered calls per second), requests (the calls, for CPU per call) and h2load's
    stream counts (succeeded = good answers, failed = bad ones, timeout = unanswered)."""
    for line in text.splitlines():
        if line.startswith("RPC_RESULT "):
            try:
                r = json.loads(line[len("RPC_RESULT "):])
            except ValueError:
                return None
            r.update(rps=r["calls_per_sec"], requests=r["calls"], streams_succeeded=r["calls"],
                     streams_failed=r["errors"], streams_errored=0, streams_timeout=r["unfinished"])
            return r
    return None


def rpc_load_failure(r: dict) -> str:
    if r.get("errors"):
        return f"rpc-load: {r['errors']} bad answers"
    if r.get("unfinished"):
        return f"rpc-load: {r['unfinished']} calls unanswered"
    return ""


def sustained(r: dict | None, rate: int) -> bool:
    return bool(r) and not rpc_load_failure(r) and r["calls_per_sec"] >= 0.97 * rate and \
        r["p99_us"] <= CAP_P99_US


_capacity: dict = {}  # runtime -> (capacity, the round that searched it), within one session


def find_capacity(srv, tool: Path, saturated_rps: float, log_path: Path, head: str) -> tuple[int, list, str]:
    """(highest sustained rate, [(rate, p99 µs or None)] tried, failure)."""
    rate, best, tried = max(1000, int(saturated_rps / 5)), 0, []
    for _ in range(CAP_STEPS):
        res = run_process(rpc_load_argv(tool, srv.port, rate, CAP_WARMUP_S, CAP_SECONDS),
                          timeout=CAP_SECONDS + 30, log_path=log_path, header=f"{head} capacity {rate}/s")
        r = parse_rpc_load(res.stdout)
        tried.append((rate, r["p99_us"] if r else None))
        if not sustained(r, rate):
            if best == 0 and rate > 1000:  # even the first rate was too much: go down
                rate = max(1000, rate // 2)
                continue
            break
        best = rate
        if rate > saturated_rps:  # an even schedule never beats the pipelined one
            break
        rate = int(rate * 1.41421356)
    if best == 0:
        return 0, tried, f"rpc-load: no rate sustained (tried {tried})"
    return best, tried, ""


def client_check(run: SuiteRun, port: int, log_path: Path, header: str) -> str:
    res = run_process([PYTHON, str(client_script(run)), "check", str(port), str(CHECK_CALLS)],
                      timeout=120, log_path=log_path, header=header)
    try:
        r = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return res.error or f"grpc_client.py check exit {res.returncode}, no result (see the log)"
    if r.get("good") != CHECK_CALLS:
        return f"GetSum check: {r.get('bad')} of {CHECK_CALLS} calls not OK with the right sum"
    if not r.get("serving"):
        return "Health/Check(benchmark.BenchmarkService) did not answer SERVING"
    return ""


def _base(step: Step, scenario: str) -> dict:
    return {"suite": step.suite, "scenario": scenario, "runtime": step.runtime, "threads": step.threads}


def run_load(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    from .netrun import Server, measured_load, median_samples

    p = run.params
    head = f"{step.suite} {step.runtime} {step.job} round {step.round}"
    objs, reasons = [], {}
    fd, req_file = tempfile.mkstemp(prefix="rpc-req.", suffix=".bin")
    with os.fdopen(fd, "wb") as f:
        f.write(REQUEST)
    try:
        wait_quiet(run.quiet_wait)
        with Server(step.argv, step.threads, [], log_path) as srv:
            why = client_check(run, srv.port, log_path, head + " check")
            if why:
                return [], {sc: why for sc in step.scenarios}
            for _ in range(p.warmup):
                run_process(h2load_argv(srv.port, p.duration, req_file), timeout=p.duration + 30,
                            log_path=log_path, header=head + " warm-up")

            def one():
                r, fail = measured_load(srv, h2load_argv(srv.port, p.duration, req_file), log_path,
                                        head + " unary", p.duration + 30, parse=parse_h2load, tool="h2load")
                return r, fail or (h2load_failure(r) if r else "")

            sat, why = median_samples(p.samples, one)
            if sat is None or why:
                return [], {sc: why or "no result" for sc in step.scenarios}
            cpu_s = sat["server_cpu_us_per_req"] * 1e-6 * sat["requests"]
            sat.update(_base(step, "unary"), connections=CONNS, streams=STREAMS,
                       calls_per_cpu_s=round(sat["requests"] / cpu_s, 1) if cpu_s > 0 else 0.0)
            objs.append(sat)

            # Latency at half load: an even schedule (rpc-load), at half of the highest
            # rate this server sustains on that schedule (see the module docstring).
            load_tool = run.paths.peer("rpc-load")
            if not load_tool.is_file():
                reasons["unary_half_load"] = f"load generator {load_tool} not built"
            else:
                if step.runtime in _capacity:
                    (cap, from_round), steps, why = _capacity[step.runtime], [], ""
                else:
                    cap, steps, why = find_capacity(srv, load_tool, sat["rps"], log_path, head)
                    from_round = step.round
                    if not why:
                        _capacity[step.runtime] = (cap, from_round)
                if why:
                    reasons["unary_half_load"] = why
                else:
                    target = max(1, int(cap / 2))

                    def half():
                        argv = rpc_load_argv(load_tool, srv.port, target, HALF_WARMUP_S, p.duration)
                        r, fail = measured_load(srv, argv, log_path, head + f" half load ({target}/s)",
                                                p.duration + 30, parse=parse_rpc_load, tool="rpc-load")
                        return r, fail or (rpc_load_failure(r) if r else "")

                    hl, why = median_samples(p.samples, half, key="p99_us")
                    if hl is None or why:
                        reasons["unary_half_load"] = why or "no result"
                    else:
                        hl.update(_base(step, "unary_half_load"), target_rps=target, capacity_rps=cap,
                                  capacity_steps=steps, capacity_from_round=from_round,
                                  connections=CONNS, streams=STREAMS, load_tool="rpc-load")
                        objs.append(hl)
            why = client_check(run, srv.port, log_path, head + " check after the load")
            if why:
                reasons.update({sc: "after the load: " + why for sc in step.scenarios})
            if not srv.alive():
                reasons.update({sc: "the server died" for sc in step.scenarios})
    finally:
        for f in (req_file,):
            if os.path.exists(f):
                os.unlink(f)
    return objs, reasons


def run_cold(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    head = f"{step.suite} {step.runtime} {step.job} round {step.round}"
    runs = step.context.get("runs", COLD_RUNS)
    argv = [PYTHON, str(client_script(run)), "cold", str(runs)] + step.argv + \
        ["--port", "{port}", "--threads", str(step.threads)]
    wait_quiet(run.quiet_wait)
    res = run_process(argv, timeout=step.timeout, log_path=log_path, header=head)
    try:
        r = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [], {"cold_start": res.error or f"grpc_client.py cold exit {res.returncode} (see the log)"}
    if "error" in r:
        return [], {"cold_start": r["error"]}
    rec = _base(step, "cold_start")
    rec.update(runs=r["runs"], cold_start_ms=r["cold_ms_median"], cold_ms_min=min(r["cold_ms"]),
               cold_ms_max=max(r["cold_ms"]), client_ms=r["client_ms"], cold_ms_all=r["cold_ms"])
    return [rec], {}


def run_step(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    from .netrun import ServerError, raise_nofile

    raise_nofile()
    try:
        if step.kind == "rpc-load":
            return run_load(step, run, log_path)
        return run_cold(step, run, log_path)
    except ServerError as e:
        return [], {sc: str(e) for sc in step.scenarios}
