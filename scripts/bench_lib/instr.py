"""Instructions a server executes per request, counted by callgrind (scripts/ab --callgrind).

Why: on this 2-CPU VM a network run's CPU time per request swings 5-40 % from one round
to the next on the same binaries, so a 1 % difference (issue #31's metrics overhead) is
not resolvable from time. An instruction count is: it is what user space controls, it
does not depend on what else runs, and two builds of the same revision differ only by
the instructions one of them adds.

How one measurement goes:
  1. The server runs under `valgrind --tool=callgrind` with one worker thread. It is
     given --spin-us 1000000: valgrind serializes threads and does not release its lock
     around io_uring_enter, so a worker parked in the ring would keep the main thread
     from starting the server. A saturated worker never parks, and never spins either.
  2. The suite's own load generator (wrk with the suite's scripts and connection counts,
     or echo-load, which checks every byte) saturates it for WARMUP + WINDOW + a tail.
  3. After WARMUP, `callgrind_control -z` zeroes the counts; after WINDOW,
     `callgrind_control -d` dumps them. The dump holds the instructions executed in the
     window, in every thread of the server, and the number of calls of one function
     that runs exactly once per unit: the route's handler for HTTP (its coroutine's ramp
     function), `ext::submit_send` for echo (one send per message echoed).
  4. server_instr_per_req = instructions / units. The load run must end cleanly (wrk: no
     socket errors, no non-2xx; echo-load: exit 0) or the measurement is a failed run.

What it does not show: kernel work (syscalls, the loopback), cache misses, and the
thread_pool's cross-worker paths (one worker: no steals, no wake-ups of another CPU).
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from .common import BenchError, log, now_iso, which
from .netrun import Server, ServerError, _wrk_result

FIGURE = "server_instr_per_req"
SPIN_US = "1000000"

# suite -> scenario -> (load kind, connections, pipeline depth or message size, path, unit function)
SCENARIOS = {
    "http": {
        "plaintext": ("wrk", 256, 16, "/plaintext",
                      r"^\(anonymous namespace\)::plaintext\(saturn::http::request const&, "
                      r"saturn::http::route_params const&\)$"),
        "json": ("wrk", 256, 0, "/json",
                 r"^\(anonymous namespace\)::json\(saturn::http::request const&, "
                 r"saturn::http::route_params const&\)$"),
    },
    "echo": {
        # ext::submit_send since the loop's header split (68fbaff); a member before.
        "many-small": ("echo", 1000, 64, "", r"^saturn::(ext|event_loop)::submit_send\("),
    },
}

_FN = re.compile(r"c?fn=\((\d+)\)(?: (.*))?")


def parse_dump(path: Path, unit_fn: str) -> tuple[int, int]:
    """(instructions in the dump, calls of the function matching `unit_fn`)."""
    names: dict = {}
    pattern = re.compile(unit_fn)
    total, calls, callee = None, 0, ""
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith(("fn=", "cfn=")):
                m = _FN.match(line.rstrip("\n"))
                if m is None:
                    continue
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                if line.startswith("cfn="):
                    callee = names.get(m.group(1), "")
            elif line.startswith("calls=") and pattern.search(callee):
                calls += int(line[6:].split()[0])
    if total is None:
        raise BenchError(f"{path}: no 'summary:' line (not a callgrind dump?)")
    return total, calls


def _control(flag: str, pid: int, log_path: Path) -> None:
    with open(log_path, "a") as f:
        res = subprocess.run(["callgrind_control", flag, str(pid)], stdout=f,
                             stderr=subprocess.STDOUT, timeout=60)
    if res.returncode != 0:
        raise BenchError(f"callgrind_control {flag} {pid} failed (see {log_path})")


def _load_argv(paths, kind: str, port: int, conns: int, arg: int, route: str, seconds: int) -> list:
    if kind == "wrk":
        script = "pipeline.lua" if arg else "report.lua"
        argv = ["wrk", "-t", "2", "-c", str(conns), "-d", f"{seconds}s", "--timeout", "30s",
                "-s", str(paths.peer_share("wrk") / script), f"http://127.0.0.1:{port}{route}"]
        return argv + (["--", str(arg)] if arg else [])
    return [str(paths.peer("echo-load")), "--port", str(port), "--conns", str(conns),
            "--size", str(arg), "--duration", str(seconds), "--warmup", "0", "--samples", "1",
            "--threads", "1", "--scenario", "many-small", "--runtime", "saturn"]


def _check_load(kind: str, res: subprocess.CompletedProcess) -> str:
    if res.returncode != 0:
        return f"load generator exit status {res.returncode}"
    if kind == "wrk":
        r = _wrk_result(res.stdout)
        if r is None:
            return "wrk printed no WRK_RESULT line"
        if r.get("errors") or r.get("non2xx") or not r.get("requests"):
            return f"wrk: {r.get('errors')} socket errors, {r.get('non2xx')} non-2xx, {r.get('requests')} requests"
    return ""


def measure(binary: Path, suite: str, scenario: str, paths, work: Path, log_path: Path,
            warmup: int = 4, window: int = 8) -> dict:
    """One callgrind measurement of `binary` (saturn-http or saturn-echo) on a scenario:
    the record scripts/ab gates on ("failed" set when it could not be made)."""
    for tool in ("valgrind", "callgrind_control", "wrk"):
        if which(tool) is None:
            raise BenchError(f"{tool} not found: install Debian's valgrind and wrk packages")
    kind, conns, arg, route, unit_fn = SCENARIOS[suite][scenario]
    record = {"suite": suite, "scenario": scenario, "threads": 1, "runtime": "saturn",
              "tool": "callgrind", "conns": conns}
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"cg-{suite}-{scenario}-{time.monotonic_ns()}"
    argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
            str(binary), "--spin-us", SPIN_US]
    try:
        with Server(argv, 1, [], log_path) as server:
            seconds = warmup + window + 6
            load = subprocess.Popen(_load_argv(paths, kind, server.port, conns, arg, route, seconds),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                time.sleep(warmup)
                _control("-z", server.proc.pid, log_path)
                time.sleep(window)
                _control("-d", server.proc.pid, log_path)
                stdout, stderr = load.communicate(timeout=seconds + 60)
            finally:
                if load.poll() is None:
                    load.kill()
                    load.wait()
            with open(log_path, "a") as f:
                f.write(f"\n===== {now_iso()} load {suite} {scenario}\n{stdout}{stderr}")
            why = _check_load(kind, subprocess.CompletedProcess([], load.returncode, stdout, stderr))
            if not server.alive():
                why = why or "the server exited during the run"
    except ServerError as e:
        return {**record, "failed": True, "why": str(e)}
    dumps = sorted(work.glob(out.name + ".*"), key=lambda p: p.stat().st_mtime)
    dump = next((d for d in dumps if d.name.endswith(".1")), None)
    if dump is None:
        return {**record, "failed": True, "why": f"no callgrind dump {out}.1"}
    total, units = parse_dump(dump, unit_fn)
    for d in dumps + [out]:
        d.unlink(missing_ok=True)
    if why or units == 0:
        return {**record, "failed": True, "why": why or f"no call of {unit_fn} in the window"}
    log(f"  {suite} {scenario}: {total:,} instructions / {units:,} = {total / units:,.1f} per unit")
    return {**record, "instructions": total, "units": units, FIGURE: total / units}
