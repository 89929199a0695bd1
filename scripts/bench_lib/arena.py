"""The arena suite: HttpArena's HTTP/1.1 profiles and json-tls (docs/arena.md) under wrk,
and its HTTP/2 profiles (baseline-h2c, json-h2c, baseline-h2, static-h2) under h2load.

For one step (one runtime, all the profiles it serves):

  1. Once per runner process a data folder is made with tests/arena/gen_data.py (the
     dataset and the 20 static files with their .gz/.br siblings) and an RSA-2048
     certificate for localhost with openssl (HttpArena's kind; netrun.tls_certs).
  2. Every profile gets a fresh server, as HttpArena starts a fresh container per profile
     (so peak RSS is the profile's own): `SERVER --data DIR [--tls-port Q --tls-cert C
     --tls-key K] --port P --threads W` (saturn-arena also gets --bind 127.0.0.1 and, for
     the plain profiles, --tls-port 0).
  3. The profile's answers are checked first (check_profile): sums, pipelined order, JSON
     totals from the dataset, compressed bodies decoded, upload counts, every static file
     byte for byte, ALPN http/1.1 on the TLS port. A wrong answer fails the profile
     unloaded.
  4. wrk runs bench/peers/wrk/arena.lua with the profile's mix (echo-ws: ws-load,
     bench/peers/load/ws_load.c, one 'hello' text frame in flight per connection, every
     echo checked): an unmeasured warm-up, then SAMPLES measured runs, the median by rps
     (messages/s for echo-ws) kept with the min and max. The
     server's CPU (its whole process tree, user and system apart, from /proc) and its RSS
     are read around each run.
  5. The HTTP/2 profiles: the server also gets --h2c-port Q (cleartext, prior knowledge
     only) or --h2-port Q with the certificate (TLS, ALPN h2); check_h2_profile checks
     the answers over HTTP/2 with curl (HTTP version 2 required, HTTP/1.1 refused on the
     h2c port), then h2load (-D seconds, HttpArena's -m streams, -p h2c / ALPN) loads it
     the same way, CPU read the same way; the run counts only if h2load negotiated h2/h2c.
  6. The database profiles (async-db, crud): once per runner process a PostgreSQL cluster
     is started with tests/arena/pg_cluster.py (the HttpArena items table, 100,000 rows,
     its own port and socket folder; removed at exit, or by its watchdog if the runner
     dies), and every peer's server gets its URL as DATABASE_URL with
     DATABASE_MAX_CONN=DB_POOL: the same database and pool size for everyone.
     check_db_profile checks the answers against the documented rules (limits, price
     range, the item shape, X-Cache MISS then HIT, 201/200/404), then wrk loads it with
     arena.lua's async-db rotation or crud mix. CPU is the server's alone (Postgres's is
     not counted, for any peer).
"""

from __future__ import annotations

import gzip
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from pathlib import Path

from .common import Unstick, log, run_process, wait_quiet
from .model import Step, SuiteRun
from .netrun import Server, _free_port, measured_load, median_samples, tls_certs

H2_PROFILES = ("baseline-h2c", "json-h2c", "baseline-h2", "static-h2")
DB_PROFILES = ("async-db", "crud")
PROFILES = ("baseline", "pipelined", "limited-conn", "json", "json-comp", "upload", "static",
            "json-tls", "echo-ws") + H2_PROFILES + DB_PROFILES
# Connections per profile: HttpArena's smallest count where it has several (512 for the
# connection profiles, 1024 for static, 32 for upload). json and json-tls use 512, not
# HttpArena's 4096: on 2 CPUs, 4096 fresh TLS handshakes per wrk run would be most of a
# 2-second run, and json keeps the same count so the two compare.
# The HTTP/2 profiles (h2load) take HttpArena's smallest count the same way: 256
# connections (baseline-h2, static-h2, baseline-h2c) and 1024 (json-h2c), each with
# HttpArena's concurrent streams per connection (h2load -m): 100, and 32 for json-h2c
# and static-h2.
CONNS = {"baseline": 512, "pipelined": 512, "limited-conn": 512, "json": 512, "json-comp": 512,
         "upload": 32, "static": 1024, "json-tls": 512, "echo-ws": 512,
         "baseline-h2c": 256, "json-h2c": 1024, "baseline-h2": 256, "static-h2": 256,
         "async-db": 256, "crud": 256}
