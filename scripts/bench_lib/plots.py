"""docs/plots/<suite>.svg from a suite's summary, with matplotlib (Agg backend).

Panel 1: saturn's advantage over each peer per scenario and figure: the median
saturn/peer ratio, inverted for lower-is-better figures, so that > 1 always means
"saturn better"; log scale. Panel 2 (suites with latency percentiles): the median
p50/p99 of every runtime, log scale.

render() returns None on success or a note. When the running Python has no matplotlib,
plot() retries with the system Python (/usr/bin/python3, where Debian's
python3-matplotlib lives) by running this file as a script:

    python3 plots.py SUMMARY_JSON SUITE OUT_SVG
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

if __package__:
    from .figures import PERCENTILES, advantage, label
else:  # run as a script by another Python
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench_lib.figures import PERCENTILES, advantage, label

SYSTEM_PYTHON = "/usr/bin/python3"
COLORS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377")


def _row_name(row: dict, show_threads: bool) -> str:
    t = f" ×{row['threads']}t" if show_threads else ""
    return f"{row['scenario']}{t} {label(row['figure'])}"


def _advantage_data(summary: dict, show_threads: bool) -> tuple[list, dict]:
    rows = [r for r in summary["rows"] if r["kind"] == "" and r["figure"] not in PERCENTILES
            and r["ratios"]]
    peers = [p for p in summary["runtimes"] if p != "saturn"]
    names = [_row_name(r, show_threads) for r in rows]
    data = {p: [advantage(r["ratios"][p]["median"], r["figure"]) if p in r["ratios"] else None
                for r in rows] for p in peers}
    return names, data


def _latency_data(summary: dict, show_threads: bool) -> tuple[list, dict]:
    rows = [r for r in summary["rows"] if r["kind"] == "" and r["figure"] in ("p50_us", "p99_us")]
    names = [_row_name(r, show_threads) for r in rows]
    data = {rt: [r["values"][rt]["median"] if rt in r["values"] else None for r in rows]
            for rt in summary["runtimes"]}
    return names, data


def _adv_ticks(extent: float) -> list:
    """Readable ticks for a log axis from 1/extent to extent."""
    if extent <= 1.6:
        up = [1.11, 1.25, 1.5]
    elif extent <= 3.5:
        up = [1.5, 2, 3]
    else:
        up = [2, 5, 10, 20, 50, 100, 1000]
    ticks = sorted({1.0, *up, *(1 / u for u in up)})
    return [t for t in ticks if 1 / extent <= t <= extent]


def _tick_label(t: float) -> str:
    return f"{t:g}×" if t >= 1 else f"{t:.2g}×"


def _series(data: dict) -> list:
    return [k for k, v in data.items() if any(x is not None and x > 0 for x in v)]


def _color(colors: dict, key: str) -> str:
    return colors.get(key, COLORS[len(colors) % len(COLORS)])


def _yaxis(ax, names: list, height: float) -> None:
    ax.set_yticks([y + 0.4 - height / 2 for y in range(len(names))])
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def _advantage_bars(ax, names: list, data: dict, colors: dict) -> None:
    """Bars grow from 1 to the left (peer better) or right (saturn better), log scale."""
    series = _series(data)
    height = 0.8 / max(1, len(series))
    extent = 1.25
    for i, key in enumerate(series):
        for y, v in enumerate(data[key]):
            if v is None or v <= 0:
                continue
            extent = max(extent, v, 1 / v)
            yy = y + i * height
            ax.barh(yy, v - 1, left=1, height=height, color=_color(colors, key),
                    label=key if y == next(j for j, x in enumerate(data[key]) if x) else None)
            ax.text(v, yy, f" {v:.2f}× " if v >= 1 else f" {v:.2f}× ", fontsize=7,
                    va="center", ha="left" if v >= 1 else "right")
    ax.set_xscale("log")
    ax.set_xlim(1 / (extent * 1.3), extent * 1.3)
    ticks = _adv_ticks(extent * 1.3)
    ax.set_xticks(ticks)
    ax.set_xticklabels([_tick_label(t) for t in ticks], fontsize=8)
    ax.minorticks_off()
    ax.axvline(1.0, color="black", linewidth=0.8)
    _yaxis(ax, names, height)


def _value_bars(ax, names: list, data: dict, colors: dict) -> None:
    """Absolute values (latency), log scale, bars from below the smallest value."""
    series = _series(data)
    height = 0.8 / max(1, len(series))
    vals = [v for k in series for v in data[k] if v is not None and v > 0]
    for i, key in enumerate(series):
        ys = [y + i * height for y in range(len(names))]
        ax.barh(ys, [v if v is not None and v > 0 else 0 for v in data[key]], height=height,
                label=key, color=_color(colors, key))
    ax.set_xscale("log")
    if vals:
        ax.set_xlim(min(vals) / 3, max(vals) * 2)
    _yaxis(ax, names, height)


def render(summary: dict, out: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed"
    show_threads = len({r["threads"] for r in summary["rows"]}) > 1
    adv_names, adv = _advantage_data(summary, show_threads)
    lat_names, lat = _latency_data(summary, show_threads)
    panels = [p for p in ((adv_names, adv, "adv"), (lat_names, lat, "lat")) if p[0]]
    if not panels:
        return "nothing to plot (no saturn/peer pairs)"
    colors = {rt: COLORS[i % len(COLORS)] for i, rt in enumerate(summary["runtimes"])}
    heights = [max(1.5, 0.28 * len(n) * max(1, len(d))) for n, d, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 1.2 + sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (names, data, what) in zip(axes[:, 0], panels):
        if what == "adv":
            _advantage_bars(ax, names, data, colors)
            ax.set_title(f"{summary['suite']}: saturn advantage over each peer "
                         "(> 1 = saturn better; median of per-round ratios)", fontsize=10)
        else:
            _value_bars(ax, names, data, colors)
            ax.set_title(f"{summary['suite']}: latency percentiles, µs (lower is better)",
                         fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=out.suffix.lstrip(".") or "svg")
    plt.close(fig)
    return None


def _system_python_has_matplotlib() -> bool:
    if not Path(SYSTEM_PYTHON).is_file() or Path(sys.executable).resolve() == \
            Path(SYSTEM_PYTHON).resolve():
        return False
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import matplotlib"], capture_output=True)
    return probe.returncode == 0


def plot(summary_file: Path, suite: str, out: Path) -> str | None:
    """Render in this Python or, lacking matplotlib, in the system Python."""
    summary = json.loads(summary_file.read_text())["suites"][suite]
    note = render(summary, out)
    if note != "matplotlib is not installed" or not _system_python_has_matplotlib():
        return note
    res = subprocess.run([SYSTEM_PYTHON, str(Path(__file__).resolve()), str(summary_file), suite,
                          str(out)], capture_output=True, text=True)
    if res.returncode != 0:
        return f"plot with {SYSTEM_PYTHON} failed: {res.stderr.strip()[-300:]}"
    return res.stdout.strip() or None


def main(argv: list) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    summary = json.loads(Path(argv[0]).read_text())["suites"][argv[1]]
    note = render(summary, Path(argv[2]))
    if note:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
