#!/usr/bin/env bash
# wrk-min-latency-test.sh SATURN_HTTP: checks bench/http/wrk-min-latency against a live
# saturn-http on 127.0.0.1 (1 s of wrk per case).
#   1. a script named report.lua is swapped for report_min.lua: its WRK_JSON line comes
#      through unchanged and gains "min_us", which is at least the /delay/{ms} asked for;
#   2. any other script passes through untouched (no min_us);
#   3. an unreadable report.lua is refused with exit status 2.
# The stand-in report.lua prints the same kind of line as the peers' net/report.lua, so the
# test needs nothing outside this repository.
set -euo pipefail
server=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
wrapper=$here/wrk-min-latency
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$tmp/report.lua" <<'LUA'
done = function(summary, latency, requests)
   io.write(string.format('WRK_JSON "requests":%d,"errors":%d,"non2xx":%d\n', summary.requests,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
      summary.errors.status))
end
LUA
cat > "$tmp/other.lua" <<'LUA'
done = function(summary, latency, requests)
   io.write(string.format('OTHER "requests":%d\n', summary.requests))
end
LUA

# A free port: let the kernel pick one, then start the server on it (retry on a race).
for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$server" --port "$port" --threads 1 > "$tmp/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 50); do
        curl -s -o /dev/null "http://127.0.0.1:$port/plaintext" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && break
    wait "$pid" 2>/dev/null || true
    pid=""
done
[ -n "$pid" ] || fail "saturn-http did not start: $(cat "$tmp/server.log")"

# 1. report.lua is swapped; the fastest of the /delay/20 answers took at least 20 ms.
out=$("$wrapper" -t 1 -c 8 -d 1s --timeout 10s -s "$tmp/report.lua" "http://127.0.0.1:$port/delay/20")
line=$(grep '^WRK_JSON ' <<< "$out") || fail "no WRK_JSON line in: $out"
[[ $line =~ ^WRK_JSON\ \"requests\":([0-9]+),\"errors\":0,\"non2xx\":0,\"min_us\":([0-9.]+)$ ]] \
    || fail "unexpected line: $line"
requests=${BASH_REMATCH[1]} min_us=${BASH_REMATCH[2]}
[ "$requests" -gt 0 ] || fail "no requests answered: $line"
awk -v m="$min_us" 'BEGIN { exit !(m >= 20000 && m < 1000000) }' \
    || fail "min_us $min_us is not a plausible latency of /delay/20"

# 2. Other scripts pass through: their output has no min_us.
out=$("$wrapper" -t 1 -c 2 -d 1s -s "$tmp/other.lua" "http://127.0.0.1:$port/plaintext")
grep -q '^OTHER "requests":[1-9][0-9]*$' <<< "$out" || fail "other.lua's line changed or missing: $out"

# 3. A report.lua that cannot be read is an error, not a silent pass-through.
set +e
"$wrapper" -t 1 -c 1 -d 1s -s "$tmp/missing/report.lua" "http://127.0.0.1:$port/plaintext" \
    > "$tmp/out" 2> "$tmp/err"
status=$?
set -e
[ "$status" = 2 ] || fail "missing report.lua: exit status $status, want 2"
grep -q 'cannot read' "$tmp/err" || fail "missing report.lua: no message, got: $(cat "$tmp/err")"
echo "ok: min_us $min_us over $requests requests of /delay/20"