# The database profiles: 256 connections (HttpArena: 1024 and 4096, on 64 cores) and a
# pool of 16 (HttpArena's DATABASE_MAX_CONN is 256 for a 64-core server; Postgres shares
# the 2 CPUs here), the same for every peer.
DB_POOL = 16
# make bench-smoke (a correctness check, not a measurement) loads the HTTP/2 profiles
# with 32 connections: Go's h2 over TLS at 256 leaves h2load hanging past -D (its README).
SMOKE_H2_CONNS = 32
STREAMS = {"baseline-h2c": 100, "json-h2c": 32, "baseline-h2": 100, "static-h2": 32}
H2_TLS = ("baseline-h2", "static-h2")  # over TLS (ALPN h2); the others h2c by prior knowledge
# json-h2c's rotation: HttpArena's seven (count, m) pairs, as json's wrk rotation.
JSON_H2C_URIS = ("/json/1?m=3", "/json/5?m=7", "/json/10?m=2", "/json/15?m=5", "/json/25?m=4",
                 "/json/40?m=8", "/json/50?m=6")
STATIC_AE = "br;q=1, gzip;q=0.8"  # HttpArena's static and static-h2 Accept-Encoding
PIPELINE = 16
UPLOAD_BYTES = 2 * 1024 * 1024  # HttpArena's upload-2m template
WRK_THREADS = 2
STATIC_FILES = ("reset.css", "layout.css", "theme.css", "components.css", "utilities.css",
                "analytics.js", "helpers.js", "app.js", "vendor.js", "router.js", "header.html",
                "footer.html", "regular.woff2", "bold.woff2", "logo.svg", "icon-sprite.svg",
                "hero.webp", "thumb1.webp", "thumb2.webp", "manifest.json")

_DATA: list = []  # [Path of the data folder], made once per runner process


def data_dir(repo: Path) -> Path:
    if not _DATA:
        import atexit
        folder = Path(tempfile.mkdtemp(prefix="saturn-bench-arena-"))
        folder.chmod(0o755)  # nginx and h2o workers read it as another user
        atexit.register(shutil.rmtree, folder, True)
        subprocess.run(["python3", str(repo / "tests" / "arena" / "gen_data.py"), str(folder)],
                       check=True, capture_output=True, timeout=120)
        _DATA.append(folder)
    return _DATA[0]


_PG: list = []  # [(DATABASE_URL, cluster folder)], started once per runner process


def pg_cluster(repo: Path) -> str:
    """DATABASE_URL of the runner's PostgreSQL cluster (started on first use)."""
    if not _PG:
        import atexit
        import os
        folder = tempfile.mkdtemp(prefix="saturn-bench-pg-")
        script = repo / "tests" / "arena" / "pg_cluster.py"
        res = subprocess.run(["python3", str(script), "start", folder, "--watch", str(os.getpid())],
                             capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            shutil.rmtree(folder, True)
            raise OSError(f"pg_cluster.py start: {res.stderr.strip()[-300:]}")
        atexit.register(subprocess.run, ["python3", str(script), "remove", folder], capture_output=True, timeout=120)
        _PG.append((res.stdout.strip(), folder))
    return _PG[0][0]


def pg_cluster_folder(repo: Path) -> str:
    """The runner's PostgreSQL cluster's folder (pg_cluster.py's DIR; started on first use)."""
    pg_cluster(repo)
    return _PG[0][1]


def check_db_profile(profile: str, port: int) -> str:
    """"" when the server answers the database profile's requests by the rules, else what
    is wrong (tests/arena/db_validate.py holds the full checks)."""
    def item_bad(it) -> str:
        keys = {"id", "name", "category", "price", "quantity", "active", "tags", "rating"}
        if not isinstance(it, dict) or set(it) != keys or type(it["active"]) is not bool \
                or not isinstance(it["tags"], list) or any(type(it[k]) is not int for k in ("id", "price", "quantity")) \
                or set(it["rating"]) != {"score", "count"}:
            return f"not an HttpArena item: {str(it)[:120]}"
        return ""
    try:
        if profile == "async-db":
            for lim in (5, 10, 20, 35, 50):
                status, hdrs, got, _ = _get(port, "GET", f"/async-db?min=10&max=50&limit={lim}")
                doc = json.loads(got) if status == 200 else {}
                items = doc.get("items", [])
                if status != 200 or not hdrs.get("content-type", "").startswith("application/json") \
                        or doc.get("count") != lim or len(items) != lim:
                    return f"GET /async-db limit={lim}: status {status}, count {doc.get('count')!r}, {len(items)} items"
                bad = next((w for w in map(item_bad, items) if w), "") or next(
                    (f"price {i['price']} outside 10..50" for i in items if not 10 <= i["price"] <= 50), "")
                if bad:
                    return f"GET /async-db limit={lim}: {bad}"
            status, _, got, _ = _get(port, "GET", "/async-db?min=9999&max=9999&limit=50")
            return "" if status == 200 and json.loads(got) == {"items": [], "count": 0} else \
                f"GET /async-db empty range: {status} {got[:80]!r}"
        if profile == "crud":
            status, _, got, _ = _get(port, "GET", "/crud/items?category=office&page=2&limit=10")
            doc = json.loads(got) if status == 200 else {}
            if status != 200 or len(doc.get("items", [])) != 10 or doc.get("page") != 2 or \
                    any(i.get("category") != "office" or item_bad(i) for i in doc["items"]):
                return f"GET /crud/items?category=office&page=2: {status} {got[:120]!r}"
            seen = [_get(port, "GET", "/crud/items/4242") for _ in range(2)]
            caches = [h.get("x-cache") for _, h, _, _ in seen]
            if [st for st, _, _, _ in seen] != [200, 200] or caches != ["MISS", "HIT"] or \
                    json.loads(seen[0][2]).get("id") != 4242 or item_bad(json.loads(seen[0][2])):
                return f"GET /crud/items/4242 twice: {[st for st, _, _, _ in seen]} X-Cache {caches}"
            hdr = {"Content-Type": "application/json"}
            st, _, got, _ = _get(port, "POST", "/crud/items", hdr,
                                 b'{"id":190001,"name":"Check","category":"test","price":3,"quantity":4}')
            if st != 201:
                return f"POST /crud/items: {st} {got[:80]!r}"
            st, _, got, _ = _get(port, "PUT", "/crud/items/4242", hdr,
                                 b'{"name":"Checked","category":"test","price":7,"quantity":8}')
            st2, h2, got2, _ = _get(port, "GET", "/crud/items/4242")
            if st != 200 or st2 != 200 or h2.get("x-cache") != "MISS" or json.loads(got2).get("name") != "Checked":
                return f"PUT then GET /crud/items/4242: {st}, then {st2} X-Cache {h2.get('x-cache')} {got2[:80]!r}"
            st, _, _, _ = _get(port, "GET", "/crud/items/999999")
            return "" if st == 404 else f"GET /crud/items/999999: {st}, want 404"
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError) as e:
        return f"{profile}: {type(e).__name__}: {e}"
    return f"unknown profile {profile}"


