"""The echo, http and tls suites: one server, on 127.0.0.1, checked, loaded and stopped.

For one step (one runtime, one server thread count W):

  1. The server starts as `SERVER --port P --threads W` on a free loopback port (up to
     three ports are tried) in its own session, its output appended to the suite's log;
     the runner waits (15 s at most) until the port accepts a connection.
  2. With W below the CPUs this process may use, the server is pinned to the last W of
     them and the load generator to the others (taskset), so "1 thread" is "1 CPU" for
     every runtime and the scheduler's placement does not vary between runs. With W =
     all CPUs nothing is pinned and both share the CPUs.
  3. echo: per profile, echo-load (bench/peers/load) runs the closed loop for WARMUP +
     SAMPLES x DURATION seconds and checks every byte; a non-zero exit fails the profile.
     http: each route is checked once (status, Server, Date, exact Content-Length,
     Content-Type and body; an unknown path gives 404; /delay/{ms} takes at least ms),
     then wrk runs the scenario (an unmeasured warm-up run, then SAMPLES measured runs,
     the median by rps reported with the min and max) with the scripts of
     bench/peers/wrk. A scenario whose route check fails is not loaded and is FAILED.
     tls: the server gets a self-signed certificate (RSA-2048 or ECDSA P-256, made with
     openssl) and tls-load (bench/peers/load) measures full and resumed handshakes per
     second (each connection's echo checked) and bulk MB/s over one connection (every
     byte checked, TLS_AES_128_GCM_SHA256 for every runtime). The https_* scenarios are
     the handshake ones with one small HTTPS GET instead of the echo (tls-load --proto
     http): nginx, and saturn-arena's TLS listener for saturn.
  4. The server is stopped by its PID (SIGTERM; after 5 s SIGKILL to it and to any
     descendant it had, each identified by PID and start time). Only processes this
     module started are ever signalled.

CPU figures are 100 per fully busy CPU: the server's whole process tree (nginx, node
workers) from /proc, the load generator's own, the machine's from /proc/stat, and
`other` = machine - server - load (run_other_cpu_pct, the noise figure of the tables).
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import time
from pathlib import Path

from .common import ProcessResult, log, note_other_load, now_iso, run_process, wait_quiet
from .model import Step, SuiteRun

# ----------------------------------------------------------------- the workloads

ECHO_PROFILES = {  # scenario: (connections, message bytes), docs/workloads.md "echo"
    "many-small": (1000, 64), "few-large": (4, 16384), "single": (1, 64)}
ECHO_LOAD_THREADS = 1  # echo-load threads (capped at the connection count)

PLAIN_CONNS, PIPELINE, JSON_CONNS, DELAY_CONNS = 256, 16, 256, 1000
WRK_THREADS = 2
HTTP_ROUTES = {  # route: (status, content type, body)
    "/plaintext": (200, "text/plain", b"Hello, World!"),
    "/json": (200, "application/json", b'{"message":"Hello, World!"}'),
}


# ----------------------------------------------------------------- /proc helpers

def _proc_stat(pid: int) -> tuple[int, int, int, int] | None:
    """(ppid, utime ticks, stime ticks, start time) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            line = f.read()
    except OSError:
        return None
    rest = line[line.rindex(")") + 2:].split()  # fields from 3 (state) on
    return int(rest[1]), int(rest[11]), int(rest[12]), int(rest[19])


def _process_table() -> dict:
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st:
                table[int(entry)] = st
    return table


def tree(root: int) -> dict:
    """{pid: (ppid, utime, stime, start time)} of root and all its descendants."""
    table = _process_table()
    out, queue = {}, [root]
    while queue:
        pid = queue.pop()
        if pid in table and pid not in out:
            out[pid] = table[pid]
            queue += [p for p, st in table.items() if st[0] == pid]
    return out


def machine_jiffies() -> tuple[int, int, int]:
    """(busy, total, CPUs) of the whole machine; busy excludes idle and iowait."""
    with open("/proc/stat") as f:
        lines = f.read().splitlines()
    vals = [int(v) for v in lines[0].split()[1:9]]
    ncpu = sum(1 for ln in lines if ln.startswith("cpu") and ln[3:4].isdigit())
    return sum(vals) - vals[3] - vals[4], sum(vals), max(1, ncpu)


