#!/usr/bin/python3
"""pg-asyncpg: the pg suite's Python peer (docs/workloads.md, "pg"; bench/peers/pg/README.md).

asyncpg (Debian's python3-asyncpg) on uvloop (python3-uvloop; the asyncio default loop if
it is missing, said in the record's "loop" field), one connection, statements prepared
with conn.prepare() and rows as asyncpg Records:
  roundtrip      10,000 `await stmt.fetchrow(id)`, one after the other
  pipelined_10k  the same 10,000 queries, also one after the other: asyncpg runs one
                 operation at a time per connection (a second concurrent one raises
                 InterfaceError), and its only pipelined call, executemany(), returns no
                 rows to check. The record says "pipelining": "none".
  fetch_100k     `await stmt.fetch()` returning 100,000 Records, every column read

  pg-asyncpg --url postgres://user:pw@127.0.0.1:P/db [--threads N] [--samples N]
             [--warmup N] [--scenario roundtrip,pipelined_10k,fetch_100k]
--threads is recorded only: the event loop runs on one thread.
"""

import argparse
import asyncio
import json
import resource
import sys
import time

import asyncpg

SCENARIOS = ("roundtrip", "pipelined_10k", "fetch_100k")
ROUNDTRIP_QUERIES = 10_000
PIPELINED_QUERIES = 10_000
FETCH_ROWS = 100_000
POINT_SQL = "SELECT id, name, price FROM items WHERE id = $1"
FETCH_SQL = ("SELECT id, name, category, price, quantity, active, rating_score, rating_count "
             "FROM items WHERE id <= 100000")


def item_id(k: int) -> int:
    return 1 + (k * 7919) % 100_000


class Meter:
    def __init__(self):
        self.r0 = resource.getrusage(resource.RUSAGE_SELF)
        self.t0 = time.perf_counter_ns()

    def stop(self, s: dict) -> None:
        s["wall_s"] = (time.perf_counter_ns() - self.t0) / 1e9
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        s["cpu_user_s"] = r1.ru_utime - self.r0.ru_utime
        s["cpu_sys_s"] = r1.ru_stime - self.r0.ru_stime


def point_sum(row, want: int) -> int:
    if row is None or row["id"] != want:
        raise RuntimeError(f"asked for id {want}, got {None if row is None else row['id']}")
    return row["id"] + row["price"] + len(row["name"])


async def roundtrip(point, _all, s: dict) -> None:
    lat = s["latencies_ns"]
    m = Meter()
    for k in range(ROUNDTRIP_QUERIES):
        i = item_id(k)
        t0 = time.perf_counter_ns()
        row = await point.fetchrow(i)
        lat.append(time.perf_counter_ns() - t0)
        s["checksum"] += point_sum(row, i)
    m.stop(s)


async def pipelined(point, _all, s: dict) -> None:
    m = Meter()
    ids = [item_id(k) for k in range(PIPELINED_QUERIES)]
    rows = [await point.fetchrow(i) for i in ids]
    for row, i in zip(rows, ids):
        s["checksum"] += point_sum(row, i)
    m.stop(s)


async def fetch(_point, all_rows, s: dict) -> None:
    m = Meter()
    rows = await all_rows.fetch()
    if len(rows) != FETCH_ROWS:
        raise RuntimeError(f"{len(rows)} rows, want {FETCH_ROWS}")
    total = 0
    for r in rows:
        total += (r["id"] + r["price"] + r["quantity"] + r["rating_score"] + r["rating_count"]
                  + len(r["name"]) + len(r["category"]) + (1 if r["active"] else 0))
    s["checksum"] += total
    m.stop(s)


def median(v: list) -> float:
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def nearest_rank(sorted_v: list, p: float) -> float:
    import math
    rank = min(len(sorted_v), max(1, math.ceil(p / 100 * len(sorted_v))))
    return sorted_v[rank - 1]


def report(name: str, threads: int, per_sample: int, got: list, loop_name: str) -> None:
    rates = [per_sample / s["wall_s"] for s in got]
    order = sorted(range(len(rates)), key=lambda i: rates[i])
    mid = got[order[(len(order) - 1) // 2]]
    total = per_sample * len(got)
    user = sum(s["cpu_user_s"] for s in got)
    sys_ = sum(s["cpu_sys_s"] for s in got)
    rec = {"suite": "pg", "scenario": name, "runtime": "asyncpg", "threads": threads,
           "samples": len(got), "wall_s": mid["wall_s"]}
    if name == "fetch_100k":
        rec.update(queries=1, rows=per_sample, rows_per_sec=median(rates),
                   cpu_ns_per_row=(user + sys_) * 1e9 / total)
    else:
        rec.update(queries=per_sample, rows=per_sample, ops_per_sec=median(rates),
                   cpu_us_per_query=(user + sys_) * 1e6 / total)
    rec.update(cpu_user_s=user, cpu_sys_s=sys_)
    if mid["latencies_ns"]:
        lat = sorted(mid["latencies_ns"])
        rec.update(p50_us=nearest_rank(lat, 50) / 1e3, p99_us=nearest_rank(lat, 99) / 1e3)
    if name == "pipelined_10k":
        rec["pipelining"] = "none"
    rec.update(loop=loop_name, checksum=mid["checksum"])
    print(json.dumps(rec), flush=True)


async def run(a, loop_name: str) -> None:
    conn = await asyncpg.connect(a.url)
    try:
        point = await conn.prepare(POINT_SQL)
        all_rows = await conn.prepare(FETCH_SQL)
        table = {"roundtrip": (roundtrip, ROUNDTRIP_QUERIES),
                 "pipelined_10k": (pipelined, PIPELINED_QUERIES),
                 "fetch_100k": (fetch, FETCH_ROWS)}
        for name in SCENARIOS:
            if a.scenario and name not in a.scenario and "all" not in a.scenario:
                continue
            fn, per_sample = table[name]
            got, reference = [], None
            for i in range(a.warmup + a.samples):
                s = {"checksum": 0, "latencies_ns": []}
                await fn(point, all_rows, s)
                if reference is None:
                    reference = s["checksum"]
                elif s["checksum"] != reference:
                    raise RuntimeError(f"{name}: checksum {s['checksum']} differs from the first run's {reference}")
                if i >= a.warmup:
                    got.append(s)
            report(name, a.threads, per_sample, got, loop_name)
    finally:
        await conn.close()


def main() -> int:
    p = argparse.ArgumentParser(prog="pg-asyncpg")
    p.add_argument("--url", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--scenario", type=lambda v: v.split(","), default=None)
    a = p.parse_args()
    for s in a.scenario or []:
        if s != "all" and s not in SCENARIOS:
            p.error(f"unknown scenario {s}")
    if a.samples < 1 or a.warmup < 0:
        p.error("--samples must be at least 1, --warmup at least 0")
    try:
        import uvloop
        uvloop.install()
        loop_name = "uvloop"
    except ImportError:
        loop_name = "asyncio"
    try:
        asyncio.run(run(a, loop_name))
    except Exception as e:  # noqa: BLE001 - any failure fails the run, with its reason
        print(f"pg-asyncpg: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