# ----------------------------------------------------------------- answer checks

def _get(port: int, method: str, path: str, headers: dict | None = None, body: bytes | None = None,
         tls: bool = False) -> tuple[int, dict, bytes, str]:
    """(status, lower-cased headers, body, ALPN protocol) of one request on a new connection."""
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=ctx)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        alpn = conn.sock.selected_alpn_protocol() if tls and conn.sock else ""
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data, alpn or ""
    finally:
        conn.close()


def _decode(coding: str, data: bytes) -> bytes | None:
    """The decoded body, or None when it cannot be decoded here (no brotli program)."""
    if coding in ("", "identity"):
        return data
    if coding == "gzip":
        return gzip.decompress(data)
    if coding == "br":
        if not shutil.which("brotli"):
            return None
        res = subprocess.run(["brotli", "-d", "-c"], input=data, capture_output=True, timeout=30)
        return res.stdout if res.returncode == 0 else b"<brotli could not decode it>"
    return b"<unknown coding " + coding.encode() + b">"


def _expect_text(port: int, method: str, path: str, want: str, headers=None, body=None) -> str:
    status, hdrs, got, _ = _get(port, method, path, headers, body)
    if status != 200 or got != want.encode():
        return f"{method} {path}: status {status}, body {got[:40]!r}, want 200 {want!r}"
    if not hdrs.get("content-type", "").startswith("text/plain"):
        return f"{method} {path}: Content-Type {hdrs.get('content-type')!r}, want text/plain"
    return ""


def _json_problem(data: bytes, items: list, count: int, m: int) -> str:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        return f"not JSON ({e})"
    got = doc.get("items") if isinstance(doc, dict) else None
    if doc.get("count") != count or not isinstance(got, list) or len(got) != count:
        return f"count {doc.get('count')!r} / {len(got) if isinstance(got, list) else '?'} items, want {count}"
    for it, src in zip(got, items):
        if it.get("id") != src["id"] or it.get("total") != src["price"] * src["quantity"] * m:
            return f"item {src['id']}: total {it.get('total')!r}, want {src['price'] * src['quantity'] * m}"
    return ""


def _pipelined(port: int) -> str:
    req = b"GET /pipeline HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(req)
        buf, deadline = b"", time.monotonic() + 10
        while buf.count(b"\r\n\r\nok") < 3 and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    if buf.count(b"HTTP/1.1 200") != 3 or buf.count(b"\r\n\r\nok") != 3:
        return f"3 pipelined GET /pipeline: got {buf[:120]!r}..."
    return ""


