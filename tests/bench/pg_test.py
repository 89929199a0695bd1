#!/usr/bin/env python3
"""pg_test.py SATURN_BENCH_PG: the pg suite's runner and checks (scripts/bench_lib/pgsuite.py,
checks.check_pg) with saturn's driver program.

Starts the runner's PostgreSQL cluster (arena.pg_cluster: initdb, the items table; removed
when this script exits), runs one step of the suite the way scripts/bench does (one sample,
no warm-up) and expects three records that pass their checks against the checksums the
server computed; then that a record with its checksum one off, one with the wrong query
count, one without its CPU figure, and a record checked without the server's sums all
fail; and that a step whose program prints a wrong checksum is recorded as FAILED. About
10 s. Exits 77 (skipped) when PostgreSQL is not installed.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from bench_lib import pgsuite  # noqa: E402
from bench_lib.checks import check_record  # noqa: E402
from bench_lib.model import Step  # noqa: E402

PG_BIN = "/usr/lib/postgresql/15/bin"


def step_for(binary: str) -> Step:
    return Step("pg", "pg", "saturn", "all", [binary, "--threads", "2", "--samples", "1", "--warmup", "0"], 2, 5.0,
                timeout=120, scenarios=pgsuite.SCENARIOS, round=1)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: pg_test.py SATURN_BENCH_PG", file=sys.stderr)
        return 2
    if not os.access(f"{PG_BIN}/initdb", os.X_OK):
        print(f"pg_test: skipped, no {PG_BIN}/initdb (install postgresql)")
        return 77
    run = SimpleNamespace(paths=SimpleNamespace(repo=REPO), quiet_wait=0.0)
    with tempfile.TemporaryDirectory(prefix="pg-test.") as tmp:
        records = pgsuite.run_step(step_for(sys.argv[1]), run, Path(tmp) / "pg.log")
        assert [r["scenario"] for r in records] == list(pgsuite.SCENARIOS), records
        bad = [r for r in records if r.get("failed")]
        assert not bad, (bad, (Path(tmp) / "pg.log").read_text()[-2000:])
        ctx = pgsuite.expected(REPO)
        for rec in records:
            sc = rec["scenario"]
            assert rec["checksum"] == ctx["expect"][sc], rec
            assert check_record(rec, "pg", "saturn", ctx) is None, rec
            assert "server's own sum" in check_record(dict(rec, checksum=rec["checksum"] + 1), "pg", "saturn", ctx)
            cpu = "cpu_ns_per_row" if sc == "fetch_100k" else "cpu_us_per_query"
            assert cpu in check_record({k: v for k, v in rec.items() if k != cpu}, "pg", "saturn", ctx)
            count = "rows" if sc == "fetch_100k" else "queries"
            assert count in check_record(dict(rec, **{count: 10}), "pg", "saturn", ctx)
            assert "no expected checksum" in check_record(rec, "pg", "saturn", {})
        # A program that answers with a wrong checksum is recorded as FAILED by the runner.
        liar = Path(tmp) / "liar"
        line = dict(records[2], checksum=records[2]["checksum"] - 1)
        for k in ("round", "run_other_cpu_pct"):
            line.pop(k, None)
        import json
        liar.write_text("#!/bin/sh\necho '" + json.dumps(line) + "'\n")
        liar.chmod(liar.stat().st_mode | stat.S_IXUSR)
        lied = pgsuite.run_step(step_for(str(liar)), run, Path(tmp) / "pg.log")
        by_sc = {r["scenario"]: r for r in lied}
        assert by_sc["fetch_100k"].get("failed") and "server's own sum" in by_sc["fetch_100k"]["reason"], lied
        assert all(by_sc[sc].get("failed") for sc in ("roundtrip", "pipelined_10k")), lied
    summary = ", ".join(f"{r['scenario']} {r.get('ops_per_sec', r.get('rows_per_sec')):.0f}/s" for r in records)
    print(f"pg_test: ok ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
