"""What the runner's script tests share: the repository on sys.path for bench_lib, and
one line per check with a failure count at the end (no test framework: Debian's python3
alone runs them)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

FAILS: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def finish() -> int:
    """Prints the failure count; the exit status for sys.exit."""
    print(f"{len(FAILS)} failure(s)")
    return 1 if FAILS else 0
