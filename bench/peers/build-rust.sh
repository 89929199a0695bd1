#!/usr/bin/env bash
# Builds the Rust peers of `make bench` (bench/peers/README.md) into OUTDIR/bin.
#
#   bench/peers/build-rust.sh OUTDIR [--quick] [suite...]
#       suites: spawn sched walk echo http http_client arena process forkjoin pg (default: all of them)
#       --quick: the `quick` profile (no LTO, 16 codegen units) for the CI smoke build
#
# Offline, with Debian's cargo/rustc (/usr/bin/cargo, /usr/bin/rustc) and Debian's crate
# sources in /usr/share/cargo/registry (librust-tokio-dev, librust-rayon-dev,
# librust-hyper-dev, librust-tokio-postgres-dev); Debian 12's newer rustc-web / cargo-web (1.85+) install to the same
# paths and work as well. PEERS_CARGO / PEERS_RUSTC name another toolchain (e.g. rustup's)
# for a comparison; RUSTC is always set, since a cargo otherwise takes the first
# rustc on PATH (with rustup installed: rustup's, not Debian's).
# Writes only under OUTDIR: the workspace is copied to OUTDIR/build/rust-src, Cargo's
# home (with the config that replaces crates.io by Debian's registry) and target
# directory are OUTDIR/build/cargo-home and OUTDIR/build/cargo-target. A second run
# rebuilds nothing that did not change. Prints one "built PATH" line per program.
set -euo pipefail

usage() { echo "usage: $0 OUTDIR [--quick] [spawn|sched|walk|echo|http|http_client|arena|process|forkjoin|pg ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
profile=release
suites=()
for a in "$@"; do
    case "$a" in
        --quick) profile=quick ;;
        spawn | sched | walk | echo | http | http_client | arena | process | forkjoin | pg) suites+=("$a") ;;
        *) echo "build-rust.sh: unknown suite or option: $a" >&2; usage ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || suites=(spawn sched walk echo http http_client arena process forkjoin pg)
log() { echo "[build-rust.sh] $*" >&2; }
started=$(date +%s)

# suite -> program (= Cargo package) and the Debian crate package it needs
declare -A program=([spawn]=spawn-tokio [sched]=sched-tokio [walk]=walk-rayon
                    [echo]=echo-tokio [http]=http-hyper [arena]=arena-hyper
                    [process]=process-tokio
                    [http_client]=http_client-hyper
                    [forkjoin]="forkjoin-rayon forkjoin-tokio"
                    [pg]=pg-tokio)
declare -A crate_pkg=([spawn]=librust-tokio-dev [sched]=librust-tokio-dev
                      [walk]=librust-rayon-dev [echo]=librust-tokio-dev
                      [http]=librust-hyper-dev [arena]=librust-hyper-dev
                      [process]=librust-tokio-dev [http_client]=librust-hyper-dev
                      [forkjoin]="librust-rayon-dev librust-tokio-dev"
                      [pg]=librust-tokio-postgres-dev)
declare -A crate_dir=([librust-tokio-dev]=tokio-1 [librust-rayon-dev]=rayon-1
                      [librust-hyper-dev]=hyper-0.14 [librust-tokio-postgres-dev]=tokio-postgres-0.7)

# ---------------------------------------------------------------- toolchain check
registry=/usr/share/cargo/registry
cargo=${PEERS_CARGO:-/usr/bin/cargo}
rustc=${PEERS_RUSTC:-/usr/bin/rustc}
missing=()
[ -x "$cargo" ] || missing+=(cargo)
[ -x "$rustc" ] || missing+=(rustc)
for s in "${suites[@]}"; do
    for p in ${crate_pkg[$s]}; do
        compgen -G "$registry/${crate_dir[$p]}*" >/dev/null || missing+=("$p")
    done
done
if [ ${#missing[@]} -gt 0 ]; then
    missing=($(printf '%s\n' "${missing[@]}" | sort -u))
    echo "build-rust.sh: missing Debian package(s): ${missing[*]}" >&2
    echo "  install them with: apt-get install --no-install-recommends ${missing[*]}" >&2
    echo "  (for cargo/rustc, Debian 12's newer cargo-web/rustc-web do as well)" >&2
    echo "  (or scripts/deps bench, which installs everything make bench needs)" >&2
    exit 1
fi

# ---------------------------------------------------------------- workspace copy
build=$out/build
src=$build/rust-src
mkdir -p "$src" "$out/bin" "$build/cargo-home"
# cp -p keeps modification times, so Cargo sees unchanged files as unchanged; files
# gone from the source tree go from the copy too.
members=(Cargo.toml common/rust spawn/tokio sched/tokio walk/rayon echo/tokio http/hyper
         arena/hyper process/tokio http_client/hyper forkjoin/rayon forkjoin/tokio pg/tokio)
list() { # the members' sources under $1 (none yet in a fresh copy)
    (cd "$1" && find "${members[@]}" -type f \( -name '*.rs' -o -name Cargo.toml \) 2>/dev/null || true) | sort
}
list "$here" > "$build/rust-src.files"
list "$src" | comm -13 "$build/rust-src.files" - | while IFS= read -r f; do rm -f "$src/$f"; done
while IFS= read -r f; do
    if ! cmp -s "$here/$f" "$src/$f"; then
        mkdir -p "$src/$(dirname "$f")"
        cp -p "$here/$f" "$src/$f"
    fi
done < "$build/rust-src.files"

cat > "$build/cargo-home/config.toml.new" <<CFG
# Written by bench/peers/build-rust.sh: crates come from Debian's packaged sources.
[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "$registry"

[net]
offline = true
CFG
if cmp -s "$build/cargo-home/config.toml.new" "$build/cargo-home/config.toml"; then
    rm "$build/cargo-home/config.toml.new"
else
    mv "$build/cargo-home/config.toml.new" "$build/cargo-home/config.toml"
fi

# A Cargo.lock written by a newer cargo (lock format 4) stops an older one: start
# the lock afresh whenever the toolchain changes (offline, one version per crate in
# Debian's registry, so the resolution is the same).
toolchain="$("$cargo" --version) / $("$rustc" --version)"
if [ "$(cat "$build/rust-toolchain" 2>/dev/null)" != "$toolchain" ]; then
    rm -f "$src/Cargo.lock"
    echo "$toolchain" > "$build/rust-toolchain"
fi

# ---------------------------------------------------------------- build
pkgs=()
for s in "${suites[@]}"; do for b in ${program[$s]}; do pkgs+=(-p "$b"); done; done
log "cargo build --profile $profile ${pkgs[*]} ($toolchain)"
(cd "$src" && CARGO_HOME="$build/cargo-home" CARGO_TARGET_DIR="$build/cargo-target" \
    RUSTC="$rustc" RUSTDOC="$(dirname "$rustc")/rustdoc" \
    "$cargo" build --offline --quiet --profile "$profile" "${pkgs[@]}")
for s in "${suites[@]}"; do
    for b in ${program[$s]}; do
        f="$build/cargo-target/$profile/$b"
        cmp -s "$f" "$out/bin/$b" || install -m 0755 "$f" "$out/bin/$b"
        echo "built $out/bin/$b"
    done
done
log "done in $(($(date +%s) - started)) s ($profile)"
