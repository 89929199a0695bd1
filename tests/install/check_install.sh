#!/usr/bin/env bash
# Installs a built saturn into a scratch prefix, then builds and runs a consumer project
# against it twice: through find_package(saturn) and through pkg-config. Also checks the
# g++ 12 coroutine warnings reach the consumer (README.md, "Known compiler issues"): the
# CMake warning at configure time and the headers' warning at compile time appear with
# g++ 12, not with clang++-14 (when it is installed), and SATURN_NO_COMPILER_WARNING
# silences them.
#   check_install.sh BUILD_DIR CONSUMER_SOURCE_DIR CXX
set -euo pipefail
build=$1 src=$2 cxx=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
# The generated configuration header is installed beside the others (every header
# includes it through detail/owned_counter.hpp or config-dependent code).
grep -q '^#define SATURN_METRICS [01]$' "$tmp/prefix/include/saturn/config.hpp" ||
  { echo "FAIL: include/saturn/config.hpp not installed or not generated"; exit 1; }

configure_warning='saturn: .* miscompiles a coroutine'
temporary_warning='saturn: .* destroys an aggregate'
header_warning='saturn: g\+\+ 12 miscompiles two coroutine forms'

# gcc12 CXX: exit 0 when CXX is g++ 12 (the compiler the warnings are for).
gcc12() {
  [[ "$("$1" -dumpversion 2>/dev/null)" == 12* ]] && ! "$1" --version 2>/dev/null | grep -qi clang
}
# expect WANT(yes|no) WHAT PATTERN LOG
expect() {
  if grep -Eq "$3" "$4"; then found=yes; else found=no; fi
  if [[ $found != "$1" ]]; then
    echo "FAIL: $2: expected warning: $1, found: $found (pattern '$3') in:"
    cat "$4"
    exit 1
  fi
  echo "ok: $2 (warning: $found)"
}

# consumer_cmake NAME CXX [cmake args...]: configure + build the consumer, leaving logs.
consumer_cmake() {
  local name=$1 compiler=$2
  shift 2
  cmake -S "$src" -B "$tmp/$name" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$compiler" \
    -DCMAKE_BUILD_TYPE=Release "$@" >"$tmp/$name.configure.log" 2>&1 || { cat "$tmp/$name.configure.log"; exit 1; }
  cmake --build "$tmp/$name" >"$tmp/$name.build.log" 2>&1 || { cat "$tmp/$name.build.log"; exit 1; }
}

if gcc12 "$cxx"; then want=yes; else want=no; fi

echo "== find_package(saturn) with $cxx"
consumer_cmake cmake "$cxx"
"$tmp/cmake/consumer"
expect $want "configure warning, if (co_await)" "$configure_warning" "$tmp/cmake.configure.log"
expect $want "configure warning, co_await temporary" "$temporary_warning" "$tmp/cmake.configure.log"
expect $want "header warning" "$header_warning" "$tmp/cmake.build.log"
if [[ $want == yes ]]; then
  echo "== find_package(saturn) with $cxx, -DSATURN_NO_COMPILER_WARNING=ON"
  consumer_cmake cmake-quiet "$cxx" -DSATURN_NO_COMPILER_WARNING=ON
  expect no "configure warning silenced" "$configure_warning|$temporary_warning" "$tmp/cmake-quiet.configure.log"
  expect no "header warning silenced" "$header_warning" "$tmp/cmake-quiet.build.log"
fi

echo "== pkg-config saturn with $cxx"
pcdir=$(dirname "$(find "$tmp/prefix" -name saturn.pc -print -quit)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs saturn)
echo "flags: $flags"
bugs=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=saturn_gcc12_coawait_bugs saturn)
[[ $bugs == *if_co_await* && $bugs == *co_await_temporary* ]] ||
  { echo "FAIL: saturn.pc: saturn_gcc12_coawait_bugs is '$bugs'"; exit 1; }
echo "ok: saturn_gcc12_coawait_bugs=$bugs"
# shellcheck disable=SC2086 # the flags are a word list
"$cxx" -O2 "$src/main.cpp" -o "$tmp/pc-consumer" $flags 2>"$tmp/pc.log" || { cat "$tmp/pc.log"; exit 1; }
"$tmp/pc-consumer"
expect $want "pkg-config: header warning" "$header_warning" "$tmp/pc.log"
if [[ $want == yes ]]; then
  # shellcheck disable=SC2086
  "$cxx" -fsyntax-only -DSATURN_NO_COMPILER_WARNING "$src/main.cpp" $flags 2>"$tmp/pc-quiet.log" ||
    { cat "$tmp/pc-quiet.log"; exit 1; }
  expect no "pkg-config: header warning silenced" "$header_warning" "$tmp/pc-quiet.log"
fi

# The consumer's compiler decides, not saturn's: clang 14 has neither bug.
if clang=$(command -v clang++-14) && [[ "$clang" != "$cxx" ]]; then
  echo "== find_package(saturn) with $clang"
  consumer_cmake clang "$clang"
  "$tmp/clang/consumer"
  expect no "clang: configure warning" "$configure_warning|$temporary_warning" "$tmp/clang.configure.log"
  expect no "clang: header warning" "$header_warning" "$tmp/clang.build.log"
else
  echo "== clang++-14 not found (or is the compiler under test): its check is skipped"
fi
