"""echo-ws checks for validate.py: HttpArena's WebSocket checks (c25..c32) plus extras."""
import os
import struct

from arena_client import (Conn, ProtocolError, mask_bytes, sleep_ms, ws_accept, ws_frame,
                          ws_open, ws_read_frame, ws_upgrade_request)

OP_CONT, OP_TEXT, OP_BIN, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def echo_ws(r, rnd):
    state = {}

    def c25():
        conn, resp, key = ws_open(r.host, r.port)
        state.update(conn=conn, resp=resp, key=key)
        r.heads.setdefault("echo-ws", []).append(("GET /ws upgrade", resp))
        return resp.status == 101, f"HTTP {resp.status} {resp.reason}"
    r.run("c25 ws upgrade -> 101", c25)
    conn = state.get("conn")
    if conn is None or state["resp"].status != 101:
        r.result("c26..c30 ws echo checks", False, "no upgraded connection")
    else:
        def c26():
            got, want = state["resp"].header("sec-websocket-accept"), ws_accept(state["key"])
            return got == want, f"got {got}, want {want}"
        r.run("c26 ws Sec-WebSocket-Accept", c26)

        def c27():
            msg = f"HttpArena-validate-{rnd.randbytes(8).hex()}".encode()
            conn.send(ws_frame(OP_TEXT, msg))
            fin, op, payload, masked = ws_read_frame(conn)
            return op == OP_TEXT and payload == msg and fin and not masked, f"opcode {op}, {payload[:40]!r}"
        r.run("c27 ws text echo", c27)

        def c28():
            data = rnd.randbytes(256)
            conn.send(ws_frame(OP_BIN, data))
            fin, op, payload, masked = ws_read_frame(conn)
            return op == OP_BIN and payload == data and not masked, f"opcode {op}, {len(payload)} B"
        r.run("c28 ws binary echo, 256 B (16-bit length)", c28)

        def c29():
            msgs = [f"msg-{i}-{rnd.randbytes(4).hex()}".encode() for i in range(5)]
            conn.send(b"".join(ws_frame(OP_TEXT, m) for m in msgs))
            for i, m in enumerate(msgs):
                fin, op, payload, masked = ws_read_frame(conn)
                if op != OP_TEXT or payload != m:
                    return False, f"frame {i}: opcode {op}, {payload!r}, want {m!r}"
            return True, "5 in order"
        r.run("c29 ws 5 back-to-back text frames echoed in order", c29)

        def c30():
            conn.send(ws_frame(OP_CLOSE, struct.pack("!H", 1000) + b"validate done"))
            try:
                fin, op, payload, masked = ws_read_frame(conn)
            except (ProtocolError, OSError) as e:
                return True, f"connection ended ({e})"
            return True, f"got opcode {op} {payload[:2].hex()}"
        r.run("c30 ws close frame (no assertion, as HttpArena)", c30)

        def close_strict():
            # c30 already read the server's answer; now the TCP connection should end.
            return conn.closed_by_peer(3.0), "server closed TCP after the close handshake"
        r.run("x-ws server closes TCP after the close handshake", close_strict)
        conn.close()

    def c31():
        c = Conn(r.host, r.port, timeout=3.0)
        try:
            c.send(f"GET /ws HTTP/1.1\r\nHost: {r.host}:{r.port}\r\nConnection: keep-alive\r\n\r\n".encode())
            try:
                resp = c.read_response()
            except (ProtocolError, OSError) as e:
                return True, f"connection closed ({e})"
            r.heads.setdefault("echo-ws", []).append(("GET /ws without upgrade", resp))
            return 400 <= resp.status < 500, f"HTTP {resp.status}"
        finally:
            c.close()
    r.run("c31 ws non-upgrade GET /ws -> 4xx", c31)

    def c32():
        c, resp, key = ws_open(r.host, r.port)
        try:
            if resp.status != 101:
                return False, f"HTTP {resp.status}"
            c.send(ws_frame(OP_TEXT, b"health"))
            fin, op, payload, masked = ws_read_frame(c)
            c.send(ws_frame(OP_CLOSE, struct.pack("!H", 1000)))
            return op == OP_TEXT and payload == b"health", f"opcode {op}, {payload!r}"
        finally:
            c.close()
    r.run("c32 ws health after validation: new upgrade, echo 'health'", c32)

    extras(r, rnd)


def with_ws(r, fn, key=None):
    c, resp, key = ws_open(r.host, r.port, key=key)
    try:
        if resp.status != 101:
            return False, f"upgrade got HTTP {resp.status}"
        return fn(c, resp)
    finally:
        c.close()


