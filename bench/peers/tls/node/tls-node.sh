#!/bin/sh
# tls-node --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem: Node.js's tls
# echo server (server.js, in ../share/peers/tls-node beside this script). exec, so the
# PID the runner stops is node's own. NODE overrides the node binary.
here=$(dirname "$(readlink -f "$0")")
js="$here/../share/peers/tls-node/server.js"
[ -f "$js" ] || { echo "tls-node: $js not found" >&2; exit 1; }
exec "${NODE:-node}" "$js" "$@"
