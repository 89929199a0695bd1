"""HTTP/1.1 profile checks for validate.py (baseline, limited-conn, pipelined, json, json-comp,
upload, static). Each function takes the Runner and a seeded random.Random."""
import json
import os
import subprocess
import tempfile

from arena_client import ProtocolError, chunked, decode_body, sleep_ms

BL = "/baseline11?a=13&b=42"


def body_is(got, want):
    return got == want, f"got {got!r}" if got != want else f"{want}"


# ---------------------------------------------------------------- baseline
def baseline(r, rnd):
    u = r.base + BL
    post = ["-X", "POST", "-H", "Content-Type: text/plain"]
    r.run("c01 baseline GET a=13&b=42 -> 55", lambda: body_is(r.curl_body(u), "55"))
    r.run("c02 baseline POST -d 20 -> 75", lambda: body_is(r.curl_body(*post, "-d", "20", u), "75"))
    r.run("c03 baseline POST chunked 20 -> 75", lambda: body_is(
        r.curl_body(*post, "-H", "Transfer-Encoding: chunked", "-d", "20", u), "75"))

    def ctype(*args):
        v = r.curl_header("Content-Type", *args)
        return r.ctype_ok(v, "text/plain"), f"Content-Type: {v}"
    r.run("c04 baseline GET Content-Type text/plain", lambda: ctype(u))
    r.run("c05 baseline POST Content-Type text/plain", lambda: ctype(*post, "-d", "20", u))
    a, b = rnd.randint(100, 999), rnd.randint(100, 999)
    r.run(f"c06 baseline GET random a={a}&b={b}",
          lambda: body_is(r.curl_body(f"{r.base}/baseline11?a={a}&b={b}"), str(a + b)))
    b1 = rnd.randint(100, 999)
    b2 = rnd.choice([x for x in range(100, 1000) if x != b1])

    def twice():
        g1 = r.curl_body(*post, "-d", str(b1), u)
        g2 = r.curl_body(*post, "-d", str(b2), u)
        ok = g1 == str(55 + b1) and g2 == str(55 + b2)
        return ok, f"bodies {b1},{b2} -> {g1!r},{g2!r}"
    r.run("c07 baseline two random POST bodies (no caching)", twice)

    get_close = b"Host: localhost\r\nConnection: close\r\n\r\n"
    post_head = (b"POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost\r\n"
                 b"Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n")
    r.run("c08a fragmented: split request line", lambda: r.fragmented(
        [b"GET /baseli", b"ne11?a=13&b=42 HTTP/1.1\r\n", get_close], "55"))
    r.run("c08b fragmented: split before headers", lambda: r.fragmented(
        [b"GET /baseline11?a=13&b=42 HTTP/1.1\r\n", b"Host: localhost\r\n",
         b"User-Agent: arena-frag/1.0\r\n", b"Connection: close\r\n\r\n"], "55"))
    r.run("c08c fragmented: split headers/body", lambda: r.fragmented([post_head, b"20"], "75"))
    r.run("c08d fragmented: split body bytes", lambda: r.fragmented([post_head, b"2", b"0"], "75"))
    closed = r.frag_close[-4:]
    r.result("x-baseline Connection: close honoured (server closes after the response)",
             len(closed) == 4 and all(closed), f"{sum(closed)}/4 closed promptly")

    r.run("x-baseline keep-alive: 300 mixed requests on one socket", lambda: keepalive(r, rnd))
    r.run("x-baseline 16 pipelined requests answered in order", lambda: pipelined_order(r))
    r.run("x-baseline GET split at every byte boundary", lambda: split_every(
        r, r.req("GET", "/baseline11?a=321&b=654"), "975"))
    chunk_req = r.req("POST", BL, [("Transfer-Encoding", "chunked")], chunked(b"1234", [1, 3]))
    r.run("x-baseline chunked POST split at every byte boundary",
          lambda: split_every(r, chunk_req, str(55 + 1234)))
    r.run("x-baseline one byte per write (GET, then chunked POST)", lambda: byte_at_a_time(
        r, [(r.req("GET", "/baseline11?a=7&b=8"), "15"), (chunk_req, str(55 + 1234))]))
    ext = r.req("POST", BL, [("Transfer-Encoding", "chunked")],
                b"2;name=value\r\n12\r\n1\r\n3\r\n0\r\nX-Trailer: t\r\n\r\n")
    r.run("x-baseline chunk extension and trailer field", lambda: raw_body(r, ext, str(55 + 123)))
    r.run("x-baseline GET unknown path -> 404, connection still usable", lambda: unknown_path(r))
    for label, method, path, headers, body in [
            ("GET", "GET", BL, [], b""),
            ("POST Content-Length", "POST", BL, [("Content-Length", "2")], b"20"),
            ("POST chunked", "POST", BL, [("Transfer-Encoding", "chunked")], chunked(b"20"))]:
        r.one(method, path, headers, body, keep="baseline")
    noise(r, rnd)


