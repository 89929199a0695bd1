#!/usr/bin/env python3
"""Concurrent streamed uploads to /upload: memory per upload, slow senders, aborted bodies.

1. N connections (default 16) each POST a 20 MB body at once, driven by one thread on
   non-blocking sockets; every answer must be the byte count. While they run, the server's
   VmRSS is sampled: (peak - baseline) / N must stay within --max-rss-kib-per-upload
   (default 256, the issue's target), so the server holds a window of each body, not the
   body. The baseline is taken after a warm-up round of the same N concurrent uploads of
   4 MiB each (64 MiB in all): each worker's receive buffer ring (1024 x 16 KiB, handed out
   by the kernel in ring order) is preallocated but only becomes resident as traffic first
   cycles through it, a one-time cost of the process that is not memory per upload. A
   server that held bodies would still grow by ~20 MiB per upload in the measured round.
2. The same N connections each POST --per-conn (default 32) bodies of 1 MiB one after the
   other (keep-alive), at once: RSS growth per connection within the same limit, so a
   connection holds one window however many bodies it streams (a buffer that grew by what
   came in with each next head held ~1 MiB per connection here).
3. A slow sender: 100 KB in 10 KB pieces, 100 ms apart; the answer must still be right.
4. Clients that abort mid-body (head + 1 MB of a declared 20 MB, then close): afterwards the
   server answers a request and holds no more descriptors than before.

Usage: upload_many.py --host 127.0.0.1 --port P [--uploads 16] [--per-conn 32] [--data DIR]
The server's PID comes from ARENA_SERVER_PID (run_validate.sh sets it). Exits 0 when all
checks pass, 1 otherwise.
"""
import argparse
import os
import selectors
import socket
import sys
import time

from arena_client import fd_count, rss_kib

SIZE = 20 * 1024 * 1024


def head(host, port, size):
    return (f"POST /upload HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()


def read_answer(sock, timeout=30.0):
    sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    hdr, _, body = buf.partition(b"\r\n\r\n")
    length = 0
    for line in hdr.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    status = int(hdr.split(b" ", 2)[1]) if hdr.startswith(b"HTTP/1.1 ") else 0
    return status, body


def concurrent_uploads(args, pid, failures, size=SIZE, measure=True, per_conn=1):
    block = os.urandom(1 << 20)

    def first(size):
        # The head goes out with the body's first 64 KiB, as a load generator writes a
        # request, so the server's read of the head brings body bytes in with it.
        lead = min(size, 64 * 1024)
        return {"head": head(args.host, args.port, size) + block[:lead], "sent": lead}

    sel = selectors.DefaultSelector()
    conns = []
    for i in range(args.uploads):
        s = socket.create_connection((args.host, args.port))
        s.setblocking(False)
        st = {"sock": s, "answer": b"", "i": i, "done": 0}
        st.update(first(size))
        conns.append(st)
        sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ, st)
    base = rss_kib(pid)
    peak = base
    pending = len(conns)
    deadline = time.monotonic() + args.deadline
    last_sample = 0.0
    while pending and time.monotonic() < deadline:
        for key, ev in sel.select(timeout=0.05):
            st = key.data
            s = st["sock"]
            if ev & selectors.EVENT_WRITE:
                try:
                    if st["head"]:
                        n = s.send(st["head"])
                        st["head"] = st["head"][n:]
                    elif st["sent"] < size:
                        off = st["sent"] % len(block)
                        n = s.send(block[off:off + min(len(block) - off, size - st["sent"])])
                        st["sent"] += n
                    if not st["head"] and st["sent"] >= size:
                        sel.modify(s, selectors.EVENT_READ, st)
                except BlockingIOError:
                    pass
            if ev & selectors.EVENT_READ:
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                st["answer"] += chunk
                ok = st["answer"].startswith(b"HTTP/1.1 200") and \
                    st["answer"].endswith(b"\r\n\r\n" + str(size).encode())
                if ok and st["done"] + 1 < per_conn:
                    # Keep-alive: the next upload on the same connection.
                    st.update(done=st["done"] + 1, answer=b"", **first(size))
                    sel.modify(s, selectors.EVENT_WRITE | selectors.EVENT_READ, st)
                elif not chunk or ok or b"\r\n\r\n" in st["answer"] and \
                        not st["answer"].startswith(b"HTTP/1.1 200"):
                    sel.unregister(s)
                    pending -= 1
        now = time.monotonic()
        if now - last_sample > 0.02:
            peak = max(peak, rss_kib(pid))
            last_sample = now
    for st in conns:
        ans = st["answer"]
        if not (ans.startswith(b"HTTP/1.1 200") and ans.endswith(b"\r\n\r\n" + str(size).encode())) or \
                st["done"] + 1 != per_conn:
            failures.append(f"upload {st['done'] + 1} of {per_conn} on connection {st['i']}, {size} bytes: "
                            f"sent {st['sent']} bytes, answer {ans[:60]!r}...{ans[-20:]!r}")
        st["sock"].close()
    if not measure:
        print(f"warm-up: {args.uploads} concurrent {size >> 20} MiB uploads, RSS {base} KiB before, peak {peak} KiB")
        return
    per = (peak - base) / max(1, args.uploads)
    what = f"{args.uploads} concurrent {size >> 20} MiB uploads" if per_conn == 1 else \
        f"{args.uploads} connections each uploading {per_conn} x {size >> 20} MiB (keep-alive)"
    print(f"{what}: RSS {base} KiB before, peak {peak} KiB, "
          f"{per:.0f} KiB per connection (limit {args.max_rss_kib_per_upload})")
    if args.max_rss_kib_per_upload <= 0:
        print("  (RSS not checked: --max-rss-kib-per-upload 0, e.g. a sanitizer build)")
    elif per > args.max_rss_kib_per_upload:
        failures.append(f"{what}: RSS grew {per:.0f} KiB per connection (> {args.max_rss_kib_per_upload})")