def raise_nofile() -> None:
    """Soft open-file limit up to the hard one (1,000 connections need more than 1,024);
    servers and load generators started from here inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def pinning(threads: int) -> tuple[list, list]:
    """(server CPUs, load CPUs): the last `threads` allowed CPUs for the server and the
    rest for the load, or ([], []) when the server wants every CPU."""
    allowed = sorted(os.sched_getaffinity(0))
    if threads >= len(allowed):
        return [], []
    return allowed[-threads:], allowed[:-threads]


def _taskset(cpu_list: list) -> list:
    return ["taskset", "-c", ",".join(map(str, cpu_list))] if cpu_list else []


# ----------------------------------------------------------------- the server

class ServerError(Exception):
    pass


class Server:
    """One server process we started; `with Server(...) as s:` stops it on any exit."""

    def __init__(self, argv: list, threads: int, cpu_list: list, log_path: Path, env: dict | None = None):
        self.argv, self.threads, self.cpu_list, self.log_path = argv, threads, cpu_list, log_path
        self.env = {**os.environ, **env} if env else None  # None: the runner's environment
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> "Server":
        for attempt in range(1, 4):
            self.port = _free_port()
            argv = _taskset(self.cpu_list) + self.argv + [
                "--port", str(self.port), "--threads", str(self.threads)]
            with open(self.log_path, "a") as logf:
                logf.write(f"\n===== {now_iso()} server\n$ {' '.join(argv)}\n")
                logf.flush()
                self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                             stderr=logf, start_new_session=True, env=self.env)
            if self._wait_port(15.0):
                return self
            log(f"  server did not accept on 127.0.0.1:{self.port} (attempt {attempt})")
            self.stop()
        raise ServerError(f"{self.argv[0]} did not start (see {self.log_path.name})")

    def __exit__(self, *exc) -> None:
        self.stop()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def times(self) -> tuple[int, int]:
        """(user, system) CPU clock ticks used so far by the server and its descendants."""
        members = tree(self.proc.pid).values() if self.proc else ()
        return sum(st[1] for st in members), sum(st[2] for st in members)

    def ticks(self) -> int:
        """CPU clock ticks used so far by the server and its descendants."""
        return sum(self.times())

    def kib(self, key: str) -> int:
        """A /proc/<pid>/status field (VmRSS, VmHWM) summed over the server's tree, in KiB."""
        total = 0
        for pid in tree(self.proc.pid) if self.proc else ():
            try:
                with open(f"/proc/{pid}/status") as f:
                    total += next((int(ln.split()[1]) for ln in f if ln.startswith(key + ":")), 0)
            except (OSError, ValueError):
                pass
        return total

    def _wait_port(self, limit: float) -> bool:
        return self.wait_port(self.port, limit)

    def wait_port(self, port: int, limit: float) -> bool:
        """True once 127.0.0.1:port accepts a connection, within `limit` s, while the
        server runs (a second port of the server: its TLS listener)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        """SIGTERM to our PID; after it is gone or 5 s, SIGKILL to whatever of its tree
        (as listed before the first signal, by PID and start time) is still there."""
        if self.proc is None:
            return
        members = {pid: st[3] for pid, st in tree(self.proc.pid).items()}
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            if self.proc.poll() is not None and not self._survivors(members):
                break
            time.sleep(0.05)
        for pid in self._survivors(members):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.proc = None

    @staticmethod
    def _survivors(members: dict) -> list:
        out = []
        for pid, start in members.items():
            st = _proc_stat(pid)
            if st and st[3] == start:
                out.append(pid)
        return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------- echo

def run_echo(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    """(JSON objects, {scenario: failure reason}) of one echo step."""
    load = run.paths.peer("echo-load")
    if not load.is_file():
        return [], {p: f"load generator {load} not built" for p in step.scenarios}
    server_cpus, load_cpus = pinning(step.threads)
    objs, reasons = [], {}
    with Server([str(step.argv[0])], step.threads, server_cpus, log_path) as server:
        log(f"  {step.runtime}: pid {server.proc.pid}, 127.0.0.1:{server.port}, "
            f"--threads {step.threads}, CPUs server {server_cpus or 'any'} load {load_cpus or 'any'}")
        for profile in step.scenarios:
            if not server.alive():
                reasons[profile] = "the server exited during an earlier profile"
                continue
            conns, size = ECHO_PROFILES[profile]
            p = run.params
            argv = _taskset(load_cpus) + [
                str(load), "--port", str(server.port), "--conns", str(conns), "--size", str(size),
                "--duration", str(p.duration), "--warmup", str(p.warmup), "--samples", str(p.samples),
                "--threads", str(min(ECHO_LOAD_THREADS, conns)), "--scenario", profile,
                "--runtime", step.runtime, "--server-threads", str(step.threads),
                "--server-pid", str(server.proc.pid)]
            wait_quiet(run.quiet_wait)
            res = run_process(argv, timeout=60 + p.warmup + p.samples * p.duration,
                              log_path=log_path, header=f"echo {step.runtime} {profile} "
                              f"threads={step.threads} round {step.round}")
            obj, why = _one_object(res)
            if not server.alive():
                why = why or "the server exited during the run"
            if obj is not None:
                if isinstance(obj.get("other_cpu_pct"), (int, float)):
                    obj["run_other_cpu_pct"] = obj["other_cpu_pct"]
                    # echo-load measures others without the server (run_process's figure
                    # counts the server)
                    note_other_load(obj["other_cpu_pct"])
                objs.append(obj)
            if why:
                reasons[profile] = why
    return objs, reasons


def _one_object(res: ProcessResult) -> tuple[dict | None, str]:
    """The JSON object a load run printed, and why it failed ("" when it did not)."""
    obj = None
    for line in res.stdout.splitlines():
        try:
            cand = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(cand, dict):
            obj = cand
    why = res.error or (f"load generator exit status {res.returncode} (see the log)"
                        if res.returncode != 0 else "")
    if obj is None and not why:
        why = "the load generator printed no JSON line"
    return obj, why


# ----------------------------------------------------------------- http

def check_route(port: int, path: str, status: int, ctype: str | None, body: bytes | None,
                at_least_s: float = 0.0) -> str:
    """One GET with every header the workload asks for checked; "" when it is right."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        t0 = time.monotonic()
        conn.request("GET", path)
        resp = conn.getresponse()
        got = resp.read()
        took = time.monotonic() - t0
    except (OSError, http.client.HTTPException) as e:
        return f"GET {path}: {e or type(e).__name__}"
    finally:
        conn.close()
    if resp.status != status:
        return f"GET {path}: status {resp.status}, want {status}"
    problems = [f"no {h} header" for h in ("Server", "Date") if not resp.getheader(h)]
    if resp.getheader("Content-Length") != str(len(got)):
        problems.append(f"Content-Length {resp.getheader('Content-Length')!r}, body {len(got)} B")
    if ctype is not None and (resp.getheader("Content-Type") or "").strip().lower() != ctype:
        problems.append(f"Content-Type {resp.getheader('Content-Type')!r}, want {ctype!r}")
    if body is not None and got != body:
        problems.append(f"body {got[:60]!r}, want {body!r}")
    if took < at_least_s:
        problems.append(f"answered after {took * 1e3:.1f} ms, before the {at_least_s * 1e3:.0f} ms asked")
    return f"GET {path}: " + "; ".join(problems) if problems else ""


