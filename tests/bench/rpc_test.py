#!/usr/bin/env python3
"""rpc_test.py SATURN_ARENA: the rpc suite's answer checks (scripts/bench_lib/rpc.py,
checks.check_rpc).

Offline: h2load's summary is parsed; a run with the right counts passes, one with an
errored stream, a non-2xx answer or a DATA byte count other than 7 per answer fails;
check_rpc fails an in-process record whose checksum is off; rpc-load's result line is
parsed and a run with a bad or missing answer, or one that fell behind, is not sustained.
Live (needs h2load and Debian's /usr/bin/python3 with python3-grpcio): saturn-arena passes
the 1,000-call check, a 1 s h2load run passes h2load_failure, and rpc-load (compiled here
from bench/peers/load/rpc_load.c) holds 2,000 calls/s with every answer good; a fake grpcio
server that answers a + b + 1 fails the check and rpc-load's answer check, and one that
reports NOT_SERVING fails the check too. About 10 s.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from bench_lib import rpc  # noqa: E402
from bench_lib.checks import check_record  # noqa: E402

SAMPLE = """\
finished in 3.02s, 82632.00 req/s, 3.39MB/s
requests: 247896 total, 249496 started, 247896 done, 247896 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 247896 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 10.17MB (10662072) total, 1.89MB (1984560) headers (space savings 91.83%), 1.65MB (1735272) data
"""

FAKE_SERVER = r'''
import sys, time, grpc
from concurrent import futures
mode, port = sys.argv[1], int(sys.argv[2])
def get_sum(req, ctx):
    a = b = 0
    i = 0
    vals = {}
    while i < len(req):
        tag = req[i]; i += 1
        v, s = 0, 0
        while True:
            c = req[i]; i += 1
            v |= (c & 0x7f) << s; s += 7
            if not c & 0x80: break
        v &= (1 << 32) - 1
        vals[tag >> 3] = v - (1 << 32) if v >= 1 << 31 else v
    r = (vals.get(1, 0) + vals.get(2, 0) + (1 if mode == "wrong" else 0)) & 0xffffffffffffffff
    out = bytearray(b"\x08")
    while True:
        c = r & 0x7f; r >>= 7
        out.append(c | (0x80 if r else 0))
        if not r: break
    return bytes(out)
def check(req, ctx):
    return b"\x08\x02" if mode == "not_serving" else b"\x08\x01"
h = grpc.method_handlers_generic_handler("benchmark.BenchmarkService", {
    "GetSum": grpc.unary_unary_rpc_method_handler(get_sum)})
hh = grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
    "Check": grpc.unary_unary_rpc_method_handler(check)})
s = grpc.server(futures.ThreadPoolExecutor(8), handlers=[h, hh])
s.add_insecure_port(f"127.0.0.1:{port}")
s.start()
s.wait_for_termination()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc) -> None:
    for _ in range(200):
        if proc.poll() is not None:
            raise SystemExit(f"server exited {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not listen")


def stop(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def offline() -> None:
    r = rpc.parse_h2load(SAMPLE)
    assert r and r["requests"] == 247896 and r["rps"] == 82632.0, r
    assert r["bytes_data"] == 1735272 and r["status_2xx"] == 247896, r
    assert rpc.h2load_failure(r) == "", rpc.h2load_failure(r)
    assert "errored" in rpc.h2load_failure(rpc.parse_h2load(SAMPLE.replace("0 errored", "3 errored")))
    assert "2xx" in rpc.h2load_failure(rpc.parse_h2load(SAMPLE.replace("247896 2xx", "247895 2xx")))
    assert "not 2xx" in rpc.h2load_failure(rpc.parse_h2load(SAMPLE.replace("0 5xx", "1 5xx")))
    assert "DATA" in rpc.h2load_failure(rpc.parse_h2load(SAMPLE.replace("(1735272) data", "(1735271) data")))
    # streams open at the end (started - done = 1600) may add their HEADERS and DATA ...
    assert rpc.h2load_failure(rpc.parse_h2load(
        SAMPLE.replace("247896 2xx", "247897 2xx").replace("(1735272) data", "(1735279) data"))) == ""
    # ... but no more than 7 bytes each
    assert "DATA" in rpc.h2load_failure(rpc.parse_h2load(
        SAMPLE.replace("(1735272) data", f"({1735272 + 7 * 1600 + 1}) data")))
    assert rpc.parse_h2load("connect failed") is None
    line = ('RPC_RESULT {"calls":2000,"errors":0,"unfinished":0,"duration_s":1.000,"target_rps":2000,'
            '"calls_per_sec":2000.0,"p50_us":90.0,"p90_us":120.0,"p99_us":400.0,"p999_us":900.0,'
            '"max_us":1000.0,"max_send_lag_us":50.0,"conns":16,"streams":100}')
    r = rpc.parse_rpc_load("noise\n" + line + "\n")
    assert r and r["rps"] == 2000.0 and r["requests"] == 2000 and r["streams_timeout"] == 0, r
    assert rpc.rpc_load_failure(r) == "" and rpc.sustained(r, 2000), r
    assert not rpc.sustained({**r, "p99_us": 20000.0}, 2000)
    assert not rpc.sustained({**r, "calls_per_sec": 1800.0}, 2000)
    assert "bad answers" in rpc.rpc_load_failure({**r, "errors": 1})
    assert "unanswered" in rpc.rpc_load_failure({**r, "unfinished": 1})
    assert not rpc.sustained(None, 2000) and rpc.parse_rpc_load("RPC_RESULT {") is None
    base = {"suite": "rpc", "runtime": "saturn", "threads": 1, "scenario": "inproc_unary", "calls": 3,
            "expected_checksum": 30}
    assert check_record({**base, "checksum": 30}, "rpc", "saturn", {}) is None
    assert check_record({**base, "checksum": 31}, "rpc", "saturn", {}) is not None
    unary = {"suite": "rpc", "runtime": "go", "threads": 2, "scenario": "unary", "streams_succeeded": 9,
             "calls_per_cpu_s": 5.0}
    assert check_record(unary, "rpc", "go", {}) is None
    assert check_record({**unary, "streams_errored": 1}, "rpc", "go", {}) is not None


def build_rpc_load(out_dir: Path) -> Path:
    exe = out_dir / "rpc-load"
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                    str(REPO / "bench/peers/load/rpc_load.c"), "-o", str(exe), "-lnghttp2"], check=True)
    return exe


def rpc_load(exe: Path, port: int, rate: int) -> dict | None:
    out = subprocess.run(rpc.rpc_load_argv(exe, port, rate, 0.2, 1), capture_output=True, text=True,
                         timeout=60).stdout
    return rpc.parse_rpc_load(out)


def live(arena: str) -> None:
    run = SimpleNamespace(paths=SimpleNamespace(repo=REPO))
    exe = build_rpc_load(Path(tempfile.mkdtemp(prefix="rpc-load.")))
    log = Path(tempfile.mkdtemp(prefix="rpc-test.")) / "rpc.log"
    port = free_port()
    proc = subprocess.Popen([arena, "--port", str(port), "--h2c-port", "0", "--tls-port", "0", "--h2-port", "0",
                             "--threads", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_port(port, proc)
        why = rpc.client_check(run, port, log, "saturn check")
        assert why == "", why
        fd, req = tempfile.mkstemp()
        with os.fdopen(fd, "wb") as f:
            f.write(rpc.REQUEST)
        out = subprocess.run(rpc.h2load_argv(port, 1, req), capture_output=True, text=True, timeout=60).stdout
        os.unlink(req)
        r = rpc.parse_h2load(out)
        assert r and rpc.h2load_failure(r) == "", (out, r and rpc.h2load_failure(r))
        r = rpc_load(exe, port, 2000)
        assert r and rpc.rpc_load_failure(r) == "" and r["calls"] >= 1900 and r["tick_us"] == rpc.TICK_US, r
    finally:
        stop(proc)
    for mode, want in (("wrong", "GetSum check"), ("not_serving", "SERVING")):
        port = free_port()
        proc = subprocess.Popen([rpc.PYTHON, "-c", FAKE_SERVER, mode, str(port)], start_new_session=True)
        try:
            wait_port(port, proc)
            why = rpc.client_check(run, port, log, f"fake {mode}")
            assert want in why, (mode, why)
            if mode == "wrong":
                r = rpc_load(exe, port, 200)
                assert r and "bad answers" in rpc.rpc_load_failure(r), r
        finally:
            stop(proc)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: rpc_test.py SATURN_ARENA", file=sys.stderr)
        return 2
    offline()
    has_grpc = subprocess.run([rpc.PYTHON, "-c", "import grpc, h2"], capture_output=True).returncode == 0 \
        if os.path.exists(rpc.PYTHON) else False
    if not shutil.which("h2load") or not has_grpc:
        print("rpc_test: h2load or /usr/bin/python3 with grpcio and h2 missing: live part skipped")
        return 0
    live(sys.argv[1])
    print("rpc_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