def slow_upload(args, failures):
    data = os.urandom(100_000)
    with socket.create_connection((args.host, args.port)) as s:
        s.sendall(head(args.host, args.port, len(data)))
        for off in range(0, len(data), 10_000):
            s.sendall(data[off:off + 10_000])
            time.sleep(0.1)
        status, body = read_answer(s)
    ok = status == 200 and body == b"100000"
    print(f"slow upload (10 pieces, 100 ms apart): {status} {body!r}")
    if not ok:
        failures.append(f"slow upload: {status} {body!r}")


def aborted_uploads(args, pid, failures):
    before = fd_count(pid)
    block = os.urandom(1 << 20)
    for _ in range(8):
        s = socket.create_connection((args.host, args.port))
        s.sendall(head(args.host, args.port, SIZE) + block)
        s.close()
    time.sleep(0.5)
    with socket.create_connection((args.host, args.port)) as s:
        s.sendall(head(args.host, args.port, 3) + b"abc")
        status, body = read_answer(s)
    if status != 200 or body != b"3":
        failures.append(f"after aborted uploads: {status} {body!r}")
    deadline = time.monotonic() + 5
    after = fd_count(pid)
    while after > before and time.monotonic() < deadline:
        time.sleep(0.1)
        after = fd_count(pid)
    print(f"8 uploads aborted mid-body: server descriptors {before} before, {after} after; next upload {status}")
    if after > before:
        failures.append(f"descriptors leaked: {before} before the aborted uploads, {after} after")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data")
    ap.add_argument("--uploads", type=int, default=16)
    ap.add_argument("--per-conn", type=int, default=32, help="keep-alive uploads per connection, last round")
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--max-rss-kib-per-upload", type=float, default=256.0, help="0: do not check RSS")
    args = ap.parse_args()
    pid = int(os.environ.get("ARENA_SERVER_PID", "0"))
    if pid <= 0:
        print("upload_many: ARENA_SERVER_PID is not set (run through run_validate.sh)", file=sys.stderr)
        return 1
    failures = []
    # Warm the server's allocator and receive buffers first (see the module comment), so
    # the baseline is not a cold start.
    concurrent_uploads(args, pid, failures, size=4 << 20, measure=False)
    concurrent_uploads(args, pid, failures)
    concurrent_uploads(args, pid, failures, size=1 << 20, per_conn=args.per_conn)
    slow_upload(args, failures)
    aborted_uploads(args, pid, failures)
    for f in failures:
        print("FAIL " + f)
    print("upload_many: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