def keepalive(r, rnd):
    with r.conn() as c:
        for i in range(300):
            a, b, n = rnd.randint(0, 99999), rnd.randint(0, 99999), rnd.randint(0, 99999)
            kind = i % 3
            if kind == 0:
                c.send(r.req("GET", f"/baseline11?a={a}&b={b}"))
                want = a + b
            elif kind == 1:
                body = str(n).encode()
                c.send(r.req("POST", f"/baseline11?a={a}&b={b}",
                             [("Content-Length", str(len(body)))], body))
                want = a + b + n
            else:
                c.send(r.req("POST", f"/baseline11?a={a}&b={b}", [("Transfer-Encoding", "chunked")],
                             chunked(str(n).encode(), [1, 1, 1, 1, 1])))
                want = a + b + n
            resp = c.read_response()
            if resp.status != 200 or resp.body != str(want).encode():
                return False, f"request {i}: {resp.status} {resp.body[:40]!r}, want {want}"
            if (resp.header("connection") or "").lower() == "close":
                return False, f"request {i}: server sent Connection: close"
    return True, "300 answers correct"


def pipelined_order(r):
    with r.conn() as c:
        c.send(b"".join(r.req("GET", f"/baseline11?a={i}&b=1000") for i in range(16)))
        for i in range(16):
            resp = c.read_response()
            if resp.body != str(1000 + i).encode():
                return False, f"response {i}: {resp.body!r}, want {1000 + i}"
    return True, "16 in order"


def split_every(r, raw, want):
    with r.conn() as c:
        for k in range(1, len(raw)):
            c.send(raw[:k])
            sleep_ms(2)
            c.send(raw[k:])
            resp = c.read_response()
            if resp.status != 200 or resp.body != want.encode():
                return False, f"split at {k}: {resp.status} {resp.body!r}"
    return True, f"{len(raw) - 1} split points"


def byte_at_a_time(r, pairs):
    with r.conn() as c:
        for raw, want in pairs:
            for i in range(len(raw)):
                c.send(raw[i:i + 1])
                sleep_ms(1)
            resp = c.read_response()
            if resp.body != want.encode():
                return False, f"{resp.status} {resp.body!r}, want {want}"
    return True, ""


def raw_body(r, raw, want, status=200):
    with r.conn() as c:
        c.send(raw)
        resp = c.read_response()
    return resp.status == status and resp.body == want.encode(), f"{resp.status} {resp.body[:60]!r}"


def unknown_path(r):
    with r.conn() as c:
        c.send(r.req("GET", "/no/such/endpoint"))
        resp = c.read_response()
        r.heads.setdefault("baseline", []).append(("GET /no/such/endpoint", resp))
        if resp.status != 404:
            return False, f"status {resp.status}"
        c.send(r.req("GET", BL))
        resp = c.read_response()
        return resp.body == b"55", f"then {resp.status} {resp.body!r}"


