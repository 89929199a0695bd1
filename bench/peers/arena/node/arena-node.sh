#!/bin/sh
# arena-node --port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]:
# the arena suite's Node.js peer (server.js, in ../share/peers/arena-node beside this
# script). exec, so the PID the runner stops is node's own. NODE overrides the node
# binary. The `ws` package is Debian's node-ws in /usr/share/nodejs, which Debian's own
# nodejs searches by itself; NODE_PATH adds it for a node from elsewhere (NodeSource).
here=$(dirname "$(readlink -f "$0")")
js="$here/../share/peers/arena-node/server.js"
[ -f "$js" ] || { echo "arena-node: $js not found" >&2; exit 1; }
NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
export NODE_PATH
exec "${NODE:-node}" "$js" "$@"
