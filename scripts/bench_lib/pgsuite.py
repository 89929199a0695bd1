"""The `pg` suite's database and runs (issue #28 item 5): PostgreSQL drivers on one
connection (docs/workloads.md, "pg").

The drivers are measured, not the server. One PostgreSQL cluster serves every run of a
runner process — the one the arena suite's database profiles use (arena.pg_cluster:
tests/arena/pg_cluster.py, the HttpArena items table of 100,000 rows, 127.0.0.1 with
scram-sha-256, its own port and socket folder), removed when the runner exits (or by its
watchdog if the runner dies). Every driver gets the same DATABASE_URL.

Before each run the server computes the expected checksums itself (psql as the superuser
over the cluster's Unix socket): the sum over the 10,000 ids of id + price +
octet_length(name), and over the 100,000 rows of the fetch. They go into the step's
context, and checks.check_pg fails a record whose checksum differs. They are computed per
run, not once, because the arena suite's crud profile rewrites rows of the same table.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

SCENARIOS = ("roundtrip", "pipelined_10k", "fetch_100k")
QUERIES = {"roundtrip": 10_000, "pipelined_10k": 10_000}
FETCH_ROWS = 100_000
ID_STEP = 7919  # query k asks for id 1 + (k * 7919) mod 100,000

# The expected answers, from the server: (point checksum, point rows found, fetch
# checksum, fetch rows). octet_length: every driver counts bytes of these ASCII names.
EXPECT_SQL = f"""
WITH q AS (SELECT 1 + (g * {ID_STEP}) % 100000 AS id FROM generate_series(0, {QUERIES['roundtrip'] - 1}) AS g)
SELECT (SELECT sum(i.id + i.price + octet_length(i.name)) FROM q JOIN items i ON i.id = q.id),
       (SELECT count(*) FROM q JOIN items i ON i.id = q.id),
       (SELECT sum(id + price + quantity + rating_score + rating_count + octet_length(name)
                   + octet_length(category) + active::int) FROM items WHERE id <= {FETCH_ROWS}),
       (SELECT count(*) FROM items WHERE id <= {FETCH_ROWS});
"""


def expected(repo: Path) -> dict:
    """The checksums the server computes for the workload; ValueError when the items table
    is not the seeded one (an id missing, fewer than 100,000 rows)."""
    from .arena import pg_cluster_folder
    folder = pg_cluster_folder(repo)
    res = subprocess.run(["python3", str(repo / "tests" / "arena" / "pg_cluster.py"), "psql", folder, EXPECT_SQL],
                         capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise ValueError(f"psql: {res.stderr.strip()[-300:]}")
    try:
        point_sum, point_rows, fetch_sum, fetch_rows = (int(x) for x in res.stdout.strip().split("|"))
    except ValueError:
        raise ValueError(f"psql printed {res.stdout.strip()[:200]!r}") from None
    if point_rows != QUERIES["roundtrip"] or fetch_rows != FETCH_ROWS:
        raise ValueError(f"items table: {point_rows} of the 10,000 ids and {fetch_rows} rows of "
                         f"1..{FETCH_ROWS} found (not the seeded table)")
    return {"expect": {"roundtrip": point_sum, "pipelined_10k": point_sum, "fetch_100k": fetch_sum}}


def run_step(step, run, log_path):
    """The bench_lib step of kind "pg": the shared cluster (started on first use), the
    expected checksums, one run of the driver's program with --url; checked records."""
    from .arena import pg_cluster
    from .common import run_process, wait_quiet
    from .execute import failed_record, records_from_output

    try:
        url = pg_cluster(run.paths.repo)
        step = replace(step, context={**step.context, **expected(run.paths.repo)})
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return [failed_record(step, sc, f"PostgreSQL: {e}") for sc in step.scenarios]
    wait_quiet(run.quiet_wait)
    res = run_process(step.argv + ["--url", url], timeout=step.timeout, log_path=log_path,
                      header=f"{step.suite} {step.runtime} {step.job} round {step.round}")
    records, _ = records_from_output(step, res.returncode, res.error, res.stdout, res.other_cpu_pct)
    return records