def noise(r, rnd):
    """Malformed requests: a 4xx or a close (lenient ones may also get 200), never a 5xx,
    never silence, and the server keeps serving others."""
    h = b"Host: localhost\r\n"
    cases = [
        ("NUL byte in target", b"GET /base\x00line11?a=1&b=1 HTTP/1.1\r\n" + h + b"\r\n", False),
        ("binary junk ending in CRLFCRLF", bytes([0x8f]) + rnd.randbytes(600) + b"\r\n\r\n", False),
        ("empty header name", b"GET /baseline11?a=1&b=1 HTTP/1.1\r\n" + h + b": v\r\n\r\n", False),
        ("header line without colon", b"GET /baseline11?a=1&b=1 HTTP/1.1\r\n" + h + b"X-Bad\r\n\r\n", False),
        ("non-numeric Content-Length",
         b"POST /baseline11?a=1&b=1 HTTP/1.1\r\n" + h + b"Content-Length: 2x\r\n\r\n20", False),
        ("bare CR in head", b"GET /baseline11?a=1&b=1 HTTP/1.1\r" + h + b"\r\n", True),
        ("obs-fold header", b"GET /baseline11?a=1&b=1 HTTP/1.1\r\n" + h + b"X-F: a\r\n \tb\r\n\r\n", True),
        ("8 KB header", b"GET /baseline11?a=1&b=1 HTTP/1.1\r\n" + h + b"X-Huge: " +
         rnd.randbytes(6144).hex()[:8192].encode() + b"\r\n\r\n", True),
    ]
    # Advisory: junk with no line end at all (like HttpArena's unused noise-binary.raw) is
    # best refused at its first byte rather than held until a size limit or idle timeout.
    unterminated = ("binary junk with no line end (advisory)",
                    bytes([0x8f]) + rnd.randbytes(600).replace(b"\r", b"").replace(b"\n", b""), False)
    for name, raw, lenient in cases + [unterminated]:
        def one(raw=raw, lenient=lenient):
            c = r.conn(timeout=3.0)
            try:
                c.send(raw)
                try:
                    resp = c.read_response()
                    outcome, st = f"HTTP {resp.status}", resp.status
                except ProtocolError as e:
                    outcome, st = f"closed ({e})", None
                except TimeoutError:
                    return False, "no answer and no close within 3 s"
                except OSError as e:
                    outcome, st = f"closed ({e})", None
            finally:
                c.close()
            ok = st is None or 400 <= st < 500 or (lenient and st == 200)
            alive = alive_check(r)
            return ok and alive, outcome + ("" if alive else "; server no longer answers")
        r.run(f"x-noise {name}", one, advisory=raw is unterminated[1])

    def badcl():
        held = r.conn(timeout=3.0)
        try:
            held.send(b"POST /baseline11 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 999\r\n\r\n")
            return alive_check(r), "other connections served while a body is outstanding"
        finally:
            held.close()
    r.run("x-noise Content-Length 999 with no body does not block others", badcl)


def alive_check(r):
    try:
        with r.conn(timeout=3.0) as c:
            c.send(r.req("GET", BL))
            return c.read_response().body == b"55"
    except OSError:
        return False
    except ProtocolError:
        return False


# ---------------------------------------------------------------- limited-conn
def limited_conn(r, rnd):
    def churn():
        for n in range(60):
            with r.conn() as c:
                for i in range(10):
                    a, b = rnd.randint(0, 999), rnd.randint(0, 999)
                    c.send(r.req("GET", f"/baseline11?a={a}&b={b}"))
                    resp = c.read_response()
                    if resp.body != str(a + b).encode():
                        return False, f"connection {n} request {i}: {resp.body!r}"
        return True, "60 connections x 10 requests"
    r.run("x-limited-conn 60 connections of 10 requests each", churn)