def http_routes_check(port: int, scenario: str, delay_ms: int) -> str:
    if scenario == "delay":
        return check_route(port, f"/delay/{delay_ms}", 200, "text/plain",
                           str(delay_ms).encode(), delay_ms / 1000)
    route = f"/{scenario}"
    return check_route(port, route, *HTTP_ROUTES[route])


def _wrk_argv(wrk_dir: Path, port: int, scenario: str, seconds: int, delay_ms: int) -> tuple[list, dict]:
    """(wrk argv, fields the record carries about the load)."""
    if scenario == "plaintext":
        conns, script, path, extra = PLAIN_CONNS, "pipeline.lua", "/plaintext", [str(PIPELINE)]
        fields = {"pipeline": PIPELINE}
    elif scenario == "json":
        conns, script, path, extra, fields = JSON_CONNS, "report.lua", "/json", [], {}
    else:
        conns, script, path, extra = DELAY_CONNS, "report.lua", f"/delay/{delay_ms}", []
        fields = {"delay_ms": delay_ms}
    threads = min(WRK_THREADS, conns)
    argv = ["wrk", "-t", str(threads), "-c", str(conns), "-d", f"{seconds}s", "--timeout", "10s",
            "-s", str(wrk_dir / script), f"http://127.0.0.1:{port}{path}"]
    if extra:
        argv += ["--"] + extra
    return argv, {"conns": conns, "wrk_threads": threads, **fields}


