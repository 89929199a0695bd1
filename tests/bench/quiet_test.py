#!/usr/bin/env python3
"""quiet_test.py: wait_quiet's look at the machine (scripts/bench_lib/common.py).

A run of ours that just ended with little other load stands in for the next look (no
sleep), once; a busy run, an old figure or a second call make a real look (at least
FIRST_LOOK_S); run_process notes its own figure for runs of a second or more. About 3 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_lib import check, finish  # noqa: E402  (puts scripts/ on sys.path)

from bench_lib import common  # noqa: E402


def timed_wait() -> tuple[float, float]:
    t0 = time.monotonic()
    b = common.wait_quiet(max_wait=0.3, pct=100.5)  # over 100 %: never waits past the first look
    return time.monotonic() - t0, b


def main() -> int:
    look = common.FIRST_LOOK_S
    common.note_other_load(4.0)
    dt, b = timed_wait()
    check(dt < look / 2, f"a quiet run just ended: no look ({dt:.3f} s)")
    ncpu = common.os.cpu_count() or 1
    check(abs(b - 4.0 / ncpu) < 1e-9, f"its figure, as a share of the machine ({b:.2f} %)")
    dt, _ = timed_wait()
    check(dt >= look * 0.9, f"the figure stands in for one look only ({dt:.3f} s)")

    common.note_other_load(99.0 * ncpu * 2)  # busier than any threshold
    dt, _ = timed_wait()
    check(dt >= look * 0.9, f"a busy run does not stand in ({dt:.3f} s)")

    common.note_other_load(1.0)
    common._last_other[1] -= common.RECENT_RUN_S + 1  # ended long ago
    dt, _ = timed_wait()
    check(dt >= look * 0.9, f"an old figure does not stand in ({dt:.3f} s)")

    tmp = Path(tempfile.mkdtemp(prefix="quiet-test-"))
    r = common.run_process([sys.executable, "-c", "import time; time.sleep(1.1)"], timeout=10,
                           log_path=tmp / "sleeper.log", header="sleeper")
    check(r.other_cpu_pct is not None and common._last_other[0] == r.other_cpu_pct,
          f"run_process notes its run's figure ({r.other_cpu_pct}, {common._last_other[0]})")
    r = common.run_process([sys.executable, "-c", "pass"], timeout=10, log_path=tmp / "short.log",
                           header="short")
    check(r.other_cpu_pct is None and common._last_other[0] is None,
          "a run under a second notes nothing to trust")
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
