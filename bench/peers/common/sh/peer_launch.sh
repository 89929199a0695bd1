# peer_launch.sh — sourced by the bash launchers of bench/peers (the nginx and h2o peers):
# the arena contract's flags, and running a server in the foreground until SIGTERM.
# Installed next to the launchers' shared files (OUTDIR/share/peers/lib) by
# build-native.sh; a launcher finds it through PEER_LIB or relative to itself.

# peer_usage NAME SYNOPSIS [REASON]: prints the usage line and exits 2.
peer_usage() {
    echo "usage: $1 $2${3:+ ($3)}" >&2
    exit 2
}

# peer_arena_args NAME "$@": the flags of bench/peers/arena/README.md's contract —
# --port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY] — checked
# and left in port, threads, data, tls_port, cert and key (data, cert and key as absolute
# paths; DIR/static must exist). Bad usage exits 2, an unreadable file 1.
peer_arena_args() {
    local name=$1 synopsis="--port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]"
    shift
    port="" data="" tls_port=0 cert="" key=""
    threads=$(nproc)
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || peer_usage "$name" "$synopsis" "$1 needs a value"
        case "$1" in
            --port) port=$2 ;;
            --threads) threads=$2 ;;
            --data) data=$2 ;;
            --tls-port) tls_port=$2 ;;
            --tls-cert) cert=$2 ;;
            --tls-key) key=$2 ;;
            *) peer_usage "$name" "$synopsis" "unknown argument $1" ;;
        esac
        shift 2
    done
    case "$port" in '' | *[!0-9]*) peer_usage "$name" "$synopsis" "--port P is required" ;; esac
    [ "$port" -le 65535 ] || peer_usage "$name" "$synopsis" "--port must be below 65536"
    case "$tls_port" in '' | *[!0-9]*) peer_usage "$name" "$synopsis" "--tls-port must be a port number" ;; esac
    [ "$tls_port" -le 65535 ] || peer_usage "$name" "$synopsis" "--tls-port must be below 65536"
    case "$threads" in '' | *[!0-9]* | 0) peer_usage "$name" "$synopsis" "--threads must be a count >= 1" ;; esac
    [ -n "$data" ] || peer_usage "$name" "$synopsis" "--data DIR is required"
    [ -d "$data/static" ] || { echo "$name: $data/static is not a directory (tests/arena/gen_data.py DIR makes it)" >&2; exit 1; }
    data=$(readlink -f "$data")
    if [ "$tls_port" -gt 0 ]; then
        [ -n "$cert" ] && [ -n "$key" ] || peer_usage "$name" "$synopsis" "--tls-port needs --tls-cert and --tls-key"
        [ -r "$cert" ] && [ -r "$key" ] || { echo "$name: cannot read $cert or $key" >&2; exit 1; }
        cert=$(readlink -f "$cert") key=$(readlink -f "$key")
    fi
}

# peer_run PREFIX GRACE CMD...: runs CMD in the background until it exits, or until this
# shell gets SIGTERM / SIGINT: then CMD gets SIGTERM and, if it is still running GRACE
# seconds later (a graceful shutdown that waits for open connections), SIGKILL. PREFIX
# (the run's temporary folder) is removed either way. Exits with CMD's status, or 0
# after a signal.
peer_run() {
    local prefix=$1 grace=$2
    shift 2
    "$@" &
    peer_pid=$!
    peer_prefix=$prefix
    peer_grace=$grace
    trap peer_stop TERM INT
    wait "$peer_pid"
    local rc=$?
    rm -rf "$peer_prefix"
    exit $rc
}

peer_stop() {
    kill -TERM "$peer_pid" 2> /dev/null
    # It counts as finished once it is a zombie (kill -0 would still succeed on it until
    # the wait below reaps it).
    local state i
    for ((i = 0; i < peer_grace * 20; i++)); do
        state=Z
        { read -r _ _ state _ < "/proc/$peer_pid/stat"; } 2> /dev/null
        [ "$state" = Z ] && break
        sleep 0.05
    done
    [ "$state" = Z ] || kill -KILL "$peer_pid" 2> /dev/null
    wait "$peer_pid" 2> /dev/null
    rm -rf "$peer_prefix"
    exit 0
}
