#!/usr/bin/env bash
# run_validate.sh BIN [PYTHON [CLIENT [ARGS...]]] — end-to-end HttpArena check of saturn-arena.
# Generates a data dir, starts BIN on 127.0.0.1 and a free port, waits for it to answer,
# runs CLIENT (default validate.py, from this folder) with --host --port --data and ARGS
# (and the server's PID in ARENA_SERVER_PID),
# then stops the server with SIGTERM and requires exit status 0 within 5 s.
# ARENA_NOFILE=N raises the descriptor limit (soft and hard) of server and client to N
# first, which needs root when N is above the hard limit (else the client decides: it
# skips what it cannot do within the limit).
# ARENA_NO_THP=1 starts the server with transparent huge pages off for it
# (prctl PR_SET_THP_DISABLE, inherited across exec): where THP is "always", RSS moves in
# 2 MiB steps as heaps grow, which says nothing about memory per connection or upload.
# ARENA_TLS=1 also serves HTTPS: a test CA and an RSA-2048 server certificate for
# localhost / 127.0.0.1 (HttpArena's kind) are made with openssl in the temp dir, the
# server gets --tls-port/--tls-cert/--tls-key, and the client ARENA_TLS_PORT and
# ARENA_CERTS (the folder with ca.pem, server.crt, server.key). Otherwise --tls-port 0.
# ARENA_H2=1 also serves HTTP/2: h2 over TLS on a free --h2-port (needs ARENA_TLS=1) and
# cleartext h2c only on a free --h2c-port, passed as ARENA_H2_PORT and ARENA_H2C_PORT.
# Otherwise both are 0 (none).
# ARENA_PG=1 also starts a throwaway PostgreSQL cluster (pg_cluster.py: the HttpArena items
# table, its own port and socket folder, run as nobody when root) before the server, which
# gets its URL as DATABASE_URL; the client gets the cluster's folder as ARENA_PG_DIR (to
# stop and restart it). The cluster is removed at the end, and by its watchdog if this
# script is killed. No cluster (PostgreSQL not installed): exit 77 (skip). Without
# ARENA_PG the server runs with no DATABASE_URL.
# ARENA_SERVER_ARGS: more arguments for the server (split on spaces).
# Exits with the client's status (or 1 if the server failed to start, died, or did not stop).
set -uo pipefail
bin=${1:?usage: run_validate.sh BIN [PYTHON [CLIENT [ARGS...]]]}
py=${2:-python3}
client=${3:-validate.py}
shift $(( $# >= 3 ? 3 : $# ))
export PYTHONDONTWRITEBYTECODE=1  # keep __pycache__ out of the source tree
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$bin" ] || { echo "run_validate: $bin is not an executable (build saturn-arena first)" >&2; exit 1; }
command -v curl >/dev/null || { echo "run_validate: curl is required" >&2; exit 1; }
if [ -n "${ARENA_NOFILE:-}" ] && [ "$(ulimit -n)" -lt "$ARENA_NOFILE" ]; then
  ulimit -n "$ARENA_NOFILE" 2>/dev/null || echo "run_validate: cannot raise the descriptor limit to $ARENA_NOFILE (not root?)" >&2
fi

tmp=$(mktemp -d)
pid=
pgdir=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  [ -n "$pgdir" ] && "$py" "$here/pg_cluster.py" remove "$pgdir"
  rm -rf "$tmp"
}
trap cleanup EXIT

unset DATABASE_URL
if [ "${ARENA_PG:-0}" = 1 ]; then
  # Its own folder under /tmp (not under $tmp: the server runs as nobody and must reach it).
  pgdir=$(mktemp -d /tmp/saturn-arena-pg-XXXXXX)
  DATABASE_URL=$("$py" "$here/pg_cluster.py" start "$pgdir" --watch $$)
  rc=$?
  if [ $rc = 77 ]; then echo "SKIP run_validate: PostgreSQL is not installed"; exit 77; fi
  [ $rc = 0 ] || { echo "run_validate: the PostgreSQL cluster did not start" >&2; exit 1; }
  export DATABASE_URL ARENA_PG_DIR=$pgdir
fi

"$py" "$here/gen_data.py" "$tmp/data" || { echo "run_validate: gen_data.py failed" >&2; exit 1; }
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

tls_args=(--tls-port 0 --h2-port 0)
h2c_args=(--h2c-port 0)
if [ "${ARENA_H2:-0}" = 1 ]; then
  h2c_port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  h2c_args=(--h2c-port "$h2c_port")
  export ARENA_H2C_PORT=$h2c_port
fi
if [ "${ARENA_TLS:-0}" = 1 ]; then
  command -v openssl >/dev/null || { echo "run_validate: openssl is required for ARENA_TLS" >&2; exit 1; }
  certs=$tmp/certs
  mkdir -p "$certs"
  if ! { openssl req -x509 -newkey rsa:2048 -nodes -keyout "$certs/ca.key" -out "$certs/ca.pem" -days 2 \
           -subj "/CN=saturn test CA" &&
         openssl req -newkey rsa:2048 -nodes -keyout "$certs/server.key" -out "$certs/server.csr" \
           -subj "/CN=localhost" &&
         openssl x509 -req -in "$certs/server.csr" -CA "$certs/ca.pem" -CAkey "$certs/ca.key" \
           -CAcreateserial -out "$certs/server.crt" -days 2 \
           -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'); } \
       >"$tmp/openssl.out" 2>&1; then
    echo "run_validate: making the test certificates failed:" >&2; cat "$tmp/openssl.out" >&2; exit 1
  fi
  tls_port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  h2_port=0
  if [ "${ARENA_H2:-0}" = 1 ]; then
    h2_port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    export ARENA_H2_PORT=$h2_port
  fi
  tls_args=(--tls-port "$tls_port" --h2-port "$h2_port" --tls-cert "$certs/server.crt" --tls-key "$certs/server.key")
  export ARENA_TLS_PORT=$tls_port ARENA_CERTS=$certs
fi

launch=()
if [ "${ARENA_NO_THP:-0}" = 1 ]; then
  launch=("$py" -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0) != 0:  # PR_SET_THP_DISABLE
    sys.exit("run_validate: prctl(PR_SET_THP_DISABLE) failed")
os.execv(sys.argv[1], sys.argv[1:])')
fi
"${launch[@]}" "$bin" --bind 127.0.0.1 --port "$port" "${tls_args[@]}" "${h2c_args[@]}" --data "$tmp/data" --threads 2 \
  ${ARENA_SERVER_ARGS:-} >"$tmp/server.out" 2>&1 &
pid=$!
ready=0
for _ in $(seq 1 100); do
  if curl -s --max-time 1 -o /dev/null "http://127.0.0.1:$port/baseline11?a=1&b=1"; then ready=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ $ready != 1 ]; then
  echo "run_validate: saturn-arena did not answer on port $port within 10 s; its output:" >&2
  cat "$tmp/server.out" >&2
  exit 1
fi

ARENA_SERVER_PID=$pid "$py" "$here/$client" --host 127.0.0.1 --port "$port" --data "$tmp/data" "$@"
status=$?

if ! kill -0 "$pid" 2>/dev/null; then
  echo "FAIL server: saturn-arena died during validation; its output:" >&2
  cat "$tmp/server.out" >&2
  pid=
  exit 1
fi
kill -TERM "$pid"
stopped=0
for _ in $(seq 1 50); do
  kill -0 "$pid" 2>/dev/null || { stopped=1; break; }
  sleep 0.1
done
if [ $stopped != 1 ]; then
  echo "FAIL shutdown: saturn-arena still running 5 s after SIGTERM" >&2
  exit 1
fi
wait "$pid"
rc=$?
pid=
if [ $rc != 0 ]; then
  echo "FAIL shutdown: saturn-arena exited with status $rc after SIGTERM; its output:" >&2
  cat "$tmp/server.out" >&2
  exit 1
fi
echo "PASS shutdown: SIGTERM -> exit 0"
# Sanitizer builds report some errors (UBSan by default) without changing the exit status.
if grep -qE 'runtime error:|Sanitizer' "$tmp/server.out"; then
  echo "FAIL sanitizer: saturn-arena reported errors; its output:" >&2
  cat "$tmp/server.out" >&2
  exit 1
fi
exit $status
