#!/usr/bin/env bash
# Installs a built saturn into a scratch prefix, then builds and runs a consumer project
# against it twice: through find_package(saturn) and through pkg-config.
#   check_install.sh BUILD_DIR CONSUMER_SOURCE_DIR CXX
set -euo pipefail
build=$1 src=$2 cxx=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"

echo "== find_package(saturn)"
cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/cmake" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/cmake/consumer"

echo "== pkg-config saturn"
pcdir=$(dirname "$(find "$tmp/prefix" -name saturn.pc -print -quit)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs saturn)
echo "flags: $flags"
# shellcheck disable=SC2086 # the flags are a word list
"$cxx" -O2 "$src/main.cpp" -o "$tmp/pc-consumer" $flags
"$tmp/pc-consumer"
