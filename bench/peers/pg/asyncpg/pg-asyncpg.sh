#!/bin/sh
# pg-asyncpg --url URL [--threads N] [--samples N] [--warmup N] [--scenario A,B]: the pg
# suite's Python peer (bench.py, in ../share/peers/pg-asyncpg beside this script) on
# Debian's python3 with python3-asyncpg and python3-uvloop. exec, so the process measured
# is Python's own. PYTHON overrides the interpreter (default /usr/bin/python3: Debian's,
# where the packages are, not a python3 earlier on PATH).
here=$(dirname "$(readlink -f "$0")")
py="$here/../share/peers/pg-asyncpg/bench.py"
[ -f "$py" ] || { echo "pg-asyncpg: $py not found" >&2; exit 1; }
exec "${PYTHON:-/usr/bin/python3}" "$py" "$@"
