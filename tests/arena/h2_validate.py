#!/usr/bin/env python3
"""HttpArena's HTTP/2 checks against saturn-arena: baseline-h2, static-h2 (h2 over TLS on
the h2 port), baseline-h2c and json-h2c (cleartext HTTP/2 only on the h2c port), and h2c
by prior knowledge on the HTTP/1.1 port, each as HttpArena's scripts/validate.sh runs it
(curl --http2 / --http2-prior-knowledge), plus an h2load run per port.

Run by run_validate.sh with ARENA_TLS=1 and ARENA_H2=1, which passes ARENA_H2_PORT,
ARENA_H2C_PORT and ARENA_CERTS.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys


class Checks:
    def __init__(self, host, port, h2_port, h2c_port, certs):
        self.host, self.port, self.h2_port, self.h2c_port, self.certs = host, port, h2_port, h2c_port, certs
        self.failed = 0

    def result(self, name, ok, detail=""):
        print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + detail))
        if not ok:
            self.failed += 1

    def curl(self, *args):
        p = subprocess.run(["curl", "-s", "--max-time", "20", *args], capture_output=True, timeout=30)
        return p.stdout.decode(errors="replace")

    def h2(self, path, *args):
        return self.curl("--cacert", os.path.join(self.certs, "ca.pem"), "--http2", *args,
                         "https://localhost:%d%s" % (self.h2_port, path))

    def h2c(self, path, *args, port=None):
        return self.curl("--http2-prior-knowledge", *args, "http://%s:%d%s" % (self.host, port or self.h2c_port, path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    c = Checks(a.host, a.port, int(os.environ["ARENA_H2_PORT"]), int(os.environ["ARENA_H2C_PORT"]),
               os.environ["ARENA_CERTS"])

    # baseline-h2
    c.result("baseline-h2: HTTP/2 negotiated by ALPN",
             c.h2("/baseline2?a=1&b=1", "-o", "/dev/null", "-w", "%{http_version}") == "2")
    c.result("baseline-h2: GET /baseline2?a=13&b=42", c.h2("/baseline2?a=13&b=42") == "55")
    x, y = random.randint(100, 999), random.randint(100, 999)
    c.result("baseline-h2: random sum", c.h2("/baseline2?a=%d&b=%d" % (x, y)) == str(x + y))
    head = c.h2("/baseline2?a=1&b=1", "-D-", "-o", "/dev/null")
    c.result("baseline-h2: Content-Type text/plain", "content-type: text/plain" in head.lower(), head)

    # static-h2
    for f, ct in (("reset.css", "text/css"), ("app.js", "application/javascript"),
                  ("manifest.json", "application/json")):
        head = c.h2("/static/" + f, "-D-", "-o", "/dev/null")
        c.result("static-h2: %s Content-Type %s" % (f, ct), ("content-type: " + ct) in head.lower(), head)
    size = c.h2("/static/reset.css", "-o", "/dev/null", "-w", "%{size_download}")
    want = os.path.getsize(os.path.join(a.data, "static", "reset.css"))
    c.result("static-h2: reset.css has its size", size == str(want), "%s, expected %d" % (size, want))
    br = c.h2("/static/app.js", "-H", "Accept-Encoding: br;q=1, gzip;q=0.8", "-D-", "-o", "/dev/null")
    c.result("static-h2: app.js precompressed (br)", "content-encoding: br" in br.lower(), br)
    c.result("static-h2: missing file is 404",
             c.h2("/static/nonexistent.txt", "-o", "/dev/null", "-w", "%{http_code}") == "404")

    # baseline-h2c
    c.result("baseline-h2c: HTTP/2 cleartext (prior knowledge)",
             c.h2c("/baseline2?a=1&b=1", "-o", "/dev/null", "-w", "%{http_version}") == "2")
    code = c.curl("--http1.1", "-o", "/dev/null", "-w", "%{http_code}",
                  "http://%s:%d/baseline2?a=1&b=1" % (a.host, c.h2c_port))
    c.result("baseline-h2c: the h2c port refuses HTTP/1.1", code != "200", "got " + code)
    c.result("baseline-h2c: GET /baseline2?a=13&b=42", c.h2c("/baseline2?a=13&b=42") == "55")
    x, y = random.randint(100, 999), random.randint(100, 999)
    c.result("baseline-h2c: random sum", c.h2c("/baseline2?a=%d&b=%d" % (x, y)) == str(x + y))
    head = c.h2c("/baseline2?a=1&b=1", "-D-", "-o", "/dev/null")
    c.result("baseline-h2c: Content-Type text/plain", "content-type: text/plain" in head.lower(), head)

    # json-h2c
    c.result("json-h2c: HTTP/2 on /json",
             c.h2c("/json/1?m=1", "-o", "/dev/null", "-w", "%{http_version}") == "2")
    head = c.h2c("/json/1?m=1", "-D-", "-o", "/dev/null")
    c.result("json-h2c: Content-Type application/json", "content-type: application/json" in head.lower(), head)
    dataset = json.load(open(os.path.join(a.data, "dataset.json")))
    for count, m in ((12, 3), (22, 7), (31, 2), (50, 5)):
        body = c.h2c("/json/%d?m=%d" % (count, m))
        try:
            d = json.loads(body)
            items = d.get("items", [])
            ok = d.get("count") == count and len(items) == count and all(
                abs(it["total"] - src["price"] * src["quantity"] * m) < 0.01 for it, src in zip(items, dataset))
        except (ValueError, KeyError, TypeError):
            ok = False
        c.result("json-h2c: /json/%d?m=%d" % (count, m), ok, body[:200])

    # h2c by prior knowledge on the HTTP/1.1 port (unary-grpc's port)
    c.result("h2c on the HTTP/1.1 port by prior knowledge",
             c.h2c("/baseline2?a=2&b=3", "-w", " %{http_version}", port=a.port) == "5 2")
    c.result("HTTP/1.1 on the HTTP/1.1 port", c.curl("http://%s:%d/baseline11?a=2&b=3" % (a.host, a.port)) == "5")

    if shutil.which("h2load"):
        for name, url in (("h2c", "http://%s:%d/baseline2?a=1&b=1" % (a.host, c.h2c_port)),
                          ("h2", "https://localhost:%d/baseline2?a=1&b=1" % c.h2_port)):
            p = subprocess.run(["h2load", "-n", "20000", "-c", "8", "-m", "100", url], capture_output=True,
                               timeout=120)
            out = p.stdout.decode(errors="replace")
            c.result("h2load %s: 20000 requests, all 2xx" % name,
                     "20000 succeeded, 0 failed, 0 errored" in out and "20000 2xx" in out, out[-600:])
    else:
        print("SKIP h2load: not installed")
    print("%d failed" % c.failed)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