def extras(r, rnd):
    def gcannon(c, resp):
        got = resp.header("sec-websocket-accept")
        if got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=":
            return False, f"Sec-WebSocket-Accept {got}"
        up, conn_h = (resp.header("upgrade") or "").lower(), (resp.header("connection") or "").lower()
        if up != "websocket" or "upgrade" not in conn_h:
            return False, f"Upgrade {up!r}, Connection {conn_h!r}"
        frame = bytes([0x81, 0x85, 0x12, 0x34, 0x56, 0x78]) + mask_bytes(b"hello", b"\x12\x34\x56\x78")
        assert len(frame) == 11
        for i in range(200):
            c.send(frame)
            fin, op, payload, masked = ws_read_frame(c)
            if (fin, op, payload, masked) != (True, OP_TEXT, b"hello", False):
                return False, f"echo {i}: fin {fin} opcode {op} masked {masked} {payload!r}"
        return True, "fixed key accepted; 200 x 11-byte 'hello' frames echoed unmasked"
    r.run("x-ws gcannon handshake (fixed key) and 'hello' frames", lambda: with_ws(
        r, gcannon, key="dGhlIHNhbXBsZSBub25jZQ=="))

    def no_extra_bytes(c, resp):
        # Nothing may follow the 101 head before our first echo (gcannon counts every frame).
        c.send(ws_frame(OP_TEXT, b"first"))
        fin, op, payload, masked = ws_read_frame(c)
        if (op, payload) != (OP_TEXT, b"first"):
            return False, f"first frame after 101: opcode {op} {payload[:20]!r}"
        return c.buf == b"" and not c.closed_by_peer(0.3), "no unsolicited frames"
    r.run("x-ws no bytes other than echoes after the 101", lambda: with_ws(r, no_extra_bytes))

    def big(c, resp):
        for n in (125, 126, 65535, 65536, 200000):
            data = rnd.randbytes(n)
            c.send(ws_frame(OP_BIN, data))
            fin, op, payload, masked = ws_read_frame(c)
            if op != OP_BIN or payload != data:
                return False, f"{n} B: opcode {op}, {len(payload)} B"
        return True, "125, 126, 65535, 65536 (64-bit length), 200000 B"
    r.run("x-ws payload length boundaries incl. 64-bit length", lambda: with_ws(r, big))

    def split(c, resp):
        frame = ws_frame(OP_TEXT, b"split-frame-payload")
        for k in range(1, len(frame)):
            c.send(frame[:k])
            sleep_ms(2)
            c.send(frame[k:])
            fin, op, payload, masked = ws_read_frame(c)
            if payload != b"split-frame-payload":
                return False, f"split at {k}: {payload!r}"
        return True, f"{len(frame) - 1} split points"
    r.run("x-ws frame split at every byte boundary", lambda: with_ws(r, split))

    def upgrade_split():
        key = "x3JJHMbDL1EzLkh9GBhXDw=="
        raw = ws_upgrade_request("/ws", key, host=f"{r.host}:{r.port}")
        with Conn(r.host, r.port) as c:
            for i in range(0, len(raw), 7):
                c.send(raw[i:i + 7])
                sleep_ms(1)
            resp = c.read_response()
            if resp.status != 101 or resp.header("sec-websocket-accept") != ws_accept(key):
                return False, f"HTTP {resp.status}"
            c.send(ws_frame(OP_TEXT, b"after-split"))
            fin, op, payload, masked = ws_read_frame(c)
            return payload == b"after-split", f"{payload!r}"
    r.run("x-ws upgrade request in 7-byte writes", upgrade_split)

    def ping(c, resp):
        c.send(ws_frame(OP_PING, b"are-you-there"))
        fin, op, payload, masked = ws_read_frame(c)
        if op != OP_PONG or payload != b"are-you-there":
            return False, f"opcode {op}, {payload!r}"
        c.send(ws_frame(OP_TEXT, b"after-ping"))
        fin, op, payload, masked = ws_read_frame(c)
        return op == OP_TEXT and payload == b"after-ping", f"then opcode {op} {payload!r}"
    r.run("x-ws ping answered with pong (RFC 6455 5.5.2)", lambda: with_ws(r, ping))

    def fragmented(c, resp):
        c.send(ws_frame(OP_TEXT, b"frag-", fin=False) + ws_frame(OP_CONT, b"ment", fin=False) +
               ws_frame(OP_CONT, b"ed", fin=True))
        got, first_op = b"", None
        while True:
            fin, op, payload, masked = ws_read_frame(c)
            first_op = op if first_op is None else first_op
            got += payload
            if fin:
                break
        return first_op == OP_TEXT and got == b"frag-mented", f"opcode {first_op}, {got!r}"
    r.run("x-ws fragmented message echoed as the same text", lambda: with_ws(r, fragmented))

    def close_echo(c, resp):
        c.send(ws_frame(OP_CLOSE, struct.pack("!H", 1000) + b"bye"))
        fin, op, payload, masked = ws_read_frame(c)
        code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
        ok = op == OP_CLOSE and code in (1000, None)
        return ok and c.closed_by_peer(3.0), f"opcode {op}, code {code}"
    r.run("x-ws close answered with close 1000, then TCP close", lambda: with_ws(r, close_echo))

    def unmasked(c, resp):
        # RFC 6455 5.1: a server must close on an unmasked client frame (1002). Accept a
        # close frame or a TCP close; an echo is a failure.
        c.send(bytes([0x81, 0x04]) + b"nope")
        try:
            fin, op, payload, masked = ws_read_frame(c)
        except (ProtocolError, OSError):
            return True, "connection closed"
        return op == OP_CLOSE, f"opcode {op} {payload[:20]!r}"
    r.run("x-ws unmasked client frame is refused", lambda: with_ws(r, unmasked))

    def bad_version():
        with Conn(r.host, r.port, timeout=3.0) as c:
            c.send(ws_upgrade_request("/ws", "dGhlIHNhbXBsZSBub25jZQ==", host="x").replace(
                b"Version: 13", b"Version: 8"))
            try:
                resp = c.read_response()
            except (ProtocolError, OSError) as e:
                return True, f"closed ({e})"
            return resp.status != 101 and resp.status < 500, f"HTTP {resp.status}"
    r.run("x-ws Sec-WebSocket-Version 8 not upgraded", bad_version)

    def many_seq(c, resp):
        for i in range(500):
            m = os.urandom(rnd.randint(0, 300))
            c.send(ws_frame(OP_BIN, m))
            fin, op, payload, masked = ws_read_frame(c)
            if payload != m:
                return False, f"echo {i}: {len(payload)} B, want {len(m)}"
        return True, "500 echoes"
    r.run("x-ws 500 sequential echoes of random sizes", lambda: with_ws(r, many_seq))
