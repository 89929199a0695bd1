"""Figures: the numeric JSON fields that are reported, which way is better, formatting.

Direction rule (docs/workloads.md): throughputs (ops_per_sec, msgs_per_sec, rps,
hops_per_sec, calls_per_cpu_s, rows_per_sec) are higher-is-better; times and sizes (ns_*, *_us, wall_s,
bytes_per_task, peak_rss_kib, CPU per message, syscall counts) are lower-is-better.
"""

from __future__ import annotations

import math

HIGHER = "higher"
LOWER = "lower"

_HIGHER = {"ops_per_sec", "msgs_per_sec", "rps", "hops_per_sec", "conns_per_sec", "mb_per_sec",
           "calls_per_cpu_s", "rows_per_sec"}

UNITS = {
    "ops_per_sec": "ops/s", "msgs_per_sec": "msgs/s", "rps": "req/s", "hops_per_sec": "hops/s",
    "ns_per_op": "ns/op", "ns_per_eval": "ns/eval", "ns_per_timer": "ns/timer", "ns_per_op_fixed": "ns/op fixed",
    "ns_per_op_plain": "ns/op plain", "ns_per_task": "ns/task", "ns_per_switch": "ns/switch",
    "spawn_ns_per_proc": "spawn ns/proc", "bytes_per_task": "B/task", "peak_rss_kib": "peak RSS KiB",
    "p50_us": "p50 µs", "p95_us": "p95 µs", "p99_us": "p99 µs", "p999_us": "p99.9 µs",
    "wall_s": "wall s", "server_cpu_us_per_msg": "server CPU µs/msg",
    "server_cpu_us_per_req": "server CPU µs/req", "min_us": "fastest µs",
    "sys_getdents64": "getdents64", "sys_openat": "openat(2)", "sys_futex": "futex",
    "sys_sched_yield": "sched_yield", "conns_per_sec": "handshakes/s", "mb_per_sec": "MB/s",
    "server_cpu_us_per_op": "server CPU µs/handshake", "server_cpu_us_per_mib": "server CPU µs/MiB",
    "server_user_us_per_req": "server user µs/req", "server_sys_us_per_req": "server sys µs/req",
    "bytes_per_resp": "B/response", "cpu_us_per_child": "CPU µs/child",
    "cpu_us_per_req": "client CPU µs/req",
    "calls_per_cpu_s": "calls/server CPU-s", "ns_per_call": "ns/call", "cpu_ns_per_call": "CPU ns/call", "cold_start_ms": "cold start ms",
    "client_ms": "client's own ms", "server_instr_per_req": "server instr/unit",
    "longest_pause_ms": "longest pause ms", "report_late_ms": "report late ms", "max_late_ms": "latest report ms",
    "reports": "reports",
    "rows_per_sec": "rows/s", "cpu_us_per_query": "client CPU µs/query", "cpu_ns_per_row": "client CPU ns/row",
}

PERCENTILES = ("p50_us", "p95_us", "p99_us", "p999_us")


def direction(figure: str) -> str:
    return HIGHER if figure in _HIGHER else LOWER


def arrow(figure: str) -> str:
    return "↑" if direction(figure) == HIGHER else "↓"


def label(figure: str) -> str:
    return UNITS.get(figure, figure)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def advantage(ratio: float, figure: str) -> float:
    """saturn/peer turned into 'times better for saturn' (> 1: saturn better)."""
    return ratio if direction(figure) == HIGHER else 1.0 / ratio


def _scale(a: float) -> tuple[float, str]:
    for limit, div, suffix in ((1e9, 1e9, " G"), (1e6, 1e6, " M"), (1e4, 1e3, " k")):
        if a >= limit:
            return div, suffix
    return 1.0, ""


def _digits(x: float) -> str:
    a = abs(x)
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def fmt(v: float | None, like: float | None = None) -> str:
    """Compact number (3-4 significant digits, k / M / G); `like` picks the scale, so a
    median and its spread read in one unit."""
    if v is None or not is_number(v):
        return "—"
    div, suffix = _scale(abs(like if is_number(like) else v))
    return _digits(v / div) + suffix


def fmt_spread(median: float, lo: float, hi: float) -> str:
    """'12.6 k (8.77–13.1 k)': median, then min–max in the median's unit."""
    div, suffix = _scale(abs(median))
    return f"{_digits(median / div)}{suffix} ({_digits(lo / div)}–{_digits(hi / div)}{suffix})"


def fmt_ratio(r: float | None) -> str:
    if r is None or not is_number(r):
        return "—"
    if r >= 100:
        return f"{r:.0f}×"
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.2g}×"
