#!/usr/bin/env bash
# build-native.sh OUTDIR [--quick] [suite...]
#
# Builds the native peer programs of bench/peers (C, C++, Erlang, and the Node and
# nginx wrappers) for the given suites (default: all of them) into
#   OUTDIR/bin/          loop-liburing spawn-tbb sched-tbb ring-erlang echo-asio
#                        echo-libuv http-asio http-node http-nginx http_client-curl
#                        tls-beast tls-node tls-nginx
#   OUTDIR/share/peers/  ring-erlang/ring_bench.beam, http-node/server.js
#   OUTDIR/build/native/ compiler flags of each program (to notice a change)
# and prints one "built PATH" line per program it (re)built.
#
# Suites: loop spawn sched ring echo http http_client tls arena rpc pg; walk is accepted and has
# no native peer. pg: the Node (node-postgres from npm, `npm ci` from the committed
# package-lock.json) and Python (Debian's python3-asyncpg) drivers' launchers. rpc: rpc-grpcpp (libgrpc++'s async server, code from protoc + grpc_cpp_plugin).
# Release flags: g++/gcc -O2 -DNDEBUG (C++20, C++17 for the Asio programs: Debian 12's
# Boost 1.74 Asio does not compile as C++20 with GCC 12), no -march=native. --quick
# (the CI smoke build) uses -O1 instead: the programs are the same, only slower.
# JOBS=N compiles N programs at a time (default 2). CXX / CC override the compilers.
#
# Installs nothing: a missing Debian package is named in the error (scripts/deps
# bench installs them). Writes only under OUTDIR. Idempotent: a program is rebuilt
# only when its output is missing, older than its sources or this script, or was
# built with other flags.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { echo "usage: $0 OUTDIR [--quick] [loop|spawn|sched|ring|walk|echo|http|http_client|tls|arena|forkjoin|rpc|pg ...]" >&2; exit 2; }
log() { echo "build-native.sh: $*" >&2; }
[ $# -ge 1 ] || usage
case "$1" in -*) usage ;; esac
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
quick=0
suites=()
for a in "$@"; do
    case "$a" in
        --quick) quick=1 ;;
        loop | spawn | sched | ring | walk | echo | http | http_client | tls | arena | forkjoin | rpc | pg) suites+=("$a") ;;
        *) log "unknown suite or flag: $a"; usage ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || suites=(loop spawn sched ring echo http http_client tls arena forkjoin rpc pg)
