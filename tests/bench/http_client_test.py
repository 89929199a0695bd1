#!/usr/bin/env python3
"""http_client_test.py SATURN_BENCH_HTTP_CLIENT: the http-client suite's server and checks
(scripts/bench_lib/httpclient.py, checks.check_http_client).

Starts the suite's nginx, checks it answers /plaintext itself (Server: nginx, the body),
runs the saturn client for 1 s against it and expects a record that passes the suite's
check with nginx's count equal to the client's; then that a record claiming one answer
more than nginx served, one with an error, and one with no requests all fail; and that
nginx is gone (its PID) once stopped. About 3 s. Skips (exit 0 with a note) when nginx is
not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from bench_lib import httpclient  # noqa: E402
from bench_lib.checks import check_record  # noqa: E402


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: http_client_test.py SATURN_BENCH_HTTP_CLIENT", file=sys.stderr)
        return 2
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        print("http_client_test: nginx not installed, skipped")
        return 0
    proc, url, prefix = httpclient.start_nginx()
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            assert r.headers.get("Server") == "nginx" and r.read().decode() == httpclient.BODY
        before = httpclient.served(url)
        out = subprocess.run(httpclient.client_argv(sys.argv[1], url, 1, 2), capture_output=True, text=True,
                             timeout=30)
        after = httpclient.served(url)
    finally:
        httpclient.stop(proc)
        shutil.rmtree(prefix, ignore_errors=True)
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert check_record(rec, "http-client", "saturn", {}) is None, rec
    assert httpclient.cross_check(rec, before, after) == "", rec
    assert rec["nginx_requests"] == rec["requests"] > 0, rec
    assert rec["connections"] <= httpclient.CONCURRENCY, rec
    liar = dict(rec, requests=rec["requests"] + 1)
    assert "nginx served" in httpclient.cross_check(liar, before, after)
    assert "errors" in check_record(dict(rec, errors=1), "http-client", "saturn", {})
    assert "no requests" in check_record(dict(rec, requests=0), "http-client", "saturn", {})
    assert proc.poll() is not None and not os.path.exists(f"/proc/{proc.pid}"), "nginx still running"
    print(f"http_client_test: ok ({rec['requests']} requests, {rec['ops_per_sec']:.0f} rps, "
          f"nginx counted {rec['nginx_requests']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
