#!/usr/bin/env python3
"""A throwaway PostgreSQL cluster for the arena database checks (async-db, crud).

  pg_cluster.py start DIR --watch PID   initdb into DIR/data (as `nobody` when run as
        root: initdb refuses root), a free 127.0.0.1 port, a private Unix socket
        directory DIR/sock, scram-sha-256 for user bench (password bench), database
        benchmark with the HttpArena items table (100,000 rows, the documented schema, no
        index on price). Prints the DATABASE_URL. A detached watchdog stops the server and
        removes DIR once process PID is gone (a test killed by its timeout leaves nothing).
  pg_cluster.py stop DIR        stops the server at once (connections drop)
  pg_cluster.py restart DIR     starts it again (after stop)
  pg_cluster.py freeze|thaw DIR SIGSTOP / SIGCONT every server process (a stalled server)
  pg_cluster.py remove DIR      stops it and removes DIR
  pg_cluster.py psql DIR SQL    runs SQL in database benchmark as the superuser, prints
                                the tuples (unaligned, tuples only)

Exits 77 (skip) when PostgreSQL's binaries are not installed, 1 on any other failure
(with the server's log on stderr). Standard library only.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys

PG_BIN = "/usr/lib/postgresql/15/bin"

# The items table: HttpArena's schema; rows spread over eight categories and prices
# 1-500 (HttpArena's range) so every documented request has answers.
SEED_SQL = """
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
  price INTEGER NOT NULL, quantity INTEGER NOT NULL, active BOOLEAN NOT NULL, tags JSONB NOT NULL,
  rating_score INTEGER NOT NULL, rating_count INTEGER NOT NULL);
INSERT INTO items SELECT i,
  (ARRAY['Alpha','Beta','Gamma','Delta'])[1 + i % 4] || ' Widget ' || i,
  (ARRAY['electronics','tools','books','garden','toys','office','sports','kitchen'])[1 + i % 8],
  1 + (i * 37) % 500, 1 + (i * 13) % 1000, i % 3 <> 0,
  CASE i % 3 WHEN 0 THEN '["fast","new"]'::jsonb WHEN 1 THEN '["sale"]'::jsonb ELSE '["eco","new","hot"]'::jsonb END,
  1 + (i * 7) % 50, 1 + (i * 11) % 500
  FROM generate_series(1, 100000) AS i;
ALTER TABLE items OWNER TO bench;
ANALYZE items;
CHECKPOINT;
SELECT count(*) FROM items;
"""


def as_user():
    return ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []


def run(cmd, **kw):
    return subprocess.run(as_user() + cmd, capture_output=True, text=True, timeout=120, **kw)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pg_ctl(d, *args):
    return run([f"{PG_BIN}/pg_ctl", "-D", f"{d}/data", *args, "-l", f"{d}/log"] if args[0] == "start"
               else [f"{PG_BIN}/pg_ctl", "-D", f"{d}/data", *args])


def fail(d, what):
    sys.stderr.write(f"pg_cluster: {what}\n")
    try:
        with open(f"{d}/log") as f:
            sys.stderr.write(f.read()[-4000:])
    except OSError:
        pass
    return 1


def psql(d, port, sql, user="postgres", db="postgres"):
    return run([f"{PG_BIN}/psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", f"{d}/sock",
                "-p", str(port), "-U", user, "-d", db], input=sql)


def server_pids(d):
    """The postmaster's pid and its children's (empty if it is not running)."""
    try:
        with open(f"{d}/data/postmaster.pid") as f:
            pm = int(f.readline())
    except (OSError, ValueError):
        return []
    kids = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pm)], capture_output=True, text=True, timeout=30)
    return [pm] + [int(x) for x in kids.stdout.split()]


def signal_server(d, sig):
    for pid in server_pids(d):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def start(d, watch):
    if not os.access(f"{PG_BIN}/initdb", os.X_OK):
        sys.stderr.write(f"pg_cluster: no {PG_BIN}/initdb (install postgresql)\n")
        return 77
    os.makedirs(f"{d}/sock", exist_ok=True)
    os.chmod(d, 0o755)
    if os.geteuid() == 0:
        shutil.chown(d, "nobody", "nogroup")
        shutil.chown(f"{d}/sock", "nobody", "nogroup")
    # The watchdog first, so a failure below still leaves nothing behind.
    # SIGCONT first: a check may have stopped the server's processes (SIGSTOP) when it died.
    stop_cmd = (f"pm=$(head -1 {d}/data/postmaster.pid 2>/dev/null) && kill -CONT $pm $(ps -o pid= --ppid $pm)"
                " 2>/dev/null; " + " ".join(as_user() + [f"{PG_BIN}/pg_ctl", "-D", f"{d}/data", "stop", "-m",
                                                          "immediate"]))
    subprocess.Popen(["setsid", "sh", "-c",
                      f"while kill -0 {watch} 2>/dev/null; do sleep 1; done; {stop_cmd} >/dev/null 2>&1; rm -rf {d}"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = run([f"{PG_BIN}/initdb", "-D", f"{d}/data", "-U", "postgres", "-A", "trust", "-E", "UTF8"])
    if r.returncode != 0:
        return fail(d, "initdb failed: " + r.stderr[-2000:])
    port = free_port()
    with open(f"{d}/data/postgresql.conf", "a") as f:
        f.write(f"listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{d}/sock'\n"
                "max_connections = 300\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
    with open(f"{d}/data/pg_hba.conf", "w") as f:
        f.write("local all all trust\nhost all bench 127.0.0.1/32 scram-sha-256\n")
    with open(f"{d}/port", "w") as f:
        f.write(str(port))
    r = pg_ctl(d, "start", "-w", "-t", "60")
    if r.returncode != 0:
        return fail(d, "pg_ctl start failed")
    r = psql(d, port, "SET password_encryption = 'scram-sha-256'; CREATE ROLE bench LOGIN PASSWORD 'bench';"
                      " CREATE DATABASE benchmark OWNER bench;")
    if r.returncode != 0:
        return fail(d, "creating the bench role failed: " + r.stderr)
    r = psql(d, port, SEED_SQL, db="benchmark")
    if r.returncode != 0 or r.stdout.strip() != "100000":
        return fail(d, f"seeding failed: {r.stdout!r} {r.stderr}")
    print(f"postgres://bench:bench@127.0.0.1:{port}/benchmark")
    return 0


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cmd, d = sys.argv[1], os.path.abspath(sys.argv[2])
    if cmd == "start":
        watch = sys.argv[sys.argv.index("--watch") + 1] if "--watch" in sys.argv else str(os.getppid())
        return start(d, watch)
    if cmd in ("freeze", "thaw"):  # SIGSTOP / SIGCONT every server process: a stalled server
        signal_server(d, signal.SIGSTOP if cmd == "freeze" else signal.SIGCONT)
        return 0
    if cmd == "stop":
        return 0 if pg_ctl(d, "stop", "-m", "immediate", "-w").returncode == 0 else fail(d, "stop failed")
    if cmd == "restart":
        return 0 if pg_ctl(d, "start", "-w", "-t", "60").returncode == 0 else fail(d, "start failed")
    if cmd == "psql":
        with open(f"{d}/port") as f:
            port = int(f.read())
        r = psql(d, port, sys.argv[3], db="benchmark")
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        return r.returncode
    if cmd == "remove":
        signal_server(d, signal.SIGCONT)
        pg_ctl(d, "stop", "-m", "immediate", "-w")
        shutil.rmtree(d, ignore_errors=True)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