want() { local s; for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
started=$(date +%s)

# ------------------------------------------------------------------ what is needed
# Debian packages of the chosen suites; a tool is looked up on PATH (it may come from
# elsewhere), a library by its -dev package.
need_pkgs=()
need_tool() { command -v "$1" > /dev/null 2>&1 || need_pkgs+=("$2"); }
need_lib() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null || true)" = installed ] || need_pkgs+=("$1")
}
CXX=${CXX:-g++}
CC=${CC:-gcc}
if want loop || want spawn || want sched || want echo || want http || want forkjoin; then need_tool "$CXX" g++; fi
want loop && need_lib liburing-dev
{ want spawn || want sched || want forkjoin; } && need_lib libtbb-dev
want ring && { need_tool erlc erlang-base; need_tool erl erlang-base; }
want echo && { need_lib libboost-dev; need_lib libuv1-dev; need_tool "$CC" gcc; }
want http && { need_lib libboost-dev; need_tool node nodejs; need_tool nginx nginx; }
want http_client && { need_tool "$CC" gcc; need_lib libcurl4-openssl-dev; need_tool nginx nginx; }
want tls && { need_tool node nodejs; need_tool nginx nginx; need_tool "$CXX" g++; need_lib libboost-dev; need_lib libssl-dev; }
want rpc && { need_tool "$CXX" g++; need_tool protoc protobuf-compiler; need_tool grpc_cpp_plugin protobuf-compiler-grpc; need_tool pkg-config pkg-config; need_lib libgrpc++-dev; need_lib libprotobuf-dev; }
if [ ${#need_pkgs[@]} -gt 0 ]; then
    missing=$(printf '%s\n' "${need_pkgs[@]}" | sort -u | tr '\n' ' ')
    log "missing Debian package(s): ${missing% } (apt-get install ${missing% }; scripts/deps bench installs them)"
    exit 1
fi
# nginx lives in /usr/sbin, which a non-root PATH may lack.
PATH=$PATH:/usr/sbin

bin=$out/bin
share=$out/share/peers
stamps=$out/build/native
mkdir -p "$bin" "$share" "$stamps"

opt=-O2
[ $quick = 1 ] && opt=-O1
common=(-DNDEBUG -pthread -Wall -Wextra -I"$here/common/cxx")
headers=("$here"/common/cxx/*.hpp)  # shared by every C++ peer: any change rebuilds them

# stale NAME FLAGS DEPS...: true when bin/NAME must be (re)built.
stale() {
    local name=$1 flags=$2 dep
    shift 2
    [ -e "$bin/$name" ] || return 0
    [ "$(cat "$stamps/$name.flags" 2> /dev/null)" = "$flags" ] || return 0
    for dep in "$@" "$here/build-native.sh"; do [ "$dep" -nt "$bin/$name" ] && return 0; done
    return 1
}

# Compiles run as background jobs, at most JOBS at a time; failures are counted.
jobs_max=${JOBS:-2}
failed=0
running=0
reap_one() {
    if wait -n; then :; else failed=$((failed + 1)); fi
    running=$((running - 1))
}
# compile NAME DRIVER SOURCE FLAGS... -- LIBS...
compile() {
    local name=$1 driver=$2 src=$3 flags=() libs=() seen=0
    shift 3
    for a in "$@"; do
        if [ "$a" = -- ]; then seen=1; elif [ $seen = 0 ]; then flags+=("$a"); else libs+=("$a"); fi
    done
    local key="$driver ${flags[*]} ${libs[*]}"
    stale "$name" "$key" "$src" "${headers[@]}" || return 0
    [ "$running" -lt "$jobs_max" ] || reap_one
    running=$((running + 1))
    (
        log "$name: $driver ${flags[*]} $(basename "$src")"
        if "$driver" "${flags[@]}" "$src" -o "$bin/$name.tmp" "${libs[@]}"; then
            mv "$bin/$name.tmp" "$bin/$name"
            echo "$key" > "$stamps/$name.flags"
            echo "built $bin/$name"
        else
            rm -f "$bin/$name.tmp"
            log "$name: compile failed"
            exit 1
        fi
    ) &
}

want loop && compile loop-liburing "$CXX" "$here/loop/liburing/loop_liburing.cpp" \
    -std=c++20 "$opt" "${common[@]}" -- -luring
want spawn && compile spawn-tbb "$CXX" "$here/spawn/tbb/spawn_tbb.cpp" \
    -std=c++20 "$opt" "${common[@]}" -- -ltbb
want sched && compile sched-tbb "$CXX" "$here/sched/tbb/sched_tbb.cpp" \
    -std=c++20 "$opt" "${common[@]}" -- -ltbb
# forkjoin-tbb runs the same leaf code as saturn's side (common/cxx/forkjoin_work.hpp),
# so it gets saturn's release level, -O3, or the comparison would be of the compilers.
fj_opt=-O3
[ $quick = 1 ] && fj_opt=-O1
want forkjoin && compile forkjoin-tbb "$CXX" "$here/forkjoin/tbb/forkjoin_tbb.cpp" \
    -std=c++20 "$fj_opt" "${common[@]}" -- -ltbb
want echo && compile echo-asio "$CXX" "$here/echo/asio/echo_asio.cpp" \
    -std=c++17 "$opt" "${common[@]}" --
want echo && compile echo-libuv "$CC" "$here/echo/libuv/echo_libuv.c" \
    -std=c11 "$opt" -DNDEBUG -pthread -Wall -Wextra -- -luv
want http && compile http-asio "$CXX" "$here/http/asio/http_asio.cpp" \
    -std=c++17 "$opt" "${common[@]}" --
# tls-beast: Beast's ssl_stream over Asio's ssl (OpenSSL 3), one io_context per thread.
want tls && compile tls-beast "$CXX" "$here/tls/beast/tls_beast.cpp" \
    -std=c++17 "$opt" "${common[@]}" -- -lssl -lcrypto
want http_client && compile http_client-curl "$CC" "$here/http_client/curl/http_client_curl.c" \
    -std=c11 "$opt" -DNDEBUG -pthread -Wall -Wextra -- -lcurl
# rpc-grpcpp: benchmark.proto (saturn-arena's, HttpArena's) through protoc and
# grpc_cpp_plugin into OUTDIR/build/native/rpc-proto, compiled with the program.
if want rpc; then
    proto=$here/../../apps/saturn-arena/benchmark.proto
    gen=$stamps/rpc-proto
    mkdir -p "$gen"
    if [ ! -e "$gen/benchmark.grpc.pb.cc" ] || [ "$proto" -nt "$gen/benchmark.grpc.pb.cc" ]; then
        protoc -I "$(dirname "$proto")" --cpp_out="$gen" --grpc_out="$gen" \
            --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" "$proto" || failed=$((failed + 1))
    fi
    # One translation unit: the program includes the generated sources.
    cat > "$gen/rpc_grpcpp_all.cpp.tmp" << EOT
#include "$here/rpc/grpcpp/rpc_grpcpp.cpp"
#include "$gen/benchmark.pb.cc"
#include "$gen/benchmark.grpc.pb.cc"
EOT
    cmp -s "$gen/rpc_grpcpp_all.cpp.tmp" "$gen/rpc_grpcpp_all.cpp" || mv "$gen/rpc_grpcpp_all.cpp.tmp" "$gen/rpc_grpcpp_all.cpp"
    rm -f "$gen/rpc_grpcpp_all.cpp.tmp"
    # compile() looks at the wrapper's date: a newer included source forces the rebuild.
    for dep in "$here/rpc/grpcpp/rpc_grpcpp.cpp" "$gen/benchmark.grpc.pb.cc"; do
        [ "$dep" -nt "$bin/rpc-grpcpp" ] && rm -f "$stamps/rpc-grpcpp.flags"
    done
    # shellcheck disable=SC2046  # pkg-config's flags are words
    compile rpc-grpcpp "$CXX" "$gen/rpc_grpcpp_all.cpp" -std=c++17 "$opt" -DNDEBUG -pthread -I"$gen" \
        $(pkg-config --cflags grpc++ protobuf) -- $(pkg-config --libs grpc++ protobuf)
fi
while [ "$running" -gt 0 ]; do reap_one; done

# install_file MODE SRC DST: copies only when different (keeps the timestamp stable).
install_file() {
    if ! cmp -s "$2" "$3" 2> /dev/null; then
        mkdir -p "$(dirname "$3")"
        install -m "$1" "$2" "$3"
        echo "built $3"
    fi
}

# The launchers' shared functions (nginx and h2o peers source them).
if want http || want tls || want arena; then
    install_file 644 "$here/common/sh/peer_launch.sh" "$share/lib/peer_launch.sh"
fi
if want ring; then
    beam=$share/ring-erlang/ring_bench.beam
    src=$here/ring/erlang/ring_bench.erl
    if [ ! -e "$beam" ] || [ "$src" -nt "$beam" ]; then
        mkdir -p "$share/ring-erlang"
        log "ring-erlang: erlc $(basename "$src")"
        if erlc -o "$share/ring-erlang" "$src"; then echo "built $beam"; else failed=$((failed + 1)); fi
    fi
    install_file 755 "$here/ring/erlang/ring-erlang.sh" "$bin/ring-erlang"
fi
if want http; then
    if node --check "$here/http/node/server.js"; then
        install_file 644 "$here/http/node/server.js" "$share/http-node/server.js"
        install_file 755 "$here/http/node/http-node.sh" "$bin/http-node"
    else
        log "http-node: server.js does not parse with $(node --version)"
        failed=$((failed + 1))
    fi
    install_file 755 "$here/http/nginx/http-nginx.sh" "$bin/http-nginx"
fi
if want tls; then
    install_file 755 "$here/tls/nginx/tls-nginx.sh" "$bin/tls-nginx"
    if node --check "$here/tls/node/server.js"; then
        install_file 644 "$here/tls/node/server.js" "$share/tls-node/server.js"
        install_file 755 "$here/tls/node/tls-node.sh" "$bin/tls-node"
    else
        log "tls-node: server.js does not parse with $(node --version)"
        failed=$((failed + 1))
    fi
fi

# ---- arena: Boost.Beast (bench/peers/arena/beast) ----
want arena && { need_tool "$CXX" g++; need_lib libboost-dev; need_lib libssl-dev; need_lib zlib1g-dev; need_lib libbrotli-dev; need_lib nlohmann-json3-dev; }
if [ ${#need_pkgs[@]} -gt 0 ]; then
    missing=$(printf '%s\n' "${need_pkgs[@]}" | sort -u | tr '\n' ' ')
    log "missing Debian package(s): ${missing% } (apt-get install ${missing% })"
    exit 1
fi
want arena && compile arena-beast "$CXX" "$here/arena/beast/arena_beast.cpp" \
    -std=c++17 "$opt" "${common[@]}" -- -lssl -lcrypto -lz -lbrotlienc
while [ "$running" -gt 0 ]; do reap_one; done
# ---- end arena: Boost.Beast ----
# ---- arena: Node (bench/peers/arena/node) ----
if want arena; then
    # Debian's nodejs, and node-ws for the ws package (require('ws') from /usr/share/nodejs).
    if ! command -v node > /dev/null 2>&1; then
        log "arena-node: missing Debian package(s): nodejs node-ws (apt-get install nodejs node-ws)"
        failed=$((failed + 1))
    elif ! NODE_PATH=/usr/share/nodejs node -e "require('ws')" > /dev/null 2>&1; then
        log "arena-node: missing Debian package: node-ws (apt-get install node-ws)"
        failed=$((failed + 1))
    elif node --check "$here/arena/node/server.js"; then
        install_file 644 "$here/arena/node/server.js" "$share/arena-node/server.js"
        install_file 755 "$here/arena/node/arena-node.sh" "$bin/arena-node"
    else
        log "arena-node: server.js does not parse with $(node --version)"
        failed=$((failed + 1))
    fi
fi
# ---- end arena: Node ----
# ---- arena: nginx and h2o (bench/peers/arena/nginx, bench/peers/arena/h2o) ----
# Launcher scripts only; the servers are Debian's nginx (+ libnginx-mod-http-brotli-static)
# and h2o packages, checked here since the list of needed packages above is shared.
if want arena; then
    if command -v nginx > /dev/null 2>&1 && [ -r /usr/lib/nginx/modules/ngx_http_brotli_static_module.so ]; then
        install_file 755 "$here/arena/nginx/arena-nginx.sh" "$bin/arena-nginx"
    else
        log "arena-nginx: missing Debian package(s) nginx / libnginx-mod-http-brotli-static"
        failed=$((failed + 1))
    fi
    if command -v h2o > /dev/null 2>&1; then
        install_file 755 "$here/arena/h2o/arena-h2o.sh" "$bin/arena-h2o"
    else
        log "arena-h2o: missing Debian package h2o"
        failed=$((failed + 1))
    fi
fi
# ---- end arena: nginx and h2o ----
# ---- pg: Node and asyncpg (bench/peers/pg/node, bench/peers/pg/asyncpg) ----
if want pg; then
    # node-postgres from npm at the version package-lock.json pins (Debian's node-pg needs
    # Debian's nodejs); reinstalled only when the lock changes. NPM overrides the npm binary.
    pgn=$share/pg-node
    if ! command -v node > /dev/null 2>&1 || ! command -v "${NPM:-npm}" > /dev/null 2>&1; then
        log "pg-node: missing Debian package(s): nodejs npm (apt-get install nodejs npm)"
        failed=$((failed + 1))
    elif ! node --check "$here/pg/node/bench.js"; then
        log "pg-node: bench.js does not parse with $(node --version)"
        failed=$((failed + 1))
    else
        mkdir -p "$pgn"
        if ! cmp -s "$here/pg/node/package-lock.json" "$pgn/package-lock.json" || [ ! -d "$pgn/node_modules/pg" ]; then
            install -m 644 "$here/pg/node/package.json" "$pgn/package.json"
            install -m 644 "$here/pg/node/package-lock.json" "$pgn/package-lock.json"
            log "pg-node: npm ci (pg from package-lock.json)"
            if (cd "$pgn" && "${NPM:-npm}" ci --omit=dev --ignore-scripts --no-audit --no-fund > /dev/null); then
                echo "built $pgn/node_modules"
            else
                rm -f "$pgn/package-lock.json"
                log "pg-node: npm ci failed (needs the npm registry once)"
                failed=$((failed + 1))
            fi
        fi
        install_file 644 "$here/pg/node/bench.js" "$pgn/bench.js"
        install_file 755 "$here/pg/node/pg-node.sh" "$bin/pg-node"
    fi
    # asyncpg and uvloop are Debian's, for Debian's python3 (PYTHON overrides it).
    if ! "${PYTHON:-/usr/bin/python3}" -c 'import asyncpg, uvloop' > /dev/null 2>&1; then
        log "pg-asyncpg: missing Debian package(s): python3-asyncpg python3-uvloop (apt-get install python3-asyncpg python3-uvloop)"
        failed=$((failed + 1))
    else
        install_file 644 "$here/pg/asyncpg/bench.py" "$share/pg-asyncpg/bench.py"
        install_file 755 "$here/pg/asyncpg/pg-asyncpg.sh" "$bin/pg-asyncpg"
    fi
fi
# ---- end pg ----

if [ "$failed" -gt 0 ]; then
    log "$failed program(s) failed to build"
    exit 1
fi
log "done in $(($(date +%s) - started)) s: $bin"