# ---------------------------------------------------------------- pipelined
def pipelined(r, rnd):
    u = r.base + "/pipeline"
    r.run("c09 pipelined GET /pipeline -> ok", lambda: body_is(r.curl_body(u), "ok"))

    def ct():
        v = r.curl_header("Content-Type", u)
        return r.ctype_ok(v, "text/plain"), f"Content-Type: {v}"
    r.run("c10 pipelined Content-Type text/plain", ct)
    one = r.req("GET", "/pipeline")

    def batch():
        with r.conn() as c:
            c.send(one * 16)
            for i in range(16):
                resp = c.read_response()
                if resp.status != 200 or resp.body != b"ok" or not r.ctype_ok(resp.header("content-type"), "text/plain"):
                    return False, f"response {i}: {resp.status} {resp.body!r}"
                r.heads.setdefault("pipelined", []).append(("GET /pipeline", resp)) if i == 0 else None
        return True, "16 x ok"
    r.run("x-pipelined 16 requests in one write -> 16 x ok", batch)

    def refill():
        total, inflight, done = 3000, 0, 0
        with r.conn() as c:
            c.send(one * 16)
            inflight = sent = 16
            while done < total:
                resp = c.read_response()
                done += 1
                inflight -= 1
                if resp.body != b"ok":
                    return False, f"response {done}: {resp.body!r}"
                if sent < total:
                    c.send(one)
                    sent += 1
                    inflight += 1
        return True, f"{total} responses, 16 in flight"
    r.run("x-pipelined depth-16 refill (gcannon -p 16 pattern)", refill)

    def mixed():
        with r.conn() as c:
            reqs = [one if i % 2 else r.req("GET", f"/baseline11?a={i}&b=0") for i in range(16)]
            c.send(b"".join(reqs))
            for i in range(16):
                resp = c.read_response()
                want = b"ok" if i % 2 else str(i).encode()
                if resp.body != want:
                    return False, f"response {i}: {resp.body!r}, want {want!r}"
        return True, "order kept"
    r.run("x-pipelined mixed /pipeline and /baseline11 batch in order", mixed)


# ---------------------------------------------------------------- json
def json_arena_check(r, doc, count, m):
    """HttpArena's own json check: count, every item has total, totals exact."""
    items = doc.get("items", [])
    has_total = all("total" in it for it in items) if items else False
    correct = all(it.get("total", 0) == it["price"] * it["quantity"] * m for it in items)
    return doc.get("count") == count and has_total and correct, \
        f"count={doc.get('count')}, has_total={has_total}, correct_totals={correct}"


def json_profile(r, rnd):
    def c11():
        for count, m in [(12, 3), (22, 7), (31, 2), (50, 5)]:
            rc, out = r.curl(f"{r.base}/json/{count}?m={m}")
            ok, detail = json_arena_check(r, json.loads(out), count, m)
            if not ok:
                return False, f"/json/{count}?m={m}: {detail}"
        return True, "4 (count, m) pairs"
    r.run("c11 json counts and exact totals", c11)

    def c12():
        v = r.curl_header("Content-Type", f"{r.base}/json/50?m=1")
        return r.ctype_ok(v, "application/json"), f"Content-Type: {v}"
    r.run("c12 json Content-Type application/json", c12)

    def full():
        pairs = [(c, m) for c, m in [(1, 3), (5, 7), (10, 2), (15, 5), (25, 4), (40, 8), (50, 6)]]
        pairs += [(rnd.randint(1, 50), rnd.randint(1, 100000)) for _ in range(20)]
        with r.conn() as c:
            for count, m in pairs:
                c.send(r.req("GET", f"/json/{count}?m={m}"))
                resp = c.read_response()
                if resp.status != 200:
                    return False, f"/json/{count}?m={m}: status {resp.status}"
                if resp.has("content-encoding"):
                    return False, f"/json/{count}?m={m}: Content-Encoding without Accept-Encoding"
                ok, detail = r.json_ok(json.loads(resp.body), count, m)
                if not ok:
                    return False, f"/json/{count}?m={m}: {detail}"
        return True, f"{len(pairs)} requests on one connection, items equal the dataset"
    r.run("x-json templates and random m: items match dataset, totals exact", full)

    def no_m():
        resp = r.one("GET", "/json/1", keep="json")
        if resp.status != 200:
            return False, f"status {resp.status}"
        return r.json_ok(json.loads(resp.body), 1, 1)
    r.run("x-json /json/1 without m (readiness probe) uses m=1", no_m)
    r.one("GET", "/json/50?m=6", keep="json")


