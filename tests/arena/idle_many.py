#!/usr/bin/env python3
"""Many idle connections held by saturn-arena: RSS per connection, and every one still served.

For each kind (HTTP keep-alive, then WebSocket), N connections (default 32,768) are opened,
each does one full exchange (GET /baseline11 and its answer, or the /ws upgrade and one
echoed text message), and then all of them sit idle at once. The server's VmRSS is sampled
before (after a warm-up round of 1,024 connections that is then closed, so allocator and
receive buffers are not a cold start) and once every connection is idle:
(idle RSS - baseline) / N must stay within --max-rss-kib-per-conn (default 4, the issue's
target). Then every connection is used once more (a request, or a message) and must be
answered: the server held them, it did not drop them to save memory. Finally all are closed
and the server must still answer a new request.

N connections to one server address need more than one client address (one source address
has ~28,000 ephemeral ports): the client binds its sockets to 127.0.0.2, 127.0.0.3, ...
(all of 127/8 is loopback). Needs RLIMIT_NOFILE above N on both sides: run_validate.sh raises
it with ARENA_NOFILE where it may; where the hard limit stays lower, fewer connections are
held and the output says how many and why (77, skipped, only below 1,024).

Usage: idle_many.py --host 127.0.0.1 --port P [--conns 32768] [--kinds http,ws] [--data DIR]
The server's PID comes from ARENA_SERVER_PID (run_validate.sh sets it). Exits 0 when all
checks pass, 1 otherwise, 77 when the descriptor limit cannot be raised.
"""
import argparse
import base64
import errno
import os
import selectors
import socket
import sys
import time

from arena_client import raise_nofile, rss_kib, ws_frame, ws_upgrade_request

PER_SOURCE = 16384  # connections per client source address


def http_request(host, port):
    return f"GET /baseline11?a=1&b=2 HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()


def ws_upgrade(host, port, i):
    key = base64.b64encode(i.to_bytes(16, "little")).decode()
    return ws_upgrade_request("/ws", key, host=f"{host}:{port}")