def _wrk_result(stdout: str) -> dict | None:
    for line in stdout.splitlines():
        if line.startswith("WRK_RESULT "):
            try:
                return json.loads(line[len("WRK_RESULT "):])
            except json.JSONDecodeError:
                return None
    return None


def _children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measured_load(server: Server, argv: list, log_path: Path, header: str, timeout: float,
                  parse=None, tool: str = "wrk", unstick=None) -> tuple[dict | None, str]:
    """One measured load run (wrk unless `parse` reads another tool's result line): its
    result plus the CPU figures — the server's tree split into user and system, the load
    generator's, the machine's; (record, failure). `unstick`: run_process's; what it did
    is kept in the record as `unstuck`."""
    hz = os.sysconf("SC_CLK_TCK")
    (u0, s0), (mb0, mt0, ncpu), c0 = server.times(), machine_jiffies(), _children_cpu_s()
    res = run_process(argv, timeout=timeout, log_path=log_path, header=header, unstick=unstick)
    (u1, s1), (mb1, mt1, _), c1 = server.times(), machine_jiffies(), _children_cpu_s()
    result = (parse or _wrk_result)(res.stdout)
    why = res.error or (f"{tool} exit status {res.returncode}" if res.returncode != 0 else "")
    if result is None:
        return None, why or f"{tool} printed no result line (see the log)"
    wall = max(res.wall_s, 1e-6)
    user_s, sys_s = (u1 - u0) / hz, (s1 - s0) / hz
    server_pct, load_pct = 100 * (user_s + sys_s) / wall, 100 * (c1 - c0) / wall
    machine_pct = 100 * ncpu * (mb1 - mb0) / max(1, mt1 - mt0)
    n = result.get("requests") or 0
    per = (lambda sec: round(sec * 1e6 / n, 3)) if n else (lambda sec: 0.0)
    result.update(server_cpu_pct=round(server_pct, 1), server_cpu_us_per_req=per(user_s + sys_s),
                  server_user_us_per_req=per(user_s), server_sys_us_per_req=per(sys_s),
                  wrk_cpu_pct=round(load_pct, 1), machine_cpu_pct=round(machine_pct, 1),
                  other_cpu_pct=round(max(0.0, machine_pct - server_pct - load_pct), 1))
    result["run_other_cpu_pct"] = result["other_cpu_pct"]
    # run_process noted machine - load, which counts the server too: the figure without it
    note_other_load(result["other_cpu_pct"] if wall >= 1.0 else None)
    if res.unstuck:
        result["unstuck"] = res.unstuck
    return result, why


