"""Small raw-socket HTTP/1.1 and WebSocket client helpers for the HttpArena checks.

Standard library only. Everything here is blocking with a socket timeout, so every wait is
bounded. Used by validate.py and ws_many.py.
"""
import base64
import gzip
import hashlib
import os
import resource
import shutil
import socket
import struct
import subprocess
import time

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Response:
    """One parsed HTTP response: status, headers (list of (name, value)), raw head, body."""

    def __init__(self, status, reason, headers, head, body):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.head = head  # bytes, including the final CRLFCRLF
        self.body = body

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def has(self, name):
        return self.header(name) is not None

    def __repr__(self):
        return f"<{self.status} {self.reason} {len(self.body)}B>"


class ProtocolError(Exception):
    pass


class Conn:
    """A client connection with its own read buffer (so pipelined responses parse in order)."""

    def __init__(self, host, port, timeout=5.0, nodelay=True):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if nodelay:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            self.eof = True
            raise ProtocolError(f"connection closed by server ({len(self.buf)} bytes unparsed)")
        self.buf += chunk

    def read_until(self, marker, limit=1 << 20):
        while marker not in self.buf:
            if len(self.buf) > limit:
                raise ProtocolError(f"no {marker!r} within {limit} bytes")
            self._fill()
        i = self.buf.index(marker) + len(marker)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def read_exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_to_eof(self):
        try:
            while True:
                self._fill()
        except ProtocolError:
            pass
        out, self.buf = self.buf, b""
        return out

    def closed_by_peer(self, wait=2.0):
        """True if the server closes the connection (EOF) within `wait` seconds."""
        old = self.sock.gettimeout()
        self.sock.settimeout(wait)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except socket.timeout:
            return False
        except OSError:
            return True  # reset counts as closed
        finally:
            self.sock.settimeout(old)

    def read_response(self, method="GET", allow_interim=False):
        """Parse one response. Interim 1xx responses are skipped unless allow_interim."""
        while True:
            head = self.read_until(b"\r\n\r\n", limit=64 * 1024)
            lines = head[:-4].split(b"\r\n")
            parts = lines[0].decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
                raise ProtocolError(f"bad status line {lines[0][:80]!r}")
            status = int(parts[1])
            reason = parts[2] if len(parts) > 2 else ""
            headers = []
            for ln in lines[1:]:
                if b":" not in ln:
                    raise ProtocolError(f"bad header line {ln[:80]!r}")
                k, v = ln.split(b":", 1)
                headers.append((k.decode("latin-1"), v.strip().decode("latin-1")))
            resp = Response(status, reason, headers, head, b"")
            if 100 <= status < 200 and status != 101:
                if allow_interim:
                    return resp
                continue
            break
        if method == "HEAD" or status in (101, 204, 304):
            return resp
        te = (resp.header("transfer-encoding") or "").lower()
        cl = resp.header("content-length")
        if "chunked" in te:
            body = b""
            while True:
                line = self.read_until(b"\r\n", limit=4096)
                size = int(line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self.read_until(b"\r\n", limit=8192) != b"\r\n":
                        pass
                    break
                body += self.read_exact(size)
                if self.read_exact(2) != b"\r\n":
                    raise ProtocolError("chunk not followed by CRLF")
            resp.body = body
        elif cl is not None:
            resp.body = self.read_exact(int(cl))
        else:
            resp.body = self.read_to_eof()
        return resp


def build_request(method, path, headers=(), body=b"", host="localhost"):
    """Raw request bytes. `headers` is a list of (name, value); Host is added first."""
    out = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
    for k, v in headers:
        out += f"{k}: {v}\r\n"
    return out.encode("latin-1") + b"\r\n" + body


def chunked(body, sizes=None):
    """Encode `body` with chunked framing; `sizes` splits it into chunks of those sizes."""
    out, i = b"", 0
    for n in sizes or [len(body)]:
        part = body[i:i + n]
        i += n
        if part:
            out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
    return out + b"0\r\n\r\n"


def head_limits(resp):
    """None if the response head fits gcannon's limits (< 1024 bytes, <= 16 fields)."""
    if len(resp.head) >= 1024:
        return f"head is {len(resp.head)} bytes"
    if len(resp.headers) > 16:
        return f"{len(resp.headers)} header fields"
    return None


def decode_body(encoding, data):
    """Decode gzip or br content; br needs the `brotli` program. Raises on failure."""
    encoding = (encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return data
    if encoding in ("gzip", "x-gzip"):
        return gzip.decompress(data)
    if encoding == "br":
        exe = shutil.which("brotli")
        if not exe:
            raise RuntimeError("brotli program missing: cannot decode br")
        p = subprocess.run([exe, "-d", "-c"], input=data, capture_output=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError(f"brotli -d failed: {p.stderr.decode(errors='replace').strip()}")
        return p.stdout
    raise RuntimeError(f"unknown Content-Encoding {encoding!r}")


# ---- WebSocket ----

def ws_accept(key):
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def ws_upgrade_request(path, key, host="localhost"):
    return (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\n\r\n").encode()


def ws_frame(opcode, payload, mask=None, fin=True):
    """A client frame (masked with `mask`, 4 random bytes by default)."""
    if isinstance(payload, str):
        payload = payload.encode()
    mask = os.urandom(4) if mask is None else mask
    n = len(payload)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    return head + mask + mask_bytes(payload, mask)


def mask_bytes(data, mask):
    if not data:
        return b""
    m = int.from_bytes((mask * (len(data) // 4 + 1))[:len(data)], "big")
    return (int.from_bytes(data, "big") ^ m).to_bytes(len(data), "big")


def ws_read_frame(conn):
    """(fin, opcode, payload, masked) of the next frame on `conn` (a Conn)."""
    h = conn.read_exact(2)
    fin = bool(h[0] & 0x80)
    opcode = h[0] & 0x0F
    masked = bool(h[1] & 0x80)
    n = h[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", conn.read_exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", conn.read_exact(8))[0]
    mask = conn.read_exact(4) if masked else None
    payload = conn.read_exact(n)
    if masked:
        payload = mask_bytes(payload, mask)
    return fin, opcode, payload, masked


def ws_open(host, port, path="/ws", key=None, timeout=5.0):
    """Connect and upgrade. Returns (conn, response, key). Raises on a non-101 answer."""
    key = key or base64.b64encode(os.urandom(16)).decode()
    conn = Conn(host, port, timeout=timeout)
    conn.send(ws_upgrade_request(path, key, host=f"{host}:{port}"))
    resp = conn.read_response()
    return conn, resp, key


def sleep_ms(ms):
    time.sleep(ms / 1000.0)


def raise_nofile(need):
    """Raises this process's RLIMIT_NOFILE towards `need` (the hard limit too, where
    CAP_SYS_RESOURCE allows); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        try:  # root (CAP_SYS_RESOURCE) may raise the hard limit too
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, need))
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        except (ValueError, OSError):
            pass
    want = need if hard == resource.RLIM_INFINITY else min(max(soft, need), hard)
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kib(pid):
    """VmRSS of process `pid`, in KiB (0 if it cannot be read)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid):
    """Open descriptors of process `pid`."""
    return len(os.listdir(f"/proc/{pid}/fd"))
