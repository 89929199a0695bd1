#!/usr/bin/env python3
"""peer_args_test.py: bench/peers/build.sh takes every suite name scripts/bench passes it.

scripts/bench builds the peers of the suites it runs by naming them to build.sh; a suite
the runner knows and build.sh refuses stops `make bench` before any run (the saturn-only
`observe` suite did, 2026-12-06). build.sh --check parses the names and exits: 0 for all of
the runner's suites together and for each alone, 2 for a name nobody knows. Under a second.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from bench_lib.suites import SUITES  # noqa: E402

BUILD = REPO / "bench" / "peers" / "build.sh"


def check(*names: str) -> int:
    return subprocess.run(["bash", str(BUILD), "/nonexistent/peers", "--check", *names],
                          capture_output=True).returncode


def main() -> int:
    names = list(SUITES)
    assert names, "the runner knows no suite"
    rc = check(*names)
    assert rc == 0, f"build.sh refuses the runner's suites {names}: exit {rc}"
    for n in names:
        assert check(n) == 0, f"build.sh refuses the suite {n!r}"
        assert check("--quick", n) == 0, f"build.sh refuses --quick {n!r}"
    assert check("no-such-suite") == 2, "build.sh took an unknown suite"
    assert not Path("/nonexistent/peers").exists()
    print(f"peer_args_test: ok ({len(names)} suites)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
