#!/usr/bin/env python3
"""Check an HTTP/1.1 server against the HttpArena validation rules for eight profiles.

Our own re-implementation of the checks HttpArena's validation runs for the profiles
baseline, pipelined, limited-conn, json, json-comp, upload, static and echo-ws (numbered
c01..c32 below), plus extra checks (x-...) for behaviour the load generators rely on:
keep-alive, pipelining order, requests split at every byte, response heads small enough
for gcannon (< 1024 bytes, <= 16 fields), 100-continue, malformed requests.

Usage: validate.py --host 127.0.0.1 --port P --data DIR [--profiles a,b,...]
DIR holds dataset.json and static/ (ours from gen_data.py, or HttpArena's data/ folder).
Prints one line per check (PASS/FAIL/SKIP/WARN name: detail) and a summary; exits 1 on any
FAIL. WARN marks an advisory check (a recommendation no HttpArena script tests) that failed.
Standard library only; uses curl where a check is defined by curl's behaviour.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

from arena_client import Conn, build_request, head_limits, sleep_ms
import checks_h1
import validate_ws

PROFILES = ["baseline", "pipelined", "limited-conn", "json", "json-comp", "upload",
            "static", "echo-ws"]
# The 20 files HttpArena's static check walks; sizes come from DIR/static.
STATIC_NAMES = ["reset.css", "layout.css", "theme.css", "components.css", "utilities.css",
                "analytics.js", "helpers.js", "app.js", "vendor.js", "router.js",
                "header.html", "footer.html", "regular.woff2", "bold.woff2", "logo.svg",
                "icon-sprite.svg", "hero.webp", "thumb1.webp", "thumb2.webp", "manifest.json"]
MIME = {".css": "text/css", ".js": "application/javascript", ".json": "application/json",
        ".html": "text/html", ".svg": "image/svg+xml", ".webp": "image/webp",
        ".woff2": "font/woff2"}


class Runner:
    def __init__(self, host, port, data):
        self.host, self.port, self.data = host, port, data
        self.base = f"http://{host}:{port}"
        self.passed = self.failed = self.skipped = self.warned = 0
        self.failures = []
        with open(os.path.join(data, "dataset.json")) as f:
            self.dataset = json.load(f)
        self.frag_close = []  # whether each fragmented Connection: close request was closed
        self.heads = {}  # profile -> list of (label, Response) for the head-limit checks

    # ---- reporting ----
    def result(self, name, ok, detail="", advisory=False):
        """ok None = SKIP. An advisory check (a recommendation HttpArena does not test)
        prints WARN instead of FAIL and does not fail the run."""
        if ok is False and advisory:
            self.warned += 1
            print(f"WARN {name}" + (f": {detail}" if detail else ""), flush=True)
            return
        if ok is None:
            self.skipped += 1
            tag = "SKIP"
        elif ok:
            self.passed += 1
            tag = "PASS"
        else:
            self.failed += 1
            self.failures.append(name)
            tag = "FAIL"
        print(f"{tag} {name}" + (f": {detail}" if detail else ""), flush=True)

    def run(self, name, fn, advisory=False):
        """Run one check function; an exception is a FAIL with the exception as detail."""
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - any error is the check's failure
            self.result(name, False, f"{type(e).__name__}: {e}", advisory)
            return
        ok, detail = out if isinstance(out, tuple) else (out, "")
        self.result(name, ok, detail, advisory)

    # ---- transport helpers ----
    def conn(self, timeout=5.0):
        return Conn(self.host, self.port, timeout=timeout)

    def req(self, method, path, headers=(), body=b""):
        return build_request(method, path, headers, body, host=f"{self.host}:{self.port}")

    def one(self, method, path, headers=(), body=b"", keep=None):
        """One request on a fresh connection; the response is recorded for head checks."""
        with self.conn() as c:
            c.send(self.req(method, path, headers, body))
            r = c.read_response(method)
        if keep:
            self.heads.setdefault(keep, []).append((f"{method} {path}", r))
        return r

    def curl(self, *args, stdin=None, max_time=30):
        p = subprocess.run(["curl", "-s", "--max-time", str(max_time), *args],
                           input=stdin, capture_output=True, timeout=max_time + 10)
        return p.returncode, p.stdout

    def curl_body(self, *args, **kw):
        """Body as validate.sh's `check` sees it: last line of `curl -D-` output."""
        rc, out = self.curl("-D-", *args, **kw)
        text = out.decode("latin-1").rstrip("\n")
        return text.split("\n")[-1] if text else ""

    def curl_header(self, name, *args):
        rc, out = self.curl("-D-", "-o", "/dev/null", *args)
        for line in out.decode("latin-1").split("\r\n"):
            if line.lower().startswith(name.lower() + ":"):
                return line.split(":", 1)[1].strip()
        return None

    @staticmethod
    def ctype_ok(value, expected):
        if value is None:
            return False
        norm = value.replace("text/javascript", "application/javascript")
        exp = expected.replace("text/javascript", "application/javascript")
        return norm == exp or norm.startswith(exp + ";")

    def fragmented(self, frags, expected):
        """Send fragments 30 ms apart (Connection: close), read to EOF (5 s), decode body."""
        c = self.conn(timeout=5.0)
        buf, closed = b"", False
        try:
            for i, f in enumerate(frags):
                c.send(f)
                if i < len(frags) - 1:
                    sleep_ms(30)
            t0 = time.monotonic()
            try:
                while True:
                    chunk = c.sock.recv(65536)
                    if not chunk:
                        closed = True
                        break
                    buf += chunk
            except OSError:
                pass
            waited = time.monotonic() - t0
        finally:
            c.close()
        body = ""
        if b"\r\n\r\n" in buf:
            head, raw = buf.split(b"\r\n\r\n", 1)
            hdrs = {}
            for line in head.split(b"\r\n")[1:]:
                if b":" in line:
                    k, v = line.split(b":", 1)
                    hdrs[k.strip().lower()] = v.strip()
            if hdrs.get(b"transfer-encoding", b"").lower() == b"chunked":
                parts = []
                while raw:
                    nl = raw.find(b"\r\n")
                    if nl < 0:
                        break
                    size = int(raw[:nl].split(b";")[0], 16)
                    raw = raw[nl + 2:]
                    if size == 0:
                        break
                    parts.append(raw[:size])
                    raw = raw[size + 2:]
                raw = b"".join(parts)
            elif b"content-length" in hdrs:
                raw = raw[:int(hdrs[b"content-length"])]
            body = raw.decode("latin-1").strip()
        self.frag_close.append(closed and waited < 4.5)
        return body == expected, f"body {body!r}" + ("" if closed else " (server did not close)")

    # ---- shared oracles ----
    def json_ok(self, doc, count, m):
        """(ok, detail) for a /json/{count}?m= body, as HttpArena checks it plus full items."""
        if doc.get("count") != count:
            return False, f"count={doc.get('count')!r}, want {count}"
        items = doc.get("items")
        if not isinstance(items, list) or not items:
            return False, "no items"
        if len(items) != count:
            return False, f"{len(items)} items, want {count}"
        for got, src in zip(items, self.dataset):
            want = dict(src, total=src["price"] * src["quantity"] * m)
            if type(got.get("total")) is not int or got.get("total") != want["total"]:
                return False, f"item {src.get('id')}: total {got.get('total')!r}, want {want['total']}"
            if got != want:
                return False, f"item {src.get('id')} differs from dataset: {got!r}"
        return True, ""