# ---------------------------------------------------------------- json-comp
def json_comp(r, rnd):
    ae = ["-H", "Accept-Encoding: gzip, br"]

    def c13():
        v = r.curl_header("Content-Encoding", *ae, f"{r.base}/json/50?m=1")
        tok = (v or "").split()[0].lower() if v else ""
        return tok in ("gzip", "br"), f"Content-Encoding: {v}"
    r.run("c13 json-comp Content-Encoding gzip or br", c13)

    def c14():
        for count, m in [(25, 3), (40, 7), (50, 2)]:
            rc, out = r.curl("--compressed", *ae, f"{r.base}/json/{count}?m={m}")
            ok, detail = json_arena_check(r, json.loads(out), count, m)
            if not ok:
                return False, f"/json/{count}?m={m}: {detail}"
        return True, "3 pairs decoded by curl"
    r.run("c14 json-comp curl --compressed counts and totals", c14)

    def c15():
        v = r.curl_header("Content-Encoding", f"{r.base}/json/50?m=1")
        return v is None, f"Content-Encoding: {v}" if v else "absent"
    r.run("c15 json-comp no Content-Encoding without Accept-Encoding", c15)

    def per_encoding(accept, allowed, counts=(25, 50)):
        def check():
            count, m = rnd.randint(*counts), rnd.randint(1, 1000)
            plain = r.one("GET", f"/json/{count}?m={m}")
            resp = r.one("GET", f"/json/{count}?m={m}", [("Accept-Encoding", accept)], keep="json-comp")
            enc = (resp.header("content-encoding") or "").lower()
            if enc not in allowed:
                return False, f"Content-Encoding {enc!r}, want one of {allowed}"
            doc = json.loads(decode_body(enc, resp.body))
            ok, detail = r.json_ok(doc, count, m)
            if ok and enc and len(resp.body) >= len(plain.body):
                return False, f"compressed {len(resp.body)} B >= plain {len(plain.body)} B"
            return ok, detail or f"{enc or 'identity'} {len(resp.body)} B (plain {len(plain.body)} B)"
        return check
    r.run("x-json-comp 'gzip, br' decodes to the exact items",
          per_encoding("gzip, br", ("gzip", "br")))
    r.run("x-json-comp 'gzip' only -> gzip", per_encoding("gzip", ("gzip",)))
    r.run("x-json-comp 'br' only -> br", per_encoding("br", ("br",)))
    r.run("x-json-comp 'identity' -> not compressed", per_encoding("identity", ("",)))
    # Small answers (count 1..24; json-comp's templates use 25, 40, 50) may stay uncompressed.
    r.run("x-json-comp small answers: identity or a body that decodes exactly",
          per_encoding("gzip, br", ("", "gzip", "br"), counts=(1, 24)))


