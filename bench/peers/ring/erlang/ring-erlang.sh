#!/bin/sh
# ring-erlang N LAPS [--samples S] [--warmup W] [--threads T]
# Starts the BEAM (JIT emulator, default settings otherwise) on ring_bench.beam from
# ../share/peers/ring-erlang beside this script, with --threads T as T schedulers
# (+S T:T) and room for N processes when N nears the default process limit (+P).
here=$(dirname "$(readlink -f "$0")")
beams="$here/../share/peers/ring-erlang"
[ -f "$beams/ring_bench.beam" ] || { echo "ring-erlang: $beams/ring_bench.beam not found" >&2; exit 1; }
vm=""
case "${1:-}" in
    '' | *[!0-9]*) ;;
    *) [ "$1" -ge 200000 ] && vm="+P $(($1 + 100000))" ;;
esac
want_threads=""
for arg in "$@"; do
    if [ "$want_threads" = 1 ]; then
        case "$arg" in '' | *[!0-9]* | 0) echo "ring-erlang: --threads needs a count" >&2; exit 2 ;; esac
        vm="$vm +S $arg:$arg"
    fi
    want_threads=""
    [ "$arg" = --threads ] && want_threads=1
done
# shellcheck disable=SC2086  # $vm is a list of emulator flags
exec erl -noshell $vm -pa "$beams" -s ring_bench start -extra "$@"