def static_files(data):
    """The static files to check: the documented 20 plus any other non-sibling files."""
    d = os.path.join(data, "static")
    names = list(STATIC_NAMES)
    if os.path.isdir(d):
        for n in sorted(os.listdir(d)):
            if not n.endswith((".gz", ".br")) and n not in names and os.path.isfile(os.path.join(d, n)):
                names.append(n)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--seed", type=int, default=None, help="seed for the random values")
    args = ap.parse_args()
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        ap.error(f"unknown profile(s) {unknown}; known: {PROFILES}")
    if not shutil.which("curl"):
        print("FAIL setup: curl not found (needed for the curl-defined checks)")
        return 1
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"# validate.py seed {seed}, profiles {','.join(profiles)}")
    rnd = random.Random(seed)
    r = Runner(args.host, args.port, args.data)
    if "baseline" in profiles or "limited-conn" in profiles:
        checks_h1.baseline(r, rnd)
    if "limited-conn" in profiles:
        checks_h1.limited_conn(r, rnd)
    if "pipelined" in profiles:
        checks_h1.pipelined(r, rnd)
    if "json" in profiles:
        checks_h1.json_profile(r, rnd)
    if "json-comp" in profiles:
        checks_h1.json_comp(r, rnd)
    if "upload" in profiles:
        checks_h1.upload(r, rnd)
    if "static" in profiles:
        checks_h1.static(r, rnd, static_files(args.data), MIME)
    if "echo-ws" in profiles:
        validate_ws.echo_ws(r, rnd)
    for profile, rs in r.heads.items():
        bad = [f"{label}: {why}" for label, resp in rs for why in [head_limits(resp)] if why]
        r.result(f"x-{profile} response heads < 1024 B and <= 16 fields", not bad,
                 "; ".join(bad[:5]) if bad else f"{len(rs)} responses")
    print(f"# summary: {r.passed} passed, {r.failed} failed, {r.skipped} skipped, {r.warned} warnings")
    if r.failures:
        print("# failed: " + ", ".join(r.failures))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
