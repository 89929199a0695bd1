#!/usr/bin/python3
"""Hostile and malformed HTTP/2 frame sequences against a server on 127.0.0.1:PORT.

A stand-in for h2spec (not in Debian): frames are built with hyperframe and hpack (the
libraries under python3-h2), so they can break every rule the h2 state machine would
refuse to. Each case prints one line saying what the server answered, which the C++
test (tests/http/h2_test.cpp) compares with RFC 9113's answer:

  goaway=<code>        the connection ended with GOAWAY and that error code
  rst=<code>           the stream was reset with that code
  status=<n>           the stream was answered with that status
  closed               the connection closed with no GOAWAY

usage: h2_frames.py PORT CASE
"""
import socket
import sys
import time

from hpack import Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.enc = Encoder()
        self.closed = False
        self.s.sendall(PREFACE + SettingsFrame(0).serialize())

    def send(self, *frames):
        try:
            self.s.sendall(b"".join(f.serialize() if isinstance(f, Frame) else f for f in frames))
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True

    def headers(self, stream, path, method="GET", end=True, extra=()):
        block = self.enc.encode([(":method", method), (":scheme", "http"), (":path", path),
                                 (":authority", "localhost")] + list(extra))
        f = HeadersFrame(stream, block)
        f.flags.add("END_HEADERS")
        if end:
            f.flags.add("END_STREAM")
        return f

    def frames(self, timeout=3.0):
        """Every frame that arrives until `timeout` passes or the connection closes."""
        end = time.time() + timeout
        while True:
            while len(self.buf) >= 9:
                length = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) < 9 + length:
                    break
                f, n = Frame.parse_frame_header(memoryview(self.buf[:9]))
                f.parse_body(memoryview(self.buf[9:9 + length]))
                self.buf = self.buf[9 + length:]
                if isinstance(f, SettingsFrame) and "ACK" not in f.flags:
                    self.send(SettingsFrame(0, flags=["ACK"]))
                yield f
            left = end - time.time()
            if left <= 0 or self.closed:
                return
            self.s.settimeout(left)
            try:
                got = self.s.recv(65536)
            except socket.timeout:
                return
            except ConnectionResetError:
                got = b""
            if not got:
                self.closed = True
                continue
            self.buf += got

    def outcome(self, stream=None, timeout=3.0):
        """The first GOAWAY, or `stream`'s RST_STREAM or :status, else closed / silent."""
        for f in self.frames(timeout):
            if isinstance(f, GoAwayFrame):
                return "goaway=%d" % f.error_code
            if stream is not None and f.stream_id == stream:
                if isinstance(f, RstStreamFrame):
                    return "rst=%d" % f.error_code
                if isinstance(f, HeadersFrame):
                    from hpack import Decoder
                    fields = dict(Decoder().decode(f.data))
                    return "status=%s" % fields.get(":status", fields.get(b":status", b"?"))
        return "closed" if self.closed else "silent"


def status_of(frames_iter, dec, stream):
    for f in frames_iter:
        if isinstance(f, HeadersFrame) and f.stream_id == stream:
            return dict(dec.decode(f.data)).get(":status")
        if isinstance(f, RstStreamFrame) and f.stream_id == stream:
            return "rst=%d" % f.error_code
        if isinstance(f, GoAwayFrame):
            return "goaway=%d" % f.error_code
    return None