# ---------------------------------------------------------------- upload
def upload(r, rnd):
    u = r.base + "/upload"
    octet = ["-X", "POST", "-H", "Content-Type: application/octet-stream"]
    r.run("c16 upload small body -> 17", lambda: body_is(
        r.curl_body(*octet, "--data-binary", "Hello, HttpArena!", u), "17"))
    import base64
    body48 = base64.b64encode(rnd.randbytes(64)).decode()[:48]
    r.run("c17 upload random 48-byte body -> 48", lambda: body_is(
        r.curl(*octet, "--data-binary", body48, u)[1].decode(), "48"))

    def c18():
        for size in (512000, 2097152, 10485760, 20971520):
            rc, out = r.curl(*octet, "--data-binary", "@-", u, stdin=os.urandom(size), max_time=60)
            if out != str(size).encode():
                return False, f"{size} bytes: got {out[:40]!r} (curl rc {rc})"
        return True, "500K, 2M, 10M, 20M"
    r.run("c18 upload 4 sizes via curl --data-binary @-", c18)

    def expect100():
        size = 20971520
        with r.conn(timeout=10.0) as c:
            c.send(r.req("POST", "/upload", [("Content-Length", str(size)), ("Expect", "100-continue")]))
            interim = c.read_response(allow_interim=True)
            if interim.status != 100:
                return False, f"got {interim.status} before the body, want 100 Continue"
            data = os.urandom(size)
            c.send(data)
            resp = c.read_response("POST")
        return resp.status == 200 and resp.body == str(size).encode(), f"{resp.status} {resp.body[:40]!r}"
    r.run("x-upload 20 MB with Expect: 100-continue gets 100 Continue first", expect100)

    def curl_expect():
        with tempfile.NamedTemporaryFile() as f:
            f.write(os.urandom(20971520))
            f.flush()
            rc, out = r.curl(*octet, "-H", "Expect: 100-continue", "--data-binary", f"@{f.name}", u,
                             max_time=60)
        return out == b"20971520", f"got {out[:40]!r} (curl rc {rc})"
    r.run("x-upload 20 MB via curl with Expect: 100-continue", curl_expect)

    def chunked_curl():
        data = os.urandom(1 << 20)
        rc, out = r.curl(*octet, "-H", "Transfer-Encoding: chunked", "--data-binary", "@-", u, stdin=data)
        return out == str(len(data)).encode(), f"got {out[:40]!r}"
    r.run("x-upload chunked 1 MiB via curl", chunked_curl)

    def keepalive_mix():
        with r.conn() as c:
            for size in (512000, 0, 7, 65536, 3):
                c.send(r.req("POST", "/upload", [("Content-Length", str(size))], os.urandom(size)))
                resp = c.read_response("POST")
                r.heads.setdefault("upload", []).append(("POST /upload", resp))
                if resp.status != 200 or resp.body != str(size).encode():
                    return False, f"{size} bytes: {resp.status} {resp.body[:40]!r}"
                if not r.ctype_ok(resp.header("content-type"), "text/plain"):
                    return False, f"Content-Type {resp.header('content-type')}"
            body = os.urandom(100000)
            c.send(r.req("POST", "/upload", [("Transfer-Encoding", "chunked")],
                         chunked(body, [1, 4095, 50000, 45904])))
            resp = c.read_response("POST")
            if resp.body != b"100000":
                return False, f"chunked 100000: {resp.body[:40]!r}"
        return True, "sizes 512000, 0, 7, 65536, 3 and chunked 100000 on one connection"
    r.run("x-upload keep-alive: several bodies (no Content-Type) on one connection", keepalive_mix)


