#!/usr/bin/env bash
# bench/peers/build.sh OUTDIR [--quick] [suite...]
#
# Builds the peer programs of `make bench` into OUTDIR (the runner uses build/peers):
#   OUTDIR/bin/<suite>-<runtime>   the peers (spawn-tokio, echo-asio, http-nginx, ...)
#   OUTDIR/bin/echo-load           the echo suite's load generator (the runner's own)
#   OUTDIR/bin/tls-load            TLS handshakes/s and bulk MB/s against TLS echo servers
#   OUTDIR/bin/ws-load             the arena suite's WebSocket echo load (echo-ws)
#   OUTDIR/bin/rpc-load            the rpc suite's even-schedule gRPC load (unary_half_load)
#   OUTDIR/share/peers/wrk/*.lua   the http suite's wrk scripts (the runner's own)
#   OUTDIR/build.log               what every language's build printed
#
# It hands the suites asked for (default: all) to the per-language scripts next to it:
# build-rust.sh, build-go.sh, build-native.sh. Each names a missing Debian package in
# its error (`scripts/deps bench` installs every package the peers need). A
# language whose build fails does not stop the others: its peers are simply missing
# and the runner reports them as FAILED. --quick asks for the faster, less optimised
# build the CI smoke check uses (Rust: the `quick` profile; native: fewer passes).
# Only OUTDIR is written; a second run rebuilds only what changed.
#
# Exit status: 0 when every language built, 1 when one failed, 2 on bad usage.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ALL_SUITES=(loop spawn sched ring walk echo http http_client tls arena process forkjoin rpc pg)
usage() { echo "usage: $0 OUTDIR [--quick] [--check] [${ALL_SUITES[*]} observe ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -*) usage ;; esac
outdir=$1
shift
check=0  # --check: only say whether the arguments are good (tests/bench/peer_args_test.py)
quick=()
suites=()
named=0  # suites were named (even if none of them has a peer): build only theirs
for a in "$@"; do
    case "$a" in
        --quick) quick=(--quick) ;;
        --check) check=1 ;;
        loop|spawn|sched|ring|walk|echo|http|http_client|tls|arena|process|forkjoin|rpc|pg) suites+=("$a"); named=1 ;;
        http-client) suites+=(http_client); named=1 ;;  # the runner's name of the suite
        observe) named=1 ;;  # saturn only: no peer to build
        *) echo "build.sh: unknown suite or option: $a" >&2; usage ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || [ $named -eq 1 ] || suites=("${ALL_SUITES[@]}")
[ $check -eq 0 ] || exit 0
mkdir -p "$outdir" || exit 2
out=$(cd "$outdir" && pwd)