def main():
    port, case = int(sys.argv[1]), sys.argv[2]
    c = Conn(port)
    if case == "get":
        c.send(c.headers(1, sys.argv[3]))
        print(c.outcome(1))
    elif case == "rapid_reset":
        # CVE-2023-44487: open and cancel streams as fast as possible.
        frames = []
        for i in range(3000):
            sid = 2 * i + 1
            frames.append(c.headers(sid, "/plaintext", end=True))
            frames.append(RstStreamFrame(sid, error_code=8))
            if len(frames) >= 200:
                c.send(*frames)
                frames = []
        c.send(*frames)
        print(c.outcome(None, 5))
    elif case == "continuation_flood":
        block = c.enc.encode([(":method", "GET"), (":scheme", "http"), (":path", "/plaintext"),
                              (":authority", "localhost")])
        frames = [HeadersFrame(1, block)]  # no END_HEADERS: CONTINUATION must follow
        for i in range(10000):
            frames.append(ContinuationFrame(1, c.enc.encode([("x-flood-%d" % (i % 50), "v")])))
        for k in range(0, len(frames), 500):
            c.send(*frames[k:k + 500])
            if c.closed:
                break
        print(c.outcome(None, 5))
    elif case == "ping_flood":
        for k in range(20):
            c.send(*[PingFrame(0, opaque_data=b"12345678") for _ in range(500)])
            if c.closed:
                break
        print(c.outcome(None, 5))
    elif case == "settings_flood":
        for k in range(20):
            c.send(*[SettingsFrame(0, settings={SettingsFrame.MAX_CONCURRENT_STREAMS: 100}) for _ in range(500)])
            if c.closed:
                break
        print(c.outcome(None, 5))
    elif case == "window_update_flood":
        # Many WINDOW_UPDATEs that stay legal (small increments on the connection): the
        # server must keep serving and answer a request after them.
        c.send(*[WindowUpdateFrame(0, window_increment=1) for _ in range(5000)])
        c.send(c.headers(1, "/plaintext"))
        print(c.outcome(1, 5))
    elif case == "window_overflow":
        c.send(WindowUpdateFrame(0, window_increment=0x7fffffff))
        print(c.outcome(None))
    elif case == "zero_window_increment":
        c.send(WindowUpdateFrame(0, window_increment=0))
        print(c.outcome(None))
    elif case == "data_on_stream0":
        raw = (5).to_bytes(3, "big") + bytes([0, 0]) + (0).to_bytes(4, "big") + b"hello"
        c.send(raw)
        print(c.outcome(None))
    elif case == "even_stream":
        c.send(c.headers(2, "/plaintext"))
        print(c.outcome(2))
    elif case == "uppercase_header":
        c.send(c.headers(1, "/plaintext", extra=[("X-Upper", "1")]))
        first = c.outcome(1)
        c.send(c.headers(3, "/plaintext"))
        print(first, c.outcome(3))
    elif case == "missing_path":
        block = c.enc.encode([(":method", "GET"), (":scheme", "http"), (":authority", "localhost")])
        f = HeadersFrame(1, block)
        f.flags.add("END_HEADERS")
        f.flags.add("END_STREAM")
        c.send(f)
        first = c.outcome(1)
        c.send(c.headers(3, "/plaintext"))
        print(first, c.outcome(3))
    elif case == "connection_header":
        c.send(c.headers(1, "/plaintext", extra=[("connection", "keep-alive")]))
        print(c.outcome(1))
    elif case == "oversized_frame":
        body = b"x" * 20000
        raw = len(body).to_bytes(3, "big") + bytes([0, 0]) + (1).to_bytes(4, "big") + body
        c.send(c.headers(1, "/echo", method="POST", end=False), raw)
        print(c.outcome(None))
    elif case == "big_header":
        c.send(c.headers(1, "/plaintext", extra=[("x-big", "a" * 12000)]))
        print(c.outcome(1))
    elif case == "too_many_streams":
        # Past SETTINGS_MAX_CONCURRENT_STREAMS (100): stream 101 is refused.
        list(c.frames(0.3))  # the server's SETTINGS (acknowledged), so its limit is in force
        c.send(*[c.headers(2 * i + 1, "/delay/1000") for i in range(101)])
        print(c.outcome(201, 3))
    elif case == "content_length_mismatch":
        h = c.headers(1, "/echo", method="POST", end=False, extra=[("content-length", "10")])
        d = DataFrame(1, b"abc")
        d.flags.add("END_STREAM")
        c.send(h, d)
        print(c.outcome(1))
    elif case == "reset_cancels":
        c.send(c.headers(1, "/delay/3000"))
        time.sleep(0.3)
        c.send(RstStreamFrame(1, error_code=8))
        c.send(c.headers(3, "/plaintext"))
        print(c.outcome(3))
    elif case == "stop_goaway":
        # A request in flight when the server stops: GOAWAY, then the stream's answer.
        c.send(c.headers(1, "/delay/400"))
        print("sent", flush=True)
        seen = []
        for f in c.frames(5):
            if isinstance(f, GoAwayFrame):
                seen.append("goaway=%d,last=%d" % (f.error_code, f.last_stream_id))
            elif isinstance(f, HeadersFrame) and f.stream_id == 1:
                from hpack import Decoder
                seen.append("status=%s" % dict(Decoder().decode(f.data)).get(":status"))
        seen.append("closed" if c.closed else "open")
        print(" ".join(seen))
    elif case == "slow_reader_window":
        # A streamed-body route whose handler does not read: the client may send one
        # stream window (65536) and no more — the server holds that much, not the body.
        list(c.frames(0.3))
        c.send(c.headers(1, "/stall-upload", method="POST", end=False))
        sent = 0
        chunk = b"y" * 16384
        window = 65535  # the client's view before SETTINGS_INITIAL_WINDOW_SIZE applies
        credit = 65536
        for f in c.frames(0.2):
            pass
        while sent < 1 << 20:
            if credit <= 0:
                got = 0
                for f in c.frames(0.8):
                    if isinstance(f, WindowUpdateFrame) and f.stream_id == 1:
                        got += f.window_increment
                if got == 0:
                    break
                credit += got
            n = min(len(chunk), credit)
            c.send(DataFrame(1, chunk[:n]))
            sent += n
            credit -= n
        print("blocked_at=%d" % sent)
    elif case == "idle":
        print(c.outcome(None, 4))
    else:
        print("unknown case " + case)
        sys.exit(2)


if __name__ == "__main__":
    main()
