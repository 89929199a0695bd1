#!/usr/bin/python3
"""The rpc suite's own client (scripts/bench_lib/rpc.py runs it with Debian's
/usr/bin/python3, which has python3-grpcio and python3-h2). Prints one JSON object.

  grpc_client.py check PORT CALLS
      grpcio: CALLS GetSum calls (64 in flight) with random a, b in [-10^6, 10^6]; a call
      counts as good when its status is OK (grpc-status 0) and result == a + b. Then
      grpc.health.v1.Health/Check("benchmark.BenchmarkService") must say SERVING.
      {"calls", "good", "bad", "serving"}

  grpc_client.py cold RUNS ARGV... ("{port}" in ARGV is replaced by a free port)
      RUNS times: t0, fork/exec of ARGV (subprocess.Popen), then poll 127.0.0.1:port —
      connect (refused: retry after 200 µs), a Health/Check of benchmark.BenchmarkService
      over one HTTP/2 stream written with python3-h2 — until an answer with grpc-status 0
      and status SERVING; t1. The server is stopped by its PID (SIGTERM, 5 s, SIGKILL)
      before the next run. With the last run's server still up, the same connect + Check
      is timed 20 times against the warm server: the client's own cost (`client_ms`,
      median), part of every cold-start figure.
      {"runs", "cold_ms": [...], "cold_ms_median", "client_ms", "attempts": [...]}
"""

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time

HEALTH_PATH = "/grpc.health.v1.Health/Check"
SERVICE = b"benchmark.BenchmarkService"


def frame(msg: bytes) -> bytes:
    return b"\x00" + len(msg).to_bytes(4, "big") + msg


def check(port: int, calls: int) -> dict:
    import grpc
    from concurrent.futures import ThreadPoolExecutor

    def varint(v: int) -> bytes:
        v &= (1 << 64) - 1
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def parse_result(data: bytes) -> int | None:
        # SumReply{int32 result = 1}: empty (0) or 08 <varint>
        if data == b"":
            return 0
        if data[0] != 0x08:
            return None
        v, shift = 0, 0
        for b in data[1:]:
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        v &= (1 << 32) - 1
        return v - (1 << 32) if v >= 1 << 31 else v

    ch = grpc.insecure_channel(f"127.0.0.1:{port}")
    get_sum = ch.unary_unary("/benchmark.BenchmarkService/GetSum",
                             request_serializer=lambda b: b, response_deserializer=lambda b: b)
    rng = random.Random(27)
    pairs = [(rng.randint(-10**6, 10**6), rng.randint(-10**6, 10**6)) for _ in range(calls)]

    def one(ab):
        a, b = ab
        try:
            rep = get_sum(b"\x08" + varint(a) + b"\x10" + varint(b), timeout=10)
        except grpc.RpcError:
            return False
        return parse_result(rep) == a + b

    with ThreadPoolExecutor(64) as ex:
        good = sum(1 for ok in ex.map(one, pairs) if ok)
    health = ch.unary_unary(HEALTH_PATH, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    try:
        serving = health(b"\x0a" + bytes([len(SERVICE)]) + SERVICE, timeout=5) == b"\x08\x01"
    except grpc.RpcError:
        serving = False
    ch.close()
    return {"calls": calls, "good": good, "bad": calls - good, "serving": serving}


def health_once(port: int, deadline: float) -> tuple[bool, int]:
    """(SERVING answered, attempts): connect + one Health/Check, retried until `deadline`."""
    import h2.config
    import h2.connection
    import h2.events

    attempts = 0
    req = frame(b"\x0a" + bytes([len(SERVICE)]) + SERVICE)
    while time.monotonic() < deadline:
        attempts += 1
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            time.sleep(0.0002)
            continue
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            conn.initiate_connection()
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", HEALTH_PATH),
                                    (":authority", f"127.0.0.1:{port}"),
                                    ("content-type", "application/grpc"), ("te", "trailers")])
            conn.send_data(sid, req, end_stream=True)
            sock.sendall(conn.data_to_send())
            body, status, ended = b"", None, False
            while not ended:
                data = sock.recv(65536)
                if not data:
                    break
                for ev in conn.receive_data(data):
                    if isinstance(ev, h2.events.DataReceived) and ev.stream_id == sid:
                        body += ev.data
                        conn.acknowledge_received_data(ev.flow_controlled_length, sid)
                    elif isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)) \
                            and ev.stream_id == sid:
                        for k, v in ev.headers:
                            if k in (b"grpc-status", "grpc-status"):
                                status = int(v)
                    elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)) and ev.stream_id == sid:
                        ended = True
                out = conn.data_to_send()
                if out:
                    sock.sendall(out)
            if status == 0 and body == frame(b"\x08\x01"):
                return True, attempts
        except (OSError, Exception):  # a server that accepted too early: try again
            pass
        finally:
            sock.close()
        time.sleep(0.0002)
    return False, attempts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cold(runs: int, argv: list) -> dict:
    import statistics

    # Import and warm the client's own code before any timing.
    health_once(free_port(), time.monotonic() + 0.01)
    cold_ms, attempts, client_ms = [], [], []
    for i in range(runs):
        port = free_port()
        args = [a.replace("{port}", str(port)) for a in argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            ok, n = health_once(port, time.monotonic() + 10)
            t1 = time.perf_counter()
            if not ok or proc.poll() is not None:
                return {"error": f"run {i}: no SERVING answer within 10 s (exit {proc.poll()})"}
            cold_ms.append((t1 - t0) * 1e3)
            attempts.append(n)
            if i == runs - 1:
                for _ in range(20):
                    c0 = time.perf_counter()
                    ok, _ = health_once(port, time.monotonic() + 5)
                    client_ms.append((time.perf_counter() - c0) * 1e3)
                    if not ok:
                        return {"error": "the warm server did not answer SERVING"}
        finally:
            stop(proc)
    return {"runs": runs, "cold_ms": [round(x, 3) for x in cold_ms],
            "cold_ms_median": round(statistics.median(cold_ms), 3),
            "client_ms": round(statistics.median(client_ms), 3), "attempts": attempts}


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        out = check(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "cold":
        out = cold(int(sys.argv[2]), sys.argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0 if "error" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