def http_done(buf):
    """The answer is complete: a head and Content-Length bytes of body."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return len(body) >= int(v.strip())
    return True


class Conn:
    __slots__ = ("sock", "out", "got", "want", "ok")

    def __init__(self, sock):
        self.sock = sock
        self.out = b""
        self.got = b""
        self.want = None
        self.ok = False


def exchange(conns, kind, first, host, port, deadline, failures, base=0):
    """One exchange on every connection at once: send `out`, read until the answer is whole."""
    sel = selectors.DefaultSelector()
    for i, c in enumerate(conns, base):
        c.got = b""
        c.ok = False
        if kind == "http":
            c.out = http_request(host, port)
        elif first:
            c.out = ws_upgrade(host, port, i) + ws_frame(0x1, b"hello %d" % i)
        else:
            c.out = ws_frame(0x1, b"again %d" % i)
        c.want = b"hello %d" % i if first else b"again %d" % i
        sel.register(c.sock, selectors.EVENT_WRITE, c)
    pending = len(conns)
    while pending and time.monotonic() < deadline:
        for key, ev in sel.select(timeout=0.2):
            c = key.data
            try:
                if ev & selectors.EVENT_WRITE:
                    n = c.sock.send(c.out)
                    c.out = c.out[n:]
                    if not c.out:
                        sel.modify(c.sock, selectors.EVENT_READ, c)
                    continue
                chunk = c.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                chunk = b""
                c.got += f" [{e}]".encode()
            if chunk:
                c.got += chunk
                if kind == "http":
                    c.ok = c.got.startswith(b"HTTP/1.1 200") and http_done(c.got)
                    done = c.ok
                else:
                    frame = c.got.split(b"\r\n\r\n", 1)[1] if first else c.got
                    if first and b"\r\n\r\n" not in c.got:
                        continue
                    if first and not c.got.startswith(b"HTTP/1.1 101"):
                        done = True
                    else:
                        expect = bytes([0x81, len(c.want)]) + c.want
                        c.ok = frame == expect
                        done = len(frame) >= len(expect)
                if not done:
                    continue
            sel.unregister(c.sock)
            pending -= 1
    sel.close()
    bad = [i for i, c in enumerate(conns) if not c.ok]
    if bad:
        c = conns[bad[0]]
        bad[0] += base
        failures.append(f"{kind}: {len(bad)} of {len(conns)} connections got no right answer "
                        f"({'first' if first else 'second'} exchange; connection {bad[0]} got {c.got[:80]!r})")
    return not bad


def open_conns(n, kind, host, port, deadline, failures, batch=512):
    """Opens n connections, a batch at a time (non-blocking connects), each batch doing its
    first exchange at once, so that no connection waits long for its first request (the
    server's idle timeout would rightly close it)."""
    conns = []
    for first in range(0, n, batch):
        group = []
        for i in range(first, min(n, first + batch)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((f"127.0.0.{2 + i // PER_SOURCE}", 0))
                s.setblocking(False)
                err = s.connect_ex((host, port))
            except OSError as e:
                err = e.errno
            if err not in (0, errno.EINPROGRESS):
                failures.append(f"connection {i} of {n}: {os.strerror(err)}")
                s.close()
                close_all(group)
                return conns
            group.append(Conn(s))
        ok = exchange(group, kind, True, host, port, deadline, failures, base=first)
        conns += group
        if not ok:
            return conns
        if time.monotonic() > deadline:
            failures.append(f"opening {n} connections took too long ({len(conns)} open)")
            return conns
    return conns


def close_all(conns):
    for c in conns:
        c.sock.close()


def one_kind(args, pid, kind, failures):
    deadline = time.monotonic() + args.deadline
    warm = open_conns(1024, kind, args.host, args.port, deadline, failures)
    close_all(warm)
    time.sleep(0.5)
    base = rss_kib(pid)
    t0 = time.monotonic()
    conns = open_conns(args.conns, kind, args.host, args.port, deadline, failures)
    if len(conns) < args.conns:
        close_all(conns)
        return
    time.sleep(1.0)
    idle = rss_kib(pid)
    per = (idle - base) / len(conns)
    print(f"{kind}: {len(conns)} idle connections in {time.monotonic() - t0:.1f} s; server RSS {base} KiB "
          f"before, {idle} KiB with all idle: {per:.2f} KiB per connection (limit {args.max_rss_kib_per_conn})")
    if args.max_rss_kib_per_conn <= 0:
        print("  (RSS not checked: --max-rss-kib-per-conn 0, e.g. a sanitizer build)")
    elif per > args.max_rss_kib_per_conn:
        failures.append(f"{kind}: {per:.2f} KiB of RSS per idle connection (> {args.max_rss_kib_per_conn})")
    if exchange(conns, kind, False, args.host, args.port, deadline, failures):
        print(f"{kind}: every one of the {len(conns)} idle connections answered again")
    close_all(conns)
    time.sleep(0.5)
    with socket.create_connection((args.host, args.port), timeout=10) as s:
        s.sendall(http_request(args.host, args.port))
        got = b""
        while not http_done(got):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        failures.append(f"{kind}: after closing the idle connections the server answered {got[:60]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data")
    ap.add_argument("--conns", type=int, default=32768)
    ap.add_argument("--kinds", default="http,ws")
    ap.add_argument("--deadline", type=float, default=240.0, help="seconds per kind")
    ap.add_argument("--max-rss-kib-per-conn", type=float, default=4.0, help="0: do not check RSS")
    args = ap.parse_args()
    pid = int(os.environ.get("ARENA_SERVER_PID", "0"))
    if pid <= 0:
        print("idle_many: ARENA_SERVER_PID is not set (run through run_validate.sh)", file=sys.stderr)
        return 1
    server_limit = 0
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                server_limit = int(line.split()[3])
    # Both ends need a descriptor per connection. Where the hard limit is below that and
    # cannot be raised (no CAP_SYS_RESOURCE), hold as many as it allows and say so.
    want = args.conns
    client_limit = raise_nofile(want + 2048)
    fit = (min(server_limit, client_limit) - 2048) // 1024 * 1024
    if fit < want:
        if fit < 1024:
            print(f"idle_many: SKIP: descriptor limits too low (server {server_limit}, client {client_limit})")
            return 77
        print(f"idle_many: holding {fit} connections, not the {want} asked: RLIMIT_NOFILE allows "
              f"{server_limit} descriptors to the server and {client_limit} to this client (hard limits; "
              "raising them needs CAP_SYS_RESOURCE)")
        args.conns = fit
    failures = []
    for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
        one_kind(args, pid, kind, failures)
    for f in failures:
        print("FAIL " + f)
    print("idle_many: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