def _limited(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /baseline11?a=1&b=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    head = buf.split(b"\r\n\r\n", 1)[0].lower()
    if b"connection: close" not in head or not buf.endswith(b"3"):
        return f"GET with Connection: close: the answer must say Connection: close and the server close; got {buf[:160]!r}"
    return ""


def _ws_frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame (RFC 6455 §5.2)."""
    mask = b"\x12\x34\x56\x78"
    n = len(payload)
    head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _ws_echo(port: int) -> str:
    """The upgrade answered with the right accept key, then a text and a 256-byte binary
    message echoed unmasked with their opcodes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                return f"GET /ws upgrade: closed after {buf[:80]!r}"
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101") or b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" not in head:
            return f"GET /ws upgrade: {head[:120]!r}"
        for opcode, payload in ((1, b"hello"), (2, bytes(range(256)))):
            s.sendall(_ws_frame(opcode, payload))
            want = bytes([0x80 | opcode]) + (bytes([len(payload)]) if len(payload) < 126
                                             else bytes([126]) + len(payload).to_bytes(2, "big")) + payload
            while len(buf) < len(want):
                chunk = s.recv(4096)
                if not chunk:
                    return f"/ws: closed before the echo of a {len(payload)}-byte message"
                buf += chunk
            if buf[:len(want)] != want:
                return f"/ws: echo of opcode {opcode} ({len(payload)} B) is {buf[:16]!r}..., want {want[:16]!r}..."
            buf = buf[len(want):]
    return ""


def check_profile(profile: str, port: int, tls_port: int, data: Path) -> str:
    """"" when the server answers the profile's requests right, else what is wrong."""
    items = json.loads((data / "dataset.json").read_text())
    try:
        if profile in ("baseline", "limited-conn"):
            for method, path, want, hdrs, body in (
                    ("GET", "/baseline11?a=13&b=42", "55", None, None),
                    ("POST", "/baseline11?a=13&b=42", "75", {"Content-Length": "2"}, b"20"),
                    ("POST", "/baseline11?a=7&b=8", "36", {},  # http.client chunks an iterator
                     iter([b"21"]))):
                wrong = _expect_text(port, method, path, want, hdrs, body)
                if wrong:
                    return wrong
            return _limited(port) if profile == "limited-conn" else ""
        if profile == "pipelined":
            return _expect_text(port, "GET", "/pipeline", "ok") or _pipelined(port)
        if profile in ("json", "json-tls"):
            tls = profile == "json-tls"
            status, hdrs, got, alpn = _get(tls_port if tls else port, "GET", "/json/7?m=2", tls=tls)
            if tls and alpn != "http/1.1":
                return f"TLS port: ALPN {alpn!r} chosen from h2, http/1.1; want 'http/1.1'"
            if status != 200 or not hdrs.get("content-type", "").startswith("application/json"):
                return f"GET /json/7?m=2: status {status}, Content-Type {hdrs.get('content-type')!r}"
            if hdrs.get("content-encoding"):
                return f"GET /json/7?m=2 without Accept-Encoding: Content-Encoding {hdrs['content-encoding']!r}"
            wrong = _json_problem(got, items, 7, 2)
            return f"GET /json/7?m=2: {wrong}" if wrong else ""
        if profile == "json-comp":
            status, hdrs, got, _ = _get(port, "GET", "/json/25?m=4", {"Accept-Encoding": "gzip, br"})
            coding = hdrs.get("content-encoding", "")
            if status != 200 or coding not in ("gzip", "br"):
                return f"GET /json/25?m=4 with Accept-Encoding gzip, br: status {status}, Content-Encoding {coding!r}"
            plain = _decode(coding, got)
            wrong = _json_problem(plain, items, 25, 4) if plain is not None else ""
            return f"GET /json/25?m=4 ({coding}): {wrong}" if wrong else ""
        if profile == "upload":
            n = 300_000
            return _expect_text(port, "POST", "/upload", str(n), {"Content-Length": str(n)}, b"x" * n)
        if profile == "static":
            for name in STATIC_FILES:
                want = (data / "static" / name).read_bytes()
                status, hdrs, got, _ = _get(port, "GET", f"/static/{name}")
                if status != 200 or got != want or hdrs.get("content-encoding"):
                    return f"GET /static/{name}: status {status}, {len(got)} B, want the file's {len(want)} B unencoded"
                status, hdrs, got, _ = _get(port, "GET", f"/static/{name}",
                                            {"Accept-Encoding": "br;q=1, gzip;q=0.8"})
                plain = _decode(hdrs.get("content-encoding", ""), got)
                if status != 200 or (plain is not None and plain != want):
                    return f"GET /static/{name} (br;q=1, gzip;q=0.8): status {status}, decoded body differs"
            status, _, _, _ = _get(port, "GET", "/static/no-such-file.css")
            return "" if status == 404 else f"GET /static/no-such-file.css: status {status}, want 404"
        if profile == "echo-ws":
            return _ws_echo(port)
    except (OSError, http.client.HTTPException, ValueError) as e:
        return f"{profile}: {type(e).__name__}: {e}"
    return f"unknown profile {profile}"


# ----------------------------------------------------------------- HTTP/2 answer checks

def _curl_h2(port: int, path: str, tls: bool, headers: dict | None = None,
             http1: bool = False) -> tuple[str, int, dict, bytes]:
    """(HTTP version curl used, status, lower-cased headers, body) of one GET with curl:
    HTTP/2 by ALPN over TLS, by prior knowledge in cleartext (http1: HTTP/1.1 instead)."""
    with tempfile.TemporaryDirectory(prefix="saturn-bench-h2check-") as tmp:
        body_f, head_f = Path(tmp) / "body", Path(tmp) / "head"
        argv = ["curl", "-s", "--max-time", "10", "-o", str(body_f), "-D", str(head_f),
                "-w", "%{http_version} %{http_code}"]
        argv += ["--http1.1"] if http1 else (["--http2"] if tls else ["--http2-prior-knowledge"])
        if tls:
            argv += ["-k"]
        for k, v in (headers or {}).items():
            argv += ["-H", f"{k}: {v}"]
        argv.append(f"{'https' if tls else 'http'}://127.0.0.1:{port}{path}")
        res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        version, _, code = res.stdout.strip().partition(" ")
        hdrs = {}
        if head_f.is_file():
            for ln in head_f.read_text(errors="replace").splitlines()[1:]:
                k, sep, v = ln.partition(":")
                if sep:
                    hdrs[k.strip().lower()] = v.strip()
        body = body_f.read_bytes() if body_f.is_file() else b""
        return version, int(code) if code.isdigit() else 0, hdrs, body


def check_h2_profile(profile: str, port: int, data: Path) -> str:
    """"" when the server answers the HTTP/2 profile's requests right over HTTP/2 (h2 by
    ALPN on the TLS port, h2c by prior knowledge on the cleartext one), else what is wrong."""
    tls = profile in H2_TLS
    try:
        if profile in ("baseline-h2c", "baseline-h2"):
            for a, b in ((13, 42), (1, 1), (-5, 1000000)):
                ver, status, hdrs, got = _curl_h2(port, f"/baseline2?a={a}&b={b}", tls)
                if ver != "2":
                    return f"GET /baseline2: HTTP version {ver!r}, want 2 ({'ALPN h2' if tls else 'prior knowledge'})"
                if status != 200 or got != str(a + b).encode():
                    return f"GET /baseline2?a={a}&b={b}: status {status}, body {got[:40]!r}, want 200 {a + b}"
                if not hdrs.get("content-type", "").startswith("text/plain"):
                    return f"GET /baseline2: Content-Type {hdrs.get('content-type')!r}, want text/plain"
        if profile == "json-h2c":
            items = json.loads((data / "dataset.json").read_text())
            for uri in JSON_H2C_URIS:
                ver, status, hdrs, got = _curl_h2(port, uri, tls)
                if ver != "2" or status != 200:
                    return f"GET {uri}: HTTP version {ver!r}, status {status}; want 2, 200"
                if not hdrs.get("content-type", "").startswith("application/json"):
                    return f"GET {uri}: Content-Type {hdrs.get('content-type')!r}"
                if hdrs.get("content-encoding"):
                    return f"GET {uri} without Accept-Encoding: Content-Encoding {hdrs['content-encoding']!r}"
                count, m = int(uri.split("/")[2].split("?")[0]), int(uri.rsplit("=", 1)[1])
                wrong = _json_problem(got, items, count, m)
                if wrong:
                    return f"GET {uri}: {wrong}"
        if profile in ("baseline-h2c", "json-h2c"):
            # HttpArena's validation: the h2c port must not serve HTTP/1.1.
            uri = "/baseline2?a=1&b=1" if profile == "baseline-h2c" else "/json/1?m=3"
            try:
                ver, status, _, _ = _curl_h2(port, uri, False, http1=True)
            except subprocess.TimeoutExpired:
                ver, status = "", 0
            if 200 <= status < 300:
                return f"HTTP/1.1 GET {uri} on the h2c-only port: {status}, want a refusal"
        if profile == "static-h2":
            for name in STATIC_FILES:
                want = (data / "static" / name).read_bytes()
                ver, status, hdrs, got = _curl_h2(port, f"/static/{name}", tls)
                if ver != "2" or status != 200 or got != want or hdrs.get("content-encoding"):
                    return (f"GET /static/{name}: HTTP version {ver!r}, status {status}, {len(got)} B, "
                            f"want 2, 200 and the file's {len(want)} B unencoded")
                ver, status, hdrs, got = _curl_h2(port, f"/static/{name}", tls, {"Accept-Encoding": STATIC_AE})
                plain = _decode(hdrs.get("content-encoding", ""), got)
                if ver != "2" or status != 200 or (plain is not None and plain != want):
                    return f"GET /static/{name} ({STATIC_AE}): HTTP version {ver!r}, status {status}, decoded body differs"
            ver, status, _, _ = _curl_h2(port, "/static/no-such-file.css", tls)
            if status != 404:
                return f"GET /static/no-such-file.css: status {status}, want 404"
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return f"{profile}: {type(e).__name__}: {e}"
    return "" if profile in H2_PROFILES else f"unknown profile {profile}"


# ----------------------------------------------------------------- load

def _load_argv(run: SuiteRun, profile: str, port: int, tls_port: int, seconds: int) -> list:
    """The load generator's argv: ws-load for echo-ws, wrk for the rest."""
    if profile == "echo-ws":
        return [str(run.paths.peer("ws-load")), "--port", str(port), "--conns", str(CONNS[profile]),
                "--threads", str(WRK_THREADS), "--duration", str(seconds)]
    return _wrk_argv(run.paths.peer_share("wrk"), profile, port, tls_port, seconds)


def _ws_result(stdout: str) -> dict | None:
    """ws-load's WS_RESULT line, with rps (= msgs_per_sec), requests and non2xx set so the
    rest of the suite reads it like wrk's."""
    for line in stdout.splitlines():
        if line.startswith("WS_RESULT "):
            try:
                r = json.loads(line[len("WS_RESULT "):])
            except json.JSONDecodeError:
                return None
            if r.get("upgraded") != r.get("conns"):
                r["errors"] = (r.get("errors") or 0) + (r.get("conns", 0) - r.get("upgraded", 0))
            r.update(rps=r.get("msgs_per_sec"), requests=r.get("msgs"), non2xx=0, bytes=7 * (r.get("msgs") or 0))
            return r
    return None


def _wrk_argv(wrk_dir: Path, profile: str, port: int, tls_port: int, seconds: int) -> list:
    conns = CONNS[profile]
    threads = min(WRK_THREADS, conns)
    url = f"https://127.0.0.1:{tls_port}/" if profile == "json-tls" else f"http://127.0.0.1:{port}/"
    if profile == "pipelined":
        script, args = "pipeline.lua", [str(PIPELINE)]
        url += "pipeline"
    else:
        mode = "json" if profile == "json-tls" else profile
        script, args = "arena.lua", [mode] + ([str(UPLOAD_BYTES)] if profile == "upload" else [])
    return ["wrk", "-t", str(threads), "-c", str(conns), "-d", f"{seconds}s", "--timeout", "10s",
            "-s", str(wrk_dir / script), url, "--"] + args


def _h2load_argv(profile: str, port: int, seconds: int, uri_file: Path, conns: int) -> list:
    """h2load for an HTTP/2 profile: HttpArena's streams per connection (-m), the suite's
    connection count, WRK_THREADS threads, a timed run (-D). h2 by ALPN over TLS, h2c by
    prior knowledge (-p h2c, as HttpArena)."""
    base = f"{'https' if profile in H2_TLS else 'http'}://127.0.0.1:{port}"
    argv = ["h2load", "-t", str(min(WRK_THREADS, conns)), "-c", str(conns), "-m", str(STREAMS[profile]),
            "-D", str(seconds)]
    if profile not in H2_TLS:
        argv += ["-p", "h2c"]  # as HttpArena: h2c framing from the first byte, never HTTP/1.1
    if profile in ("baseline-h2c", "baseline-h2"):
        return argv + [base + "/baseline2?a=1&b=1"]
    if profile == "json-h2c":
        uri_file.write_text("".join(base + u + "\n" for u in JSON_H2C_URIS))
        return argv + ["-i", str(uri_file)]
    # static-h2: the 20 files round-robin (-i, as HttpArena), with its Accept-Encoding.
    uri_file.write_text("".join(f"{base}/static/{n}\n" for n in STATIC_FILES))
    return argv + ["-H", f"Accept-Encoding: {STATIC_AE}", "-i", str(uri_file)]


# h2load 1.52 (Debian 12) can leave a few connections running after -D: every thread
# prints "Stopped all clients" and h2load never exits, its stray clients sending
# requests for ever. Seen with Go's HTTP/2 over TLS at 256 connections (Go completed
# some TLS handshakes 4 s into a loaded run); -T does not end them. Its counts are final
# by then (only the -D window is counted), so when every thread has stopped and h2load
# still runs half a second later, the runner closes h2load's remaining connections to
# the server's port (ss -K: the kernel's SOCK_DESTROY, root only) and h2load prints its
# result and exits. The record says so (`unstuck`); the server's CPU figures then
# include that half second of the stray clients' load.
H2LOAD_STUCK_GRACE_S = 0.5


def _h2load_unstick(port: int, threads: int) -> Unstick:
    def act() -> str:
        what = f"h2load still running {H2LOAD_STUCK_GRACE_S} s after all its clients stopped"
        try:
            out = subprocess.run(["ss", "-K", "-tn", "state", "established", f"( dport = :{port} )"],
                                 capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as e:
            return f"{what}; ss -K failed: {e}"
        n = max(0, len(out.stdout.splitlines()) - 1)
        return f"{what}: closed its {n} remaining connection(s) with ss -K"
    return Unstick(done=lambda out: out.count("Stopped all clients") >= threads, act=act,
                   grace_s=H2LOAD_STUCK_GRACE_S)


def _h2load_result(stdout: str) -> dict | None:
    """h2load's summary read like wrk's result: requests (succeeded), rps as h2load
    gives it (succeeded over the -D window, HttpArena's reading; `duration_s` is that
    window, `wall_s` h2load's whole run), bytes (all traffic), errors (failed + errored +
    timeout), non2xx, and the application protocol it negotiated (`protocol`)."""
    import re
    fin = re.search(r"^finished in ([\d.]+)s, ([\d.]+) req/s", stdout, re.M)
    req = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                    r"(\d+) failed, (\d+) errored, (\d+) timeout", stdout, re.M)
    codes = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", stdout, re.M)
    traffic = re.search(r"^traffic: \S+ \((\d+)\) total", stdout, re.M)
    proto = re.search(r"^Application protocol: (\S+)", stdout, re.M)
    if not (fin and req and codes and traffic):
        return None
    wall, rps = float(fin.group(1)), float(fin.group(2))
    ok = int(req.group(4))
    return {"requests": ok, "duration_s": round(ok / rps, 3) if rps > 0 else wall, "wall_s": wall,
            "rps": round(rps, 1),
            "bytes": int(traffic.group(1)),
            "errors": int(req.group(5)) + int(req.group(6)) + int(req.group(7)),
            "non2xx": int(codes.group(2)) + int(codes.group(3)) + int(codes.group(4)),
            "protocol": proto.group(1) if proto else ""}


def _measured(server: Server, argv: list, profile: str, log_path: Path, header: str,
              timeout: float, unstick: Unstick | None = None) -> tuple[dict | None, str]:
    """One measured run (netrun.measured_load) plus the arena's own figures: bytes per
    response, RSS now and at its peak, and MB/s for upload and static."""
    ws, h2 = profile == "echo-ws", profile in H2_PROFILES
    result, why = measured_load(server, argv, log_path, header, timeout,
                                parse=_ws_result if ws else _h2load_result if h2 else None,
                                tool="ws-load" if ws else "h2load" if h2 else "wrk", unstick=unstick)
    if result is None:
        return None, why
    n = result.get("requests") or 0
    secs = result.get("duration_s") or 1e-6
    result.update(bytes_per_resp=round(result.get("bytes", 0) / n, 1) if n else 0.0,
                  rss_kib=server.kib("VmRSS"), peak_rss_kib=server.kib("VmHWM"))
    if profile == "upload":
        result["mb_per_sec"] = round(n * UPLOAD_BYTES / secs / 1e6, 1)
    elif profile in ("static", "static-h2"):
        result["mb_per_sec"] = round(result.get("bytes", 0) / secs / 1e6, 1)
    return result, why


def run_arena(step: Step, run: SuiteRun, log_path: Path) -> tuple[list, dict]:
    """(JSON objects, {profile: failure reason}) of one arena step."""
    wrk_dir = run.paths.peer_share("wrk")
    if not (wrk_dir / "arena.lua").is_file():
        return [], {s: f"wrk scripts not installed in {wrk_dir}" for s in step.scenarios}
    if "echo-ws" in step.scenarios and not run.paths.peer("ws-load").is_file():
        return [], {s: f"load generator {run.paths.peer('ws-load')} not built" for s in step.scenarios}
    if any(s in H2_PROFILES for s in step.scenarios) and not shutil.which("h2load"):
        return [], {s: "h2load not found (Debian package nghttp2-client)" for s in step.scenarios}
    if any(s in H2_PROFILES for s in step.scenarios) and not shutil.which("curl"):
        return [], {s: "curl not found (the HTTP/2 answer checks use it)" for s in step.scenarios}
    try:
        data = data_dir(run.paths.repo)
        crt, key = tls_certs("rsa")
    except (OSError, subprocess.SubprocessError) as e:
        return [], {s: f"arena data or certificate: {e}" for s in step.scenarios}
    db_env, db_problem = None, ""
    if any(s in DB_PROFILES for s in step.scenarios):
        try:
            db_env = {"DATABASE_URL": pg_cluster(run.paths.repo), "DATABASE_MAX_CONN": str(DB_POOL)}
        except (OSError, subprocess.SubprocessError) as e:
            db_problem = f"PostgreSQL cluster: {e}"
    p = run.params
    objs, reasons = [], {}
    for profile in step.scenarios:
        h2, db = profile in H2_PROFILES, profile in DB_PROFILES
        if db and db_problem:
            reasons[profile] = db_problem
            continue
        tls_port = _free_port() if profile == "json-tls" else 0
        # The HTTP/2 profiles' port: --h2-port (TLS, ALPN h2) or --h2c-port (prior
        # knowledge only), as saturn-arena's 8443 and 8082; the load goes there.
        h2_port = _free_port() if h2 else 0
        conns = SMOKE_H2_CONNS if h2 and p.smoke else CONNS[profile]
        argv = [str(step.argv[0]), "--data", str(data)]
        if step.runtime == "saturn":
            argv += ["--bind", "127.0.0.1"]
        if tls_port:
            argv += ["--tls-port", str(tls_port), "--tls-cert", str(crt), "--tls-key", str(key)]
        elif step.runtime == "saturn":
            argv += ["--tls-port", "0"]
        if h2 and profile in H2_TLS:
            argv += ["--h2-port", str(h2_port), "--tls-cert", str(crt), "--tls-key", str(key)]
        elif h2:
            argv += ["--h2c-port", str(h2_port)]
        if step.runtime == "saturn":  # its defaults are 8443 and 8082: none but the profile's
            argv += [] if profile in H2_TLS else ["--h2-port", "0"]
            argv += [] if h2 and profile not in H2_TLS else ["--h2c-port", "0"]
        with Server(argv, step.threads, [], log_path, env=db_env if db else None) as server:
            log(f"  {step.runtime} {profile}: pid {server.proc.pid}, 127.0.0.1:{server.port}"
                + (f" (TLS {tls_port})" if tls_port else "")
                + (f" ({'h2' if profile in H2_TLS else 'h2c'} {h2_port})" if h2 else "")
                + f", --threads {step.threads}")
            if tls_port and not server.wait_port(tls_port, 15.0):
                reasons[profile] = f"the TLS port {tls_port} never accepted"
                continue
            if h2_port and not server.wait_port(h2_port, 15.0):
                reasons[profile] = f"the HTTP/2 port {h2_port} never accepted"
                continue
            wrong = (check_h2_profile(profile, h2_port, data) if h2
                     else check_db_profile(profile, server.port) if db
                     else check_profile(profile, server.port, tls_port, data))
            if wrong:
                reasons[profile] = f"answer check: {wrong}"
                continue
            header = f"arena {step.runtime} {profile} threads={step.threads} round {step.round}"
            wait_quiet(run.quiet_wait)
            uri_file = Path(tempfile.mkstemp(prefix="saturn-bench-h2load-", suffix=".txt")[1])
            load_argv = ((lambda secs: _h2load_argv(profile, h2_port, secs, uri_file, conns)) if h2 else
                         (lambda secs: _load_argv(run, profile, server.port, tls_port, secs)))
            # h2load's -D ends its run; the margin only catches an h2load that never exits.
            margin = 8 if h2 else 60
            unstick = _h2load_unstick(h2_port, min(WRK_THREADS, conns)) if h2 else None
            if p.warmup:
                warm = run_process(load_argv(p.warmup), timeout=p.warmup + margin,
                                   log_path=log_path, header=header + " (warm-up)", unstick=unstick)
                if warm.error:
                    # A load that hung in the warm-up (h2load waiting on a stream the server
                    # never answers) hangs in the measured run too: one timeout is enough.
                    uri_file.unlink(missing_ok=True)
                    reasons[profile] = f"warm-up: {warm.error}"
                    continue
            argv_w = load_argv(p.duration)
            rec, why = median_samples(p.samples, lambda: _measured(
                server, argv_w, profile, log_path, header, p.duration + margin, unstick))
            uri_file.unlink(missing_ok=True)
            if rec:
                objs.append({"suite": "arena", "scenario": profile, "runtime": step.runtime,
                             "threads": step.threads, "conns": conns,
                             **({"load": "h2load", "streams": STREAMS[profile],
                                 "h2load_threads": min(WRK_THREADS, conns)} if h2 else
                                {"wrk_threads": min(WRK_THREADS, CONNS[profile])}),
                             **({"pipeline": PIPELINE} if profile == "pipelined" else {}),
                             **({"upload_bytes": UPLOAD_BYTES} if profile == "upload" else {}),
                             **rec})
            if not server.alive():
                why = why or "the server exited during the run"
            if why:
                reasons[profile] = why
    return objs, reasons
