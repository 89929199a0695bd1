#!/usr/bin/env python3
"""arena_check_test.py SATURN_ARENA: the arena suite's answer checks (scripts/bench_lib/arena.py).

A profile is loaded only after check_profile found its answers right, so the checks must
pass a correct server and fail a wrong one. saturn-arena (the binary given) must pass
every profile, json-tls included; a fake server in this file, wrong in one way per
profile (a sum off by one, a total off, pipelined answers missing, no Connection: close,
a static file one byte short, a count that echoes Content-Length, the wrong accept key),
must fail each, and the reason must name what was wrong. The HTTP/2 profiles: saturn-arena
passes check_h2_profile on its --h2-port / --h2c-port; its HTTP/1.1 port (which also takes
h2c by prior knowledge) must fail the h2c checks (it serves HTTP/1.1), and the HTTP/1.1-only
fake must fail them (no HTTP/2). About 10 s.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from bench_lib import arena, netrun  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on {port} did not start")


# ----------------------------------------------------------------- the wrong server

def wrong_answer(head: bytes, body: bytes, data: Path) -> bytes:
    line = head.split(b"\r\n", 1)[0].decode()
    target = line.split()[1]
    path = target.split("?", 1)[0]

    def reply(text: bytes, ctype: bytes = b"text/plain", extra: bytes = b"") -> bytes:
        return (b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype + b"\r\nContent-Length: " +
                str(len(text)).encode() + b"\r\n" + extra + b"\r\n" + text)

    if path == "/baseline11":
        return reply(b"56")  # 13 + 42 is 55
    if path == "/pipeline":
        return reply(b"ok")
    if path.startswith("/json/"):  # the right count, every total one too high
        import json
        count = int(path[len("/json/"):])
        m = int(target.split("m=", 1)[1]) if "m=" in target else 1
        items = [dict(it, total=it["price"] * it["quantity"] * m + 1)
                 for it in json.loads((data / "dataset.json").read_text())[:count]]
        return reply(json.dumps({"items": items, "count": count}).encode(), b"application/json")
    if path == "/upload":
        for h in head.split(b"\r\n"):
            if h.lower().startswith(b"content-length:"):
                return reply(h.split(b":")[1].strip() + b"0")  # not the bytes read
    if path.startswith("/static/"):
        f = data / "static" / path[len("/static/"):]
        return reply(f.read_bytes()[:-1] if f.is_file() else b"")
    if path == "/ws":
        return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n")
    return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


def serve_wrong(listener: socket.socket, data: Path) -> None:
    def one(conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = 0
                chunked = False
                for h in head.split(b"\r\n")[1:]:
                    k, _, v = h.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v)
                    if k.strip().lower() == b"transfer-encoding":
                        chunked = True
                if chunked:
                    while b"0\r\n\r\n" not in buf:
                        buf += conn.recv(65536)
                    body, buf = buf.split(b"0\r\n\r\n", 1)
                else:
                    while len(buf) < length:
                        buf += conn.recv(65536)
                    body, buf = buf[:length], buf[length:]
                if head.startswith(b"PRI * HTTP/2.0"):
                    return  # HTTP/1.1 only: the HTTP/2 preface gets the connection closed
                conn.sendall(wrong_answer(head, body, data))
                if b"/pipeline" in head:
                    return  # answers only the first of a pipelined batch
    while True:
        try:
            c, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=one, args=(c,), daemon=True).start()


# ----------------------------------------------------------------- the cases

def main() -> int:
    if len(sys.argv) != 2:
        print("usage: arena_check_test.py SATURN_ARENA", file=sys.stderr)
        return 2
    failures = []
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        data = Path(tmp) / "data"
        subprocess.run([sys.executable, str(REPO / "tests" / "arena" / "gen_data.py"), str(data)],
                       check=True, capture_output=True)
        crt, key = netrun.tls_certs("rsa")
        port, tls_port, h2_port, h2c_port = free_port(), free_port(), free_port(), free_port()
        proc = subprocess.Popen([sys.argv[1], "--bind", "127.0.0.1", "--port", str(port), "--threads", "2",
                                 "--data", str(data), "--tls-port", str(tls_port), "--tls-cert", str(crt),
                                 "--tls-key", str(key), "--h2-port", str(h2_port), "--h2c-port", str(h2c_port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for p in (port, tls_port, h2_port, h2c_port):
                wait_port(p, proc)
            for profile in arena.PROFILES:
                if profile in arena.DB_PROFILES:
                    continue  # needs a database: arena_db checks them (tests/arena/db_validate.py)
                if profile in arena.H2_PROFILES:
                    why = arena.check_h2_profile(profile, h2_port if profile in arena.H2_TLS else h2c_port, data)
                else:
                    why = arena.check_profile(profile, port, tls_port, data)
                print(f"{'PASS' if not why else 'FAIL'} saturn-arena {profile}{': ' + why if why else ''}")
                if why:
                    failures.append(f"saturn-arena {profile}: {why}")
            # saturn-arena's HTTP/1.1 port also takes h2c by prior knowledge, but it serves
            # HTTP/1.1 too: the h2c profiles' check must refuse it as an h2c-only port.
            for profile in ("baseline-h2c", "json-h2c"):
                why = arena.check_h2_profile(profile, port, data)
                ok = "h2c-only port" in why
                print(f"{'PASS' if ok else 'FAIL'} HTTP/1.1 port as {profile} refused: {why or 'accepted'}")
                if not ok:
                    failures.append(f"h1 port as {profile}: {why or 'accepted'} (want 'h2c-only port')")
        finally:
            proc.terminate()
            proc.wait(timeout=10)

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        threading.Thread(target=serve_wrong, args=(listener, data), daemon=True).start()
        wrong_port = listener.getsockname()[1]
        want = {"baseline": "want 200 '55'", "limited-conn": "want 200 '55'",
                "pipelined": "3 pipelined", "json": "total", "json-comp": "Content-Encoding",
                "upload": "want 200 '300000'", "static": "want the file's",
                "echo-ws": "upgrade"}
        # HTTP/1.1 only: the HTTP/2 checks must see that no answer came over HTTP/2.
        want.update({"baseline-h2c": "HTTP version", "json-h2c": "HTTP version"})
        for profile, needle in want.items():
            why = (arena.check_h2_profile(profile, wrong_port, data) if profile in arena.H2_PROFILES
                   else arena.check_profile(profile, wrong_port, 0, data))
            ok = bool(why) and needle in why
            print(f"{'PASS' if ok else 'FAIL'} wrong server {profile} refused: {why or 'accepted'}")
            if not ok:
                failures.append(f"wrong server {profile}: {why or 'accepted'} (want a reason with {needle!r})")
        listener.close()
    for f in failures:
        print("FAILED", f)
    print(f"# {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