def median_samples(count: int, one, key: str = "rps") -> tuple[dict | None, str]:
    """`count` measured runs of `one()` -> (record, failure): the median run by `key`
    (rps unless said) with the sample count and that figure's min and max, or None when
    no run gave a result; the first failure seen."""
    samples, why = [], ""
    for _ in range(count):
        result, fail = one()
        why = why or fail
        if result:
            samples.append(result)
    if not samples:
        return None, why
    samples.sort(key=lambda r: r.get(key) or 0)
    med = samples[(len(samples) - 1) // 2]
    return {"samples": len(samples), f"{key}_min": samples[0].get(key),
            f"{key}_max": samples[-1].get(key), **med}, why


def run_http(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    """(JSON objects, {scenario: failure reason}) of one http step."""
    wrk_dir = run.paths.peer_share("wrk")
    if not (wrk_dir / "report.lua").is_file():
        return [], {s: f"wrk scripts not installed in {wrk_dir}" for s in step.scenarios}
    delay_ms = step.context.get("delay_ms", 10)
    server_cpus, load_cpus = pinning(step.threads)
    p = run.params
    objs, reasons = [], {}
    with Server([str(step.argv[0])], step.threads, server_cpus, log_path) as server:
        log(f"  {step.runtime}: pid {server.proc.pid}, 127.0.0.1:{server.port}, "
            f"--threads {step.threads}, CPUs server {server_cpus or 'any'} load {load_cpus or 'any'}")
        not_found = check_route(server.port, "/no-such-path", 404, None, None)
        for sc in step.scenarios:
            if not server.alive():
                reasons[sc] = "the server exited during an earlier scenario"
                continue
            wrong = not_found or http_routes_check(server.port, sc, delay_ms)
            if wrong:
                reasons[sc] = f"answer check: {wrong}"
                continue
            header = f"http {step.runtime} {sc} threads={step.threads} round {step.round}"
            wait_quiet(run.quiet_wait)
            if p.warmup:
                argv, _ = _wrk_argv(wrk_dir, server.port, sc, p.warmup, delay_ms)
                run_process(_taskset(load_cpus) + argv, timeout=p.warmup + 60,
                            log_path=log_path, header=header + " (warm-up)")
            argv, fields = _wrk_argv(wrk_dir, server.port, sc, p.duration, delay_ms)
            rec, why = median_samples(p.samples, lambda: measured_load(
                server, _taskset(load_cpus) + argv, log_path, header, p.duration + 60))
            if rec:
                objs.append({"suite": "http", "scenario": sc, "runtime": step.runtime,
                             "threads": step.threads, **fields, **rec})
            if not server.alive():
                why = why or "the server exited during the run"
            if why:
                reasons[sc] = why
    return objs, reasons


# ----------------------------------------------------------------- tls

TLS_LOAD_THREADS = 2  # tls-load's handshake threads (sequential handshakes each)
TLS_BULK_MIB = 256
TLS_BULK_CIPHER = "TLS_AES_128_GCM_SHA256"  # every runtime on the same AEAD


_CERT_DIR: list = []  # one temporary folder per runner process, removed at exit


def tls_certs(kind: str) -> tuple[Path, Path]:
    """A self-signed certificate for localhost / 127.0.0.1 of `kind` (rsa: RSA-2048, ecdsa:
    ECDSA P-256), made once per runner process with openssl in a temporary folder (private
    keys stay out of the results that are committed)."""
    if not _CERT_DIR:
        import atexit
        import shutil
        import tempfile
        _CERT_DIR.append(Path(tempfile.mkdtemp(prefix="saturn-bench-tls-")))
        atexit.register(shutil.rmtree, _CERT_DIR[0], True)
    folder = _CERT_DIR[0]
    crt, key = folder / f"{kind}.crt", folder / f"{kind}.key"
    if crt.is_file() and key.is_file():
        return crt, key
    folder.mkdir(parents=True, exist_ok=True)
    newkey = ["-newkey", "rsa:2048"] if kind == "rsa" else \
        ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
    subprocess.run(["openssl", "req", "-x509", *newkey, "-nodes", "-keyout", str(key), "-out", str(crt),
                    "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return crt, key


_BULK_DIR: list = []  # the https_bulk file's folder, one per runner process, removed at exit
TLS_BULK_FILE_MIB = 16  # https_bulk downloads this file again and again (TLS_BULK_MIB in all)


def tls_bulk_data() -> Path:
    """A folder with static/bulk.bin: TLS_BULK_FILE_MIB MiB of tls-load's bulk pattern
    (byte i = (131 i + i / 4096) mod 256), made once per runner process, readable by
    nginx's workers (which run as another user)."""
    if not _BULK_DIR:
        import atexit
        import shutil
        import tempfile
        folder = Path(tempfile.mkdtemp(prefix="saturn-bench-tls-bulk-"))
        atexit.register(shutil.rmtree, folder, True)
        (folder / "static").mkdir()
        n = TLS_BULK_FILE_MIB << 20
        period = 256 * 4096  # the pattern repeats: i -> i + 2^20 adds 131 * 2^20 + 256 = 0 mod 256
        block = bytes(((i * 131 + (i >> 12)) & 0xFF) for i in range(period))
        with open(folder / "static" / "bulk.bin", "wb") as f:
            for _ in range(n // period):
                f.write(block)
        for d in (folder, folder / "static"):
            d.chmod(0o755)
        (folder / "static" / "bulk.bin").chmod(0o644)
        _BULK_DIR.append(folder)
    return _BULK_DIR[0]


def run_tls(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    """(JSON objects, {scenario: failure reason}) of one tls step: a TLS echo server with
    one certificate kind, tls-load per scenario (handshakes/s, resumed, bulk MB/s)."""
    load = run.paths.peer("tls-load")
    if not load.is_file():
        return [], {sc: f"load generator {load} not built" for sc in step.scenarios}
    kind = step.context["cert"]
    try:
        crt, key = tls_certs(kind)
    except (OSError, subprocess.SubprocessError) as e:
        return [], {sc: f"openssl could not make the {kind} certificate: {e}" for sc in step.scenarios}
    http = step.context.get("proto") == "http"
    if not Path(step.argv[0]).is_file():
        return [], {sc: f"{step.argv[0]} not built" for sc in step.scenarios}
    tls_port = 0
    if http and step.runtime == "saturn":
        # saturn-arena: the measured port is its TLS listener (HTTP/1.1, ALPN http/1.1);
        # --port (from Server) is its plain one, idle here; no HTTP/2 listeners.
        tls_port = _free_port()
        argv = [str(step.argv[0]), "--bind", "127.0.0.1", "--tls-port", str(tls_port),
                "--h2-port", "0", "--h2c-port", "0", "--tls-cert", str(crt), "--tls-key", str(key)]
        if "https_bulk" in step.scenarios:
            argv += ["--data", str(tls_bulk_data())]  # /static/bulk.bin (no dataset: /json unused)
    else:
        argv = [str(step.argv[0])] + (["--tls"] if step.runtime == "saturn" else []) + [
            "--tls-cert", str(crt), "--tls-key", str(key)]
        if http and "https_bulk" in step.scenarios:
            argv += ["--static", str(tls_bulk_data() / "static")]  # tls-nginx
    objs, reasons = [], {}
    with Server(argv, step.threads, [], log_path) as server:
        port = tls_port or server.port
        log(f"  {step.runtime}: pid {server.proc.pid}, 127.0.0.1:{port}, --threads {step.threads}, "
            f"{kind} certificate, {'HTTPS' if http else 'echo'}")
        if tls_port and not server.wait_port(tls_port, 15.0):
            return [], {sc: f"the TLS port {tls_port} never accepted" for sc in step.scenarios}
        for sc in step.scenarios:
            if not server.alive():
                reasons[sc] = "the server exited during an earlier scenario"
                continue
            p = run.params
            pids = ",".join(str(pid) for pid in tree(server.proc.pid))
            # tls-load knows the handshake_* names; https_* are the same runs over HTTP
            # (https_bulk: its bulk mode downloading /static/bulk.bin).
            load_sc = ("bulk" if sc == "https_bulk" else sc.replace("https_", "handshake_", 1)) if http else sc
            load_argv = [str(load), "--port", str(port), "--scenario", load_sc, "--runtime", step.runtime,
                         "--server-pid", pids, "--proto", "http" if http else "echo",
                         "--threads", str(TLS_LOAD_THREADS),
                         "--duration", str(p.duration), "--warmup", str(p.warmup),
                         "--samples", str(p.samples), "--cipher", TLS_BULK_CIPHER,
                         "--bulk-mib", str(16 if p.smoke else TLS_BULK_MIB), "--path", "/static/bulk.bin"]
            wait_quiet(run.quiet_wait)
            res = run_process(load_argv, timeout=120 + p.warmup + p.samples * p.duration, log_path=log_path,
                              header=f"tls {step.runtime} {sc} round {step.round}")
            obj, why = _one_object(res)
            if not server.alive():
                why = why or "the server exited during the run"
            if obj is not None:
                obj["scenario"] = sc
                obj["cert"] = kind
                objs.append(obj)
            if why:
                reasons[sc] = why
    return objs, reasons


def run_net(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    raise_nofile()
    try:
        from .arena import run_arena  # late import: arena imports this module
        runner = {"echo": run_echo, "tls": run_tls, "arena": run_arena}.get(step.suite, run_http)
        return runner(step, run, log_path)
    except ServerError as e:
        return [], {sc: str(e) for sc in step.scenarios}

