#!/bin/sh
# pg-node --url URL [--threads N] [--samples N] [--warmup N] [--scenario A,B]: the pg
# suite's Node.js peer (bench.js and its node_modules, in ../share/peers/pg-node beside
# this script, installed by build-native.sh with `npm ci` from package-lock.json).
# exec, so the process measured is node's own. NODE overrides the node binary.
here=$(dirname "$(readlink -f "$0")")
js="$here/../share/peers/pg-node/bench.js"
[ -f "$js" ] || { echo "pg-node: $js not found" >&2; exit 1; }
exec "${NODE:-node}" "$js" "$@"
