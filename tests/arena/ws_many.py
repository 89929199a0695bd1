#!/usr/bin/env python3
"""Open many concurrent WebSocket connections to /ws and check one echo on each.

All N connections are upgraded and held open at the same time; only then does each send
one masked text frame carrying its own id, and every echo must come back on its own
connection, unmasked, with the same payload. Non-blocking sockets on epoll (selectors),
one thread, an overall deadline. Raises RLIMIT_NOFILE to fit N sockets.

Usage: ws_many.py --host 127.0.0.1 --port P [--connections 10000] [--deadline 120] [--data DIR]
Exits 0 when every connection echoed, 1 otherwise (with a count of what went wrong).
"""
import argparse
import base64
import errno
import os
import selectors
import socket
import struct
import sys
import time

from arena_client import raise_nofile, ws_accept, ws_frame, ws_upgrade_request


class Client:
    __slots__ = ("sock", "idx", "key", "state", "out", "inb", "payload")

    def __init__(self, idx):
        self.idx = idx
        self.key = base64.b64encode(os.urandom(16)).decode()
        self.state = "connecting"
        self.out = b""
        self.inb = b""
        self.payload = f"conn-{idx}-{os.urandom(4).hex()}".encode()
        self.sock = None


def parse_frame(buf):
    """(opcode, payload, masked, rest) or None when `buf` holds no complete frame yet."""
    if len(buf) < 2:
        return None
    n, off = buf[1] & 0x7F, 2
    if n == 126:
        if len(buf) < 4:
            return None
        n, off = struct.unpack("!H", buf[2:4])[0], 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n, off = struct.unpack("!Q", buf[2:10])[0], 10
    masked = bool(buf[1] & 0x80)
    off += 4 if masked else 0
    if len(buf) < off + n:
        return None
    return buf[0] & 0x0F, buf[off:off + n], masked, buf[off + n:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--connecting", type=int, default=512, help="max handshakes in progress")
    ap.add_argument("--data", help="ignored (accepted for run_validate.sh)")
    args = ap.parse_args()
    n = args.connections
    limit = raise_nofile(n + 64)
    if limit < n + 64:
        print(f"FAIL setup: RLIMIT_NOFILE is {limit}, need {n + 64} for {n} connections")
        return 1
    sel = selectors.DefaultSelector()
    clients = [Client(i) for i in range(n)]
    pending = list(reversed(clients))  # not yet connected
    in_handshake = upgraded = echoed = 0
    errors = {}
    end = time.monotonic() + args.deadline
    host = f"{args.host}:{args.port}"

    def fail(c, why):
        nonlocal in_handshake
        errors[why] = errors.get(why, 0) + 1
        if c.state in ("connecting", "handshake"):
            in_handshake -= 1
        c.state = "failed"
        try:
            sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()

    def start(c):
        nonlocal in_handshake
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.sock = s
        in_handshake += 1
        rc = s.connect_ex((args.host, args.port))
        if rc not in (0, errno.EINPROGRESS):
            fail(c, f"connect: {os.strerror(rc)}")
            return
        c.out = ws_upgrade_request("/ws", c.key, host=host)
        sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ, c)

    def flush(c):
        try:
            sent = c.sock.send(c.out)
        except BlockingIOError:
            return
        except OSError as e:
            fail(c, f"send: {e.strerror}")
            return
        c.out = c.out[sent:]
        if not c.out:
            sel.modify(c.sock, selectors.EVENT_READ, c)

    released = False
    while time.monotonic() < end:
        while pending and in_handshake < args.connecting:
            start(pending.pop())
        if not released and not pending and in_handshake == 0:
            released = True  # every connection is open (or failed): now each sends its frame
            for c in clients:
                if c.state == "open":
                    c.state = "echo"
                    c.out = ws_frame(0x1, c.payload)
                    sel.modify(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
        if released and echoed + sum(errors.values()) == n:
            break
        for key, ev in sel.select(timeout=0.5):
            c = key.data
            if ev & selectors.EVENT_WRITE and c.out:
                flush(c)
                if c.state == "failed":
                    continue
            if not ev & selectors.EVENT_READ:
                continue
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                fail(c, f"recv: {e.strerror}")
                continue
            if not data:
                fail(c, f"closed by server while {c.state}")
                continue
            c.inb += data
            if c.state in ("connecting", "handshake"):
                c.state = "handshake"
                if b"\r\n\r\n" not in c.inb:
                    continue
                head, c.inb = c.inb.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                accept = [ln.split(":", 1)[1].strip() for ln in lines[1:]
                          if ln.lower().startswith("sec-websocket-accept:")]
                if " 101 " not in lines[0] + " " or accept != [ws_accept(c.key)]:
                    fail(c, f"bad upgrade answer: {lines[0][:40]}")
                    continue
                in_handshake -= 1
                upgraded += 1
                c.state = "open"
            if c.inb and c.state == "open":
                fail(c, "unsolicited bytes before the frame was sent")
            elif c.state == "echo":
                fr = parse_frame(c.inb)
                if fr is None:
                    continue
                op, payload, masked, rest = fr
                if op != 0x1 or payload != c.payload or masked or rest:
                    fail(c, "wrong echo")
                    continue
                echoed += 1
                c.state = "done"
                sel.unregister(c.sock)
    timed_out = echoed + sum(errors.values()) < n
    for c in clients:
        if c.sock is not None:
            c.sock.close()
    ok = echoed == n
    detail = f"{upgraded}/{n} upgraded concurrently, {echoed}/{n} echoed"
    if errors:
        detail += "; errors: " + ", ".join(f"{k} x{v}" for k, v in sorted(errors.items()))
    if timed_out:
        detail += f"; deadline of {args.deadline:.0f} s reached"
    print(f"{'PASS' if ok else 'FAIL'} ws-many {n} concurrent WebSocket echoes: {detail}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
