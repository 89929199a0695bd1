#!/bin/sh
# http-node --port P [--threads W]: Node.js's node:http server (server.js, in
# ../share/peers/http-node beside this script). exec, so the PID the runner stops is
# node's own. NODE overrides the node binary.
here=$(dirname "$(readlink -f "$0")")
js="$here/../share/peers/http-node/server.js"
[ -f "$js" ] || { echo "http-node: $js not found" >&2; exit 1; }
exec "${NODE:-node}" "$js" "$@"