# ---------------------------------------------------------------- static
def static(r, rnd, names, mime):
    sdir = os.path.join(r.data, "static")
    for num, name, ct in [("c19", "reset.css", "text/css"), ("c20", "app.js", "application/javascript"),
                          ("c21", "manifest.json", "application/json")]:
        def one(name=name, ct=ct):
            v = r.curl_header("Content-Type", f"{r.base}/static/{name}")
            return r.ctype_ok(v, ct), f"Content-Type: {v}"
        r.run(f"{num} static {name} Content-Type {ct}", one)

    def original(name):
        with open(os.path.join(sdir, name), "rb") as f:
            return f.read()

    def c22():
        bad = []
        for n in names:
            if not os.path.isfile(os.path.join(sdir, n)):
                bad.append(f"{n}: missing from {sdir}")
                continue
            want = os.path.getsize(os.path.join(sdir, n))
            rc, out = r.curl("-o", "/dev/null", "-w", "%{size_download}", f"{r.base}/static/{n}")
            if out.decode().strip() != str(want):
                bad.append(f"{n}: {out.decode().strip()} B, want {want}")
        return not bad, "; ".join(bad[:4]) if bad else f"{len(names)} files"
    r.run("c22 static sizes without Accept-Encoding", c22)

    def c23():
        bad, comp, plain = [], 0, 0
        with tempfile.TemporaryDirectory() as td:
            for n in names:
                hdr, body = os.path.join(td, "h"), os.path.join(td, "b")
                subprocess.run(["curl", "-s", "--max-time", "30", "--compressed", "-D", hdr, "-o", body,
                                f"{r.base}/static/{n}"], timeout=40)
                enc = None
                with open(hdr, "rb") as f:
                    for line in f.read().decode("latin-1").split("\r\n"):
                        if line.lower().startswith("content-encoding:"):
                            enc = line.split(":", 1)[1].strip().lower()
                if not enc:
                    plain += 1
                    continue
                got = os.path.getsize(body)
                want = os.path.getsize(os.path.join(sdir, n)) if os.path.isfile(os.path.join(sdir, n)) else -1
                if got == want:
                    comp += 1
                else:
                    bad.append(f"{n}: {enc} decoded to {got} B, want {want}")
        if bad:
            return False, "; ".join(bad[:4])
        return (True if comp else None), f"{comp} compressed, {plain} not"
    r.run("c23 static curl --compressed decodes to the original size", c23)

    def c24():
        rc, out = r.curl("-o", "/dev/null", "-w", "%{http_code}", f"{r.base}/static/nonexistent.txt")
        return out == b"404", f"HTTP {out.decode()}"
    r.run("c24 static nonexistent.txt -> 404", c24)

    present = [n for n in names if os.path.isfile(os.path.join(sdir, n))]

    def exact_plain():
        with r.conn() as c:
            for n in present:
                c.send(r.req("GET", f"/static/{n}"))
                resp = c.read_response()
                r.heads.setdefault("static", []).append((f"GET /static/{n}", resp))
                ext = os.path.splitext(n)[1]
                if resp.status != 200 or resp.has("content-encoding") or resp.body != original(n):
                    return False, f"{n}: {resp.status}, {resp.header('content-encoding')}, {len(resp.body)} B"
                if ext in mime and not r.ctype_ok(resp.header("content-type"), mime[ext]):
                    return False, f"{n}: Content-Type {resp.header('content-type')}, want {mime[ext]}"
        return True, f"{len(present)} files byte-exact, Content-Types right"
    r.run("x-static exact bytes and Content-Type for every extension (keep-alive)", exact_plain)

    def rotation(accept, allowed, rounds):
        def check():
            encs = {}
            with r.conn() as c:
                for _ in range(rounds):
                    for n in present:
                        c.send(r.req("GET", f"/static/{n}", [("Accept-Encoding", accept)]))
                        resp = c.read_response()
                        r.heads.setdefault("static", []).append((f"GET /static/{n} ({accept})", resp))
                        enc = (resp.header("content-encoding") or "").lower()
                        if resp.status != 200 or enc not in allowed:
                            return False, f"{n}: {resp.status}, Content-Encoding {enc!r}"
                        if enc and n.endswith((".woff2", ".webp")):
                            return False, f"{n}: binary file sent with Content-Encoding {enc}"
                        if decode_body(enc, resp.body) != original(n):
                            return False, f"{n}: {enc or 'identity'} body does not decode to the file"
                        encs[enc or "identity"] = encs.get(enc or "identity", 0) + 1
            return True, ", ".join(f"{k}: {v}" for k, v in sorted(encs.items()))
        return check
    r.run("x-static wrk rotation with 'br;q=1, gzip;q=0.8' decodes byte-exact (3 rounds)",
          rotation("br;q=1, gzip;q=0.8", ("", "br", "gzip"), 3))
    r.run("x-static 'gzip' only: never br, decodes byte-exact", rotation("gzip", ("", "gzip"), 1))

    def missing_keepalive():
        with r.conn() as c:
            c.send(r.req("GET", "/static/definitely-not-here.css"))
            resp = c.read_response()
            r.heads.setdefault("static", []).append(("GET /static/<missing>", resp))
            if resp.status != 404:
                return False, f"status {resp.status}"
            c.send(r.req("GET", "/static/reset.css"))
            resp = c.read_response()
            return resp.status == 200, f"then {resp.status}"
    r.run("x-static 404 keeps the connection usable", missing_keepalive)

    def traversal():
        dataset = open(os.path.join(r.data, "dataset.json"), "rb").read()
        bad = []
        for p in ["/static/../dataset.json", "/static/%2e%2e/dataset.json", "/static/..%2fdataset.json",
                  "/static/%2E%2E%2Fdataset.json", "/static//etc/passwd", "/static/./../../etc/passwd"]:
            try:
                with r.conn() as c:
                    c.send(r.req("GET", p))
                    resp = c.read_response()
            except (ProtocolError, OSError):
                continue
            if resp.status == 200 or resp.body == dataset or b"root:" in resp.body:
                bad.append(f"{p} -> {resp.status} ({len(resp.body)} B)")
        return not bad, "; ".join(bad) if bad else "all refused"
    r.run("x-static path traversal refused", traversal)
