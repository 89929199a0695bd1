#!/usr/bin/env bash
# Builds the Go peers of `make bench` (bench/peers/README.md) into OUTDIR/bin.
#
#   bench/peers/build-go.sh OUTDIR [suite...]
#       suites: spawn sched ring walk echo http http_client tls arena forkjoin rpc (default: all of them)
#
# One module (bench/peers/go.mod, `saturnpeers`), Debian's Go (golang-go), standard
# library only except arena-go, whose gorilla/websocket, andybalholm/brotli and pgx v4
# come from Debian's source packages (built in GOPATH mode against /usr/share/gocode, see
# below). Offline: GOPROXY=off, GOFLAGS=-mod=mod, CGO_ENABLED=0; the build and
# module caches are OUTDIR/build/go-cache and OUTDIR/build/gopath, so nothing is
# written outside OUTDIR. `go build -trimpath`, default optimisation: how Go programs
# ship. A second run rebuilds nothing that did not change. Prints "built PATH" lines.
#
# rpc-go (bench/peers/rpc/go) is built apart, in GOPATH mode (GO111MODULE=off) against
# Debian's Go sources in /usr/share/gocode — golang-google-grpc-dev 1.33 and what it
# imports (golang-google-protobuf-dev, golang-github-golang-protobuf-1-5-dev,
# golang-google-genproto-dev, golang-golang-x-net-dev, ...) — the way Debian builds
# them: grpc's go.mod names modules Debian does not ship, so module mode cannot resolve
# it offline. Its source tree is linked into OUTDIR/build/rpc-gopath/src/rpcpeer.
set -euo pipefail

usage() { echo "usage: $0 OUTDIR [spawn|sched|ring|walk|echo|http|http_client|tls|arena|forkjoin|rpc ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
suites=()
for a in "$@"; do
    case "$a" in
        spawn | sched | ring | walk | echo | http | http_client | tls | arena | forkjoin | rpc) suites+=("$a") ;;
        --quick) ;; # Go has one build; accepted so the dispatcher can pass it on
        *) echo "build-go.sh: unknown suite: $a" >&2; usage ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || suites=(spawn sched ring walk echo http http_client tls arena forkjoin rpc)
log() { echo "[build-go.sh] $*" >&2; }
started=$(date +%s)

go=$(command -v go || true)
[ -n "$go" ] || { [ -x /usr/lib/go/bin/go ] && go=/usr/lib/go/bin/go; }
if [ -z "$go" ]; then
    echo "build-go.sh: missing Debian package: golang-go" >&2
    echo "  install it with: apt-get install --no-install-recommends golang-go" >&2
    echo "  (or scripts/deps bench, which installs everything make bench needs)" >&2
    exit 1
fi

# go.mod's replace directories: without them no package of the module builds.
for p in golang-github-gorilla-websocket-dev:github.com/gorilla/websocket \
         golang-github-andybalholm-brotli-dev:github.com/andybalholm/brotli \
         golang-golang-x-net-dev:golang.org/x/net golang-golang-x-sys-dev:golang.org/x/sys \
         golang-golang-x-text-dev:golang.org/x/text; do
    if [ ! -f "/usr/share/gocode/src/${p#*:}/go.mod" ]; then
        echo "build-go.sh: missing Debian package: ${p%%:*} (arena-go's ${p#*:})" >&2
        echo "  install it with: apt-get install --no-install-recommends ${p%%:*}" >&2
        echo "  (or scripts/deps bench, which installs everything make bench needs)" >&2
        exit 1
    fi
done

mkdir -p "$out/bin" "$out/build/go-cache" "$out/build/gopath"
export GOCACHE="$out/build/go-cache" GOPATH="$out/build/gopath" GOMODCACHE="$out/build/gopath/pkg/mod" \
    GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off
for s in "${suites[@]}"; do
    if [ "$s" = rpc ]; then
        for p in golang-google-grpc-dev:google.golang.org/grpc \
                 golang-google-protobuf-dev:google.golang.org/protobuf \
                 golang-github-golang-protobuf-1-5-dev:github.com/golang/protobuf/ptypes; do
            if [ ! -d "/usr/share/gocode/src/${p#*:}" ]; then
                echo "build-go.sh: missing Debian package: ${p%%:*} (rpc-go's ${p#*:})" >&2
                echo "  install it with: apt-get install --no-install-recommends ${p%%:*}" >&2
                exit 1
            fi
        done
        # golang-github-golang-protobuf-1-3-dev (which 1-5 replaces) has the same path but
        # cannot marshal protoc-gen-go 1.28's messages: grpc panics on the first call.
        if [ ! -f /usr/share/gocode/src/github.com/golang/protobuf/proto/wrappers.go ]; then
            echo "build-go.sh: rpc-go needs golang-github-golang-protobuf-1-5-dev, not 1-3" >&2
            exit 1
        fi
        mkdir -p "$out/build/rpc-gopath/src"
        ln -sfn "$here/rpc/go" "$out/build/rpc-gopath/src/rpcpeer"
        log "go build rpcpeer (GOPATH mode)"
        (cd "$out/build/rpc-gopath/src/rpcpeer" &&
            GO111MODULE=off GOPATH="$out/build/rpc-gopath:/usr/share/gocode" GOFLAGS= \
                "$go" build -trimpath -o "$out/bin/rpc-go" .)
        echo "built $out/bin/rpc-go"
        continue
    fi
    if [ "$s" = arena ]; then
        # arena-go's async-db and crud use pgx v4 (golang-github-jackc-pgx-v4-dev), whose
        # go.mod names modules Debian does not ship: GOPATH mode as for rpc-go, against
        # Debian's Go sources (its other libraries come from the same directories the
        # go.mod replaces point at).
        if [ ! -d /usr/share/gocode/src/github.com/jackc/pgx/v4/pgxpool ]; then
            echo "build-go.sh: missing Debian package: golang-github-jackc-pgx-v4-dev (arena-go's pgxpool)" >&2
            echo "  install it with: apt-get install --no-install-recommends golang-github-jackc-pgx-v4-dev" >&2
            exit 1
        fi
        mkdir -p "$out/build/arena-gopath/src"
        ln -sfn "$here/arena/go" "$out/build/arena-gopath/src/arenapeer"
        log "go build arenapeer (GOPATH mode)"
        (cd "$out/build/arena-gopath/src/arenapeer" &&
            GO111MODULE=off GOPATH="$out/build/arena-gopath:/usr/share/gocode" GOFLAGS= \
                "$go" build -trimpath -o "$out/bin/arena-go" .)
        echo "built $out/bin/arena-go"
        continue
    fi
    log "go build ./$s/go"
    (cd "$here" && "$go" build -trimpath -o "$out/bin/$s-go" "./$s/go")
    echo "built $out/bin/$s-go"
done
log "done in $(($(date +%s) - started)) s"
