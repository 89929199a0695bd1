#!/usr/bin/env python3
"""scripts/bench_http_client.py — the `http-client` suite (issue #32 item 5), standalone.

`scripts/bench --suite http-client` runs the same suite through the bench runner (a fresh
nginx per run, results and docs like every suite); this script is the quick look: one
nginx for the whole session and a table with the ratios against the best peer.

Requests per second with C concurrent GETs over a keep-alive pool against nginx, and
the client's own CPU per request, for saturn's http::client and three peers: Go's
net/http client, hyper 0.14's client (Debian crates) and libcurl's multi interface.

    scripts/bench_http_client.py [--rounds 3] [--duration-s 5] [--threads 2]
        [--concurrency 64] [--saturn BIN] [--baseline BIN] [--peers DIR]
        [--only saturn,go,...] [--json OUT]

--baseline BIN adds another saturn build (say, one from before a change) as the client
"saturn-base", interleaved with the others like a peer but never counted as one: an A/B
of saturn against itself in the same run.

The server: Debian's nginx, one worker process (it is not what is measured; the
clients are), `return 200 "Hello, World!"` as text/plain, access_log off,
keepalive_requests 100000000, on 127.0.0.1 at a port found free by binding port 0 —
and WITHOUT reuseport, so that nginx fails to start rather than share a port another
process already listens on. It is started once and stopped by its PID (SIGTERM, then
SIGKILL) at the end; before measuring, one request checks the answer comes from nginx
(`Server: nginx`) with the expected body. Around each run nginx's stub_status request
counter is read: a run whose client counted more good answers than nginx served fails.

Each client runs for D seconds per round, the clients interleaved within each round
(saturn, go, hyper, curl, then the next round rotated by one, so none always runs
first). Each program checks every answer (status 200, exact body) and prints one JSON
line (requests, errors, wall_s, ops_per_sec, cpu_user_s, cpu_sys_s, cpu_us_per_req);
a run with an error is reported and not counted. Printed: the median rps and median
client CPU µs/request per client over the rounds, and the ratios against the best
peer (rps: saturn / best peer's rps, CPU: saturn / lowest peer CPU per request).

The machine this was written on has 2 cores which nginx shares with the client: the
client's rps is bounded by what CPU nginx gets, so the CPU per request is the cleaner
figure. `uptime` is recorded before and after.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lib.httpclient import NginxError, served, start_nginx, stop  # noqa: E402


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration-s", type=float, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--saturn", default=os.path.join(ROOT, "build/release/bin/saturn-bench-http_client"))
    ap.add_argument("--peers", default=os.path.join(ROOT, "build/peers/bin"),
                    help="where bench/peers/build.sh put http_client-{go,hyper,curl}")
    ap.add_argument("--baseline", help="another saturn-bench-http_client, run as \"saturn-base\" (A/B)")
    ap.add_argument("--only", default="saturn,go,hyper,curl")
    ap.add_argument("--json", help="append every run's JSON line here")
    a = ap.parse_args()
    bins = {"saturn": a.saturn}
    for p in ("go", "hyper", "curl"):
        bins[p] = os.path.join(a.peers, f"http_client-{p}")
    clients = [c for c in a.only.split(",") if c]
    if a.baseline:
        bins["saturn-base"] = a.baseline
        clients.insert(1 if "saturn" in clients else 0, "saturn-base")
    for c in clients:
        if not os.access(bins[c], os.X_OK):
            raise SystemExit(f"missing {bins[c]} (cmake target saturn-bench-http_client / bench/peers/build.sh)")
    before = uptime()
    print(f"[http-client] load before: {before}", file=sys.stderr)
    try:
        proc, url, prefix = start_nginx()
    except NginxError as e:
        raise SystemExit(f"[http-client] {e}")
    runs = {c: [] for c in clients}
    failed = {c: 0 for c in clients}
    out = open(a.json, "a") if a.json else None
    try:
        for r in range(a.rounds):
            order = clients[r % len(clients):] + clients[:r % len(clients)]
            for c in order:
                cmd = [bins[c], "--url", url, "--concurrency", str(a.concurrency),
                       "--duration-s", str(a.duration_s), "--threads", str(a.threads)]
                n0 = served(url)
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.duration_s + 30)
                except subprocess.TimeoutExpired:
                    failed[c] += 1
                    print(f"[http-client] round {r + 1} {c}: TIMEOUT", file=sys.stderr)
                    continue
                line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
                try:
                    j = json.loads(line)
                except ValueError:
                    j = None
                if p.returncode != 0 or j is None or j.get("errors", 1) != 0 or j.get("requests", 0) == 0:
                    failed[c] += 1
                    print(f"[http-client] round {r + 1} {c}: FAILED rc={p.returncode} {line} {p.stderr[-400:]}",
                          file=sys.stderr)
                    continue
                if proc.poll() is not None:
                    raise SystemExit("nginx died during the run")
                # The server's count must cover the client's: requests it claims but
                # nginx never answered would show here (nginx counts the status
                # request that reads the counter, and requests cut off at the end).
                j["nginx_requests"] = served(url) - n0 - 1
                if j["nginx_requests"] < j["requests"]:
                    failed[c] += 1
                    print(f"[http-client] round {r + 1} {c}: FAILED, client counted {j['requests']} "
                          f"but nginx answered {j['nginx_requests']}", file=sys.stderr)
                    continue
                j["round"] = r + 1
                runs[c].append(j)
                if out:
                    out.write(json.dumps(j) + "\n")
                print(f"[http-client] round {r + 1} {c:11s} {j['ops_per_sec']:>9.0f} rps  "
                      f"{j['cpu_us_per_req']:6.2f} us/req CPU (user {j['cpu_user_s']:.2f} s, sys {j['cpu_sys_s']:.2f} s) "
                      f"nginx answered {j['nginx_requests']}",
                      file=sys.stderr)
    finally:
        stop(proc)
        subprocess.run(["rm", "-rf", prefix])
        if out:
            out.close()
    after = uptime()
    med = {}
    for c in clients:
        if runs[c]:
            med[c] = (statistics.median(x["ops_per_sec"] for x in runs[c]),
                      statistics.median(x["cpu_us_per_req"] for x in runs[c]),
                      statistics.median(x["cpu_user_s"] / max(x["requests"], 1) * 1e6 for x in runs[c]),
                      statistics.median(x["cpu_sys_s"] / max(x["requests"], 1) * 1e6 for x in runs[c]))
    print(f"http-client: {a.concurrency} concurrent GETs, keep-alive, nginx (1 worker) on 127.0.0.1; "
          f"{a.threads} client threads; {a.rounds} rounds x {a.duration_s:g} s, interleaved; medians")
    print(f"{'client':11s} {'rps':>10s} {'CPU us/req':>11s} {'user':>6s} {'sys':>6s} {'runs':>5s}")
    for c in clients:
        if c in med:
            m = med[c]
            print(f"{c:11s} {m[0]:>10.0f} {m[1]:>11.2f} {m[2]:>6.2f} {m[3]:>6.2f} {len(runs[c]):>3d}/{a.rounds}")
        else:
            print(f"{c:11s} {'FAILED':>10s}")
    peers = [c for c in med if c not in ("saturn", "saturn-base")]
    if "saturn" in med and peers:
        best_rps = max(peers, key=lambda c: med[c][0])
        best_cpu = min(peers, key=lambda c: med[c][1])
        r_rps = med["saturn"][0] / med[best_rps][0]
        r_cpu = med["saturn"][1] / med[best_cpu][1]
        print(f"saturn rps / best peer ({best_rps}): {r_rps:.2f}x  (target >= 1.0x: {'met' if r_rps >= 1.0 else 'NOT met'})")
        print(f"saturn CPU/req / best peer ({best_cpu}): {r_cpu:.2f}x  (target <= 0.8x: {'met' if r_cpu <= 0.8 else 'NOT met'})")
    if "saturn" in med and "saturn-base" in med:
        print(f"saturn / saturn-base: rps {med['saturn'][0] / med['saturn-base'][0]:.2f}x, "
              f"CPU/req {med['saturn'][1] / med['saturn-base'][1]:.2f}x")
    print(f"load before: {before}")
    print(f"load after:  {after}")
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