log() { echo "[peers] $*" >&2; }
want() { local s; for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
# The suites of $@ that were asked for, space-separated.
pick() { local s r=(); for s in "$@"; do want "$s" && r+=("$s"); done; echo "${r[*]:-}"; }

mkdir -p "$out/bin" "$out/share/peers/wrk" "$out/build"
build_log=$out/build.log
started=$(date +%s)
failed=()
steps=()

# step NAME SCRIPT ARGS...: one language's build, in the background (the three builders
# run at once: each has serial stretches, fat-LTO links and Go's per-program links, that
# leave a CPU idle; together they took 316 s one after another on the 2-CPU VM). Its
# output goes to build-NAME.log, appended to build.log by finish_steps.
step() {
    local name=$1 script=$2
    shift 2
    if [ ! -x "$here/$script" ]; then
        log "$name: skipped, bench/peers/$script does not exist (yet): its peers stay missing"
        failed+=("$name (no $script)")
        return
    fi
    log "$name: $script $* ..."
    rm -f "$out/build-$name.rc"
    (
        t0=$(date +%s)
        { echo "===== $(date -Is) $script $*"; } > "$out/build-$name.log"
        "$here/$script" "$out" "$@" >> "$out/build-$name.log" 2>&1
        rc=$?
        echo "$rc $(( $(date +%s) - t0 ))" > "$out/build-$name.rc"
    ) &
    steps+=("$name")
}

# Wait for the background steps; report each, append its log to build.log.
finish_steps() {
    local name rc secs
    wait
    for name in "${steps[@]}"; do
        cat "$out/build-$name.log" >> "$build_log"
        read -r rc secs < "$out/build-$name.rc" 2>/dev/null || { rc=255; secs=?; }
        if [ "$rc" -eq 0 ]; then
            log "$name: done in $secs s"
        else
            log "$name: FAILED (exit $rc) after $secs s; last lines of $build_log:"
            tail -n 12 "$out/build-$name.log" | sed 's/^/    /' >&2
            failed+=("$name")
        fi
        rm -f "$out/build-$name.log" "$out/build-$name.rc"
    done
}

# The runner's own tools (load generator, wrk scripts): not a peer, built here.
# tool NAME SOURCE NEEDS COMPILER FLAGS...: one of the runner's load generators, rebuilt
# when missing or older than its source or this script; NEEDS names the packages in the
# failure message.
tool() {
    local name=$1 src=$here/load/$2 needs=$3 dst=$out/bin/$1
    shift 3
    [ ! -x "$dst" ] || [ "$src" -nt "$dst" ] || [ "$here/build.sh" -nt "$dst" ] || return 0
    log "tools: $name ($1 -O2)"
    # The source before the flags, so libraries (-lssl) come after it for the linker.
    if "$1" "$src" "${@:2}" -o "$dst.tmp" >> "$build_log" 2>&1; then
        mv "$dst.tmp" "$dst"
    else
        rm -f "$dst.tmp"
        log "tools: $name FAILED (see $build_log; needs $needs)"
        failed+=("$name")
    fi
}

tools() {
    local t0
    t0=$(date +%s)
    local cxx=(g++ -std=c++20 -O2 -DNDEBUG -pthread -Wall -Wextra)
    want echo && tool echo-load echo_load.cpp g++ "${cxx[@]}"
    # tls-load: the TLS measurements (handshakes/s, bulk MB/s) against the echo servers
    # run with TLS (saturn-echo --tls and the peers' TLS modes).
    { want echo || want tls; } && tool tls-load tls_load.cpp "g++ and libssl-dev" "${cxx[@]}" -lssl -lcrypto
    # ws-load: the arena suite's WebSocket echo load (epoll, plain C: no runtime's own code).
    want arena && tool ws-load ws_load.c gcc gcc -std=c11 -O2 -DNDEBUG -pthread -Wall -Wextra
    # rpc-load: the rpc suite's even-schedule unary gRPC load (latency at half load).
    want rpc && tool rpc-load rpc_load.c "gcc and libnghttp2-dev" gcc -std=c11 -O2 -DNDEBUG -Wall -Wextra -lnghttp2
    if want http || want arena; then
        local f
        for f in "$here"/wrk/*.lua; do
            cmp -s "$f" "$out/share/peers/wrk/$(basename "$f")" ||
                install -m 644 "$f" "$out/share/peers/wrk/$(basename "$f")"
        done
    fi
    log "tools: done in $(( $(date +%s) - t0 )) s"
}

log "building peers for ${suites[*]}${quick:+ (quick)} into $out"
tools
rust=$(pick spawn sched walk echo http http_client arena process forkjoin pg)
go=$(pick spawn sched ring walk echo http http_client tls arena forkjoin rpc)
native=$(pick loop spawn sched ring echo http http_client tls arena forkjoin rpc pg)
# shellcheck disable=SC2086  # the suite lists are meant to split into words
{
    [ -z "$native" ] || step native build-native.sh "${quick[@]}" $native
    [ -z "$go" ] || step go build-go.sh $go
    [ -z "$rust" ] || step rust build-rust.sh "${quick[@]}" $rust
    finish_steps
}
elapsed=$(( $(date +%s) - started ))
if [ ${#failed[@]} -gt 0 ]; then
    log "done in ${elapsed} s; FAILED: ${failed[*]} (log: $build_log)"
    exit 1
fi
log "done in ${elapsed} s: $out/bin"
