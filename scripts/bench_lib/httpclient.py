"""The `http-client` suite's server and runs (issue #32 item 5).

The clients are measured, not the server: Debian's nginx with one worker process,
`return 200 "Hello, World!"` as text/plain on /plaintext, access_log off,
keepalive_requests 100000000, stub_status on /nginx_status, on 127.0.0.1 at a port
found free by binding port 0 — without reuseport, so that nginx fails to start rather
than share a port another process already listens on. A fresh nginx per run, stopped by
its PID (SIGTERM, then SIGKILL). Before the client runs, one request checks the answer
comes from nginx (`Server: nginx`) with the expected body; around the run nginx's
request counter is read, and a run whose client counted more good answers than nginx
served fails (the `nginx_requests` field).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

BODY = "Hello, World!"
CONCURRENCY = 64
SCENARIO = f"get_keepalive_{CONCURRENCY}"

NGINX_CONF = """\
worker_processes 1;
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    server_tokens off;
    tcp_nodelay on;
    keepalive_timeout 65s;
    keepalive_requests 100000000;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location = /plaintext {{
            default_type text/plain;
            return 200 "{body}";
        }}
        location = /nginx_status {{ stub_status; }}
        location / {{ return 404; }}
    }}
}}
"""


class NginxError(RuntimeError):
    pass


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_nginx(log=None):
    """(process, url of /plaintext, prefix directory); NginxError when it will not start."""
    nginx = os.environ.get("NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
    prefix = tempfile.mkdtemp(prefix="hc-nginx.")
    why = ""
    for _ in range(5):
        port = free_port()
        with open(os.path.join(prefix, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(prefix=prefix, port=port, body=BODY))
        proc = subprocess.Popen([nginx, "-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", "stderr"],
                                stdout=subprocess.DEVNULL, stderr=log or subprocess.DEVNULL,
                                start_new_session=True)
        url = f"http://127.0.0.1:{port}/plaintext"
        for _ in range(50):
            if proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    server = r.headers.get("Server", "")
                    body = r.read().decode()
            except OSError:
                time.sleep(0.1)
                continue
            if server != "nginx" or body != BODY:
                stop(proc)
                shutil.rmtree(prefix, ignore_errors=True)
                raise NginxError(f"port {port}: answer from {server!r} with body {body!r}, not our nginx")
            return proc, url, prefix
        stop(proc)
        why = f"nginx did not start on port {port} (exit {proc.returncode})"
    shutil.rmtree(prefix, ignore_errors=True)
    raise NginxError(why or "nginx would not start")


def served(url: str) -> int:
    """nginx's own count of requests handled so far (stub_status; this request included)."""
    with urllib.request.urlopen(url.replace("/plaintext", "/nginx_status"), timeout=5) as r:
        lines = r.read().decode().splitlines()
    return int(lines[2].split()[2])


def stop(proc) -> None:
    """SIGTERM to our nginx master (by its PID), SIGKILL after 5 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client_argv(binary: str, url: str, duration: float, threads: int) -> list:
    return [str(binary), "--url", url, "--concurrency", str(CONCURRENCY), "--duration-s", f"{duration:g}",
            "--threads", str(threads)]


def cross_check(rec: dict, before: int, after: int) -> str:
    """nginx_requests into rec; a reason when the client claims more than nginx served."""
    rec["nginx_requests"] = after - before - 1  # the status request that read `after`
    if rec.get("requests", 0) > rec["nginx_requests"]:
        return f"client counted {rec.get('requests')} answers, nginx served {rec['nginx_requests']}"
    return ""


def run_step(step, run, log_path):
    """The bench_lib step of kind "http-client": a fresh nginx, one client run, checked
    records (see execute.records_from_output)."""
    from .common import run_process, wait_quiet
    from .execute import failed_record, records_from_output

    wait_quiet(run.quiet_wait)
    with open(log_path, "a") as logf:
        try:
            proc, url, prefix = start_nginx(logf)
        except NginxError as e:
            return [failed_record(step, SCENARIO, str(e))]
    try:
        before = served(url)
        argv = client_argv(step.argv[0], url, run.params.duration, step.threads)
        res = run_process(argv, timeout=step.timeout, log_path=log_path,
                          header=f"{step.suite} {step.runtime} {step.job} round {step.round}")
        after = served(url)
        alive = proc.poll() is None
    finally:
        stop(proc)
        shutil.rmtree(prefix, ignore_errors=True)
    records, _ = records_from_output(step, res.returncode, res.error, res.stdout, res.other_cpu_pct)
    for rec in records:
        if rec.get("failed"):
            continue
        reason = cross_check(rec, before, after) or ("" if alive else "nginx died during the run")
        if reason:
            rec.update(failed=True, reason=reason)
    return records
