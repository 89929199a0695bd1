"""docs/benchmarks.md: generated sections between markers, hand-written text elsewhere.

    <!-- bench:machine:begin --> ... <!-- bench:machine:end -->
    <!-- bench:SUITE:begin -->   ... <!-- bench:SUITE:end -->

Only the sections of suites that ran are replaced; everything outside the markers (the
"Where saturn loses and why" paragraphs in particular) is never touched. A file or a
suite section that does not exist yet is created from the skeleton below.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import stats
from .figures import PERCENTILES, arrow, fmt, fmt_ratio, fmt_spread, label

HEADER = """# saturn benchmarks

Every number on this page comes from `scripts/bench`, which runs saturn's benchmark
programs and the peer programs of `bench/peers` (the workloads of `docs/workloads.md`)
on one machine, in one sitting, **interleaved**: each round
runs every runtime once, and the order of the runtimes alternates between rounds. Every
run's answer is checked (checksums, counts, errors) before it counts; a run that fails
its check is listed as FAILED and never reported as a number. Cells are the median over
rounds with the min–max spread; a ratio is saturn ÷ peer, taken pair by pair within a
round, median over rounds. ↑ = higher is better (ratio > 1 favours saturn), ↓ = lower is
better (ratio < 1 favours saturn). Raw JSON Lines, logs and `summary.json` are under
`bench/results/<date>-<host>/`.

## How to reproduce

    make bench                # every suite whose saturn program exists; quick mode
    make bench SUITE=loop     # one suite
    make bench FULL=1         # more rounds and samples (about an hour for all suites)
    python3 scripts/bench --help          # rounds, threads, dry run, report-only
    scripts/ab REV_A REV_B --suite loop   # A/B gate between two revisions

`SATURN_BIN_DIR=/some/bin` makes the runner use saturn programs from another directory.
A suite whose saturn program has not been built yet is skipped with a note; a peer that
did not build or fails its answer check is shown as FAILED. `python3 scripts/bench
--dry-run` prints the plan and its time estimate.

saturn's programs behave like the peers: `saturn-bench-<suite> [--threads N]
[--samples N] [--warmup N] [--scenario NAME[,NAME]]` (the ring takes `N LAPS` first)
prints one contract JSON line per scenario on stdout with `"runtime":"saturn"`;
`saturn-walk ROOT` prints the two count lines; `saturn-echo` and `saturn-http` take
`--port P --threads W` and bind 127.0.0.1 only.

## Machine

<!-- bench:machine:begin -->
_No benchmark has run yet._
<!-- bench:machine:end -->
"""

PLACEHOLDER_LOSSES = """### Where saturn loses and why

_Written by hand after reading the numbers above; `scripts/bench` never rewrites this
paragraph._
"""


def marker(name: str, end: bool) -> str:
    return f"<!-- bench:{name}:{'end' if end else 'begin'} -->"


def suite_skeleton(title: str, name: str) -> str:
    return (f"\n## {title}\n\n{marker(name, False)}\n_Not run yet._\n{marker(name, True)}\n\n"
            f"{PLACEHOLDER_LOSSES}")


def replace_section(text: str, name: str, body: str, title: str | None = None) -> str:
    """Replace what is between the markers of `name`; append a new section if absent."""
    pat = re.compile(re.escape(marker(name, False)) + r".*?" + re.escape(marker(name, True)),
                     re.S)
    new = f"{marker(name, False)}\n{body.strip()}\n{marker(name, True)}"
    if pat.search(text):
        return pat.sub(lambda _m: new, text, count=1)
    if title is None:
        raise ValueError(f"no {name} markers in the document")
    return text.rstrip() + "\n" + suite_skeleton(title, name).replace(
        f"{marker(name, False)}\n_Not run yet._\n{marker(name, True)}", new)


def ensure_document(path: Path, suites: dict) -> str:
    """The current text, created with every suite's skeleton if the file is missing."""
    if path.is_file():
        return path.read_text()
    text = HEADER
    for s in suites.values():
        text += suite_skeleton(s.title, s.name)
    return text


# ----------------------------------------------------------------- machine line

def machine_body(facts: dict, suites_run: list, results_rel: str) -> str:
    return (f"Last run: {facts['date'][:10]} on `{facts['host']}`, suites "
            f"{', '.join(suites_run)}: {facts['cpu']}, {facts['cpus_allowed']} CPUs "
            f"(nproc {facts['nproc']}), {facts['mem_gib']} GiB, Linux {facts['kernel']}, "
            f"{facts['gxx']}. Machine file: [`{results_rel}/machine.txt`]({results_rel}/machine.txt).")


# ----------------------------------------------------------------- suite tables

def _cell(v: dict | None, failed: int) -> str:
    if not v:
        return "FAILED" if failed else "—"
    s = fmt_spread(v["median"], v["min"], v["max"]) if v["n"] > 1 else fmt(v["median"])
    if failed:
        s += f" ⚠{failed} failed"
    return s


def _ratio_cell(r: dict | None) -> str:
    if not r:
        return "—"
    s = fmt_ratio(r["median"])
    if r.get("vs_scenario"):
        s += f" (vs {r['vs_scenario']})"
    return s


def _failed_counts(summary: dict) -> dict:
    counts: dict = {}
    for f in summary["failures"]:
        key = (f["scenario"], f["threads"], f["runtime"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def table(summary: dict, kind: str = "") -> list:
    """Markdown lines of the main table (kind "") or the strace table (kind "strace")."""
    rows = [r for r in summary["rows"] if r["kind"] == kind]
    if not rows:
        return []
    rts = summary["runtimes"]
    peers = rts[1:] if rts and rts[0] == "saturn" else rts
    show_threads = len({r["threads"] for r in rows}) > 1 or summary["suite"] in ("echo", "http")
    fails = _failed_counts(summary)
    head = ["scenario"] + (["threads"] if show_threads else []) + ["figure", "better"] + \
        rts + [f"saturn/{p}" for p in peers if "saturn" in rts]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["scenario"]] + ([str(r["threads"])] if show_threads else []) + \
            [label(r["figure"]), arrow(r["figure"])]
        cells += [_cell(r["values"].get(rt), fails.get((r["scenario"], r["threads"], rt), 0))
                  for rt in rts]
        if "saturn" in rts:
            cells += [_ratio_cell(r["ratios"].get(p)) for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _unpaired_lines(summary: dict) -> list:
    """Scenarios where saturn and the peers reported different thread counts."""
    seen: dict = {}
    for r in summary["rows"]:
        if r["kind"]:
            continue
        for rt in r["values"]:
            side = "saturn" if rt == "saturn" else "peers"
            seen.setdefault(r["scenario"], {"saturn": set(), "peers": set()})[side].add(r["threads"])
    out = []
    for scenario, t in seen.items():
        if t["saturn"] and t["peers"] and not t["saturn"] & t["peers"]:
            out.append(f"- {scenario}: saturn ran with {', '.join(map(str, sorted(t['saturn'])))} "
                       f"thread(s), the peers with {', '.join(map(str, sorted(t['peers'])))}; "
                       "not paired, so no ratio.")
    return ["", "Not compared:", ""] + out if out else []


def _baseline_lines(summary: dict) -> list:
    """Ratios of saturn scenarios against other saturn scenarios (suite.baselines)."""
    out = []
    for r in summary["rows"]:
        sr = r.get("self_ratio")
        if not sr:
            continue
        spread = f" ({fmt_ratio(sr['min'])}–{fmt_ratio(sr['max'])})" if sr["n"] > 1 else ""
        out.append(f"- {r['scenario']} ÷ {sr['vs_scenario']} ({label(r['figure'])} {arrow(r['figure'])}): "
                   f"{fmt_ratio(sr['median'])}{spread}")
    return ["", "Within saturn (same run, pair by pair per round):", ""] + out if out else []


def _failure_lines(summary: dict) -> list:
    if not summary["failures"]:
        return []
    out = ["", "Failed runs (not counted in any number above):", ""]
    for f in summary["failures"][:40]:
        out.append(f"- round {f['round']}, {f['runtime']}, {f['scenario']}"
                   f"{'' if f['threads'] is None else ' (threads ' + str(f['threads']) + ')'}: "
                   f"{f['reason']}")
    if len(summary["failures"]) > 40:
        out.append(f"- … {len(summary['failures']) - 40} more in the raw JSON Lines")
    return out


def _noisy_lines(summary: dict) -> list:
    noisy = summary["noisy_runs"]
    if not noisy:
        return []
    total = summary.get("runs_with_load_figure") or len(noisy)
    worst = max(n["other_cpu_pct"] for n in noisy)
    shown = ", ".join(f"round {n['round']} {n['runtime']}"
                      f"{' ' + n['scenario'] if n.get('scenario') else ''} "
                      f"({n['other_cpu_pct']:.0f}%)" for n in noisy[:8])
    more = f", and {len(noisy) - 8} more" if len(noisy) > 8 else ""
    return ["", f"{len(noisy)} of {total} runs (of those long enough to tell, ≥ 1 s) ran while "
                f"other processes used more than {stats.NOISY_PCT:.0f} % of one CPU (up to "
                f"{worst:.0f} %; numbers kept, treat them with care): {shown}{more}."]


def _threads(summary: dict) -> str:
    seen = sorted({r["threads"] for r in summary["rows"] if r["kind"] == ""})
    return ", ".join(str(t) for t in seen) or str(summary.get("threads", "?"))


def _how(summary: dict) -> str:
    p = summary.get("params") or {}
    if not p:
        return "run parameters not recorded"
    if summary["suite"] == "walk":
        return f"hyperfine `-N --warmup 3 --runs {p.get('runs')}` per round"
    if summary["suite"] in ("echo", "http", "tls", "arena"):
        return (f"`DURATION={p.get('duration')} WARMUP={p.get('warmup')} "
                f"SAMPLES={p.get('samples')}` per run")
    return f"each run `--samples {p.get('samples')} --warmup {p.get('warmup')}`"


def _params_line(summary: dict, results_rel: str) -> str:
    return (f"_{(summary.get('date') or '')[:10]} on `{summary.get('host') or '?'}`: "
            f"{summary['rounds_seen']} interleaved round(s), {_how(summary)}, "
            f"threads {_threads(summary)}. Raw data: "
            f"[`{results_rel}/{summary['suite']}.jsonl`]({results_rel}/{summary['suite']}.jsonl)._")


def _relink(line: str, note: Path, doc: Path) -> str:
    """Relative Markdown links of a note, rewritten to point from doc to the same file."""
    def fix(m: re.Match) -> str:
        target = m.group(2)
        if re.match(r"^([a-z]+:|/|#)", target):
            return m.group(0)
        return f"{m.group(1)}({relpath(note.parent / target, doc)})"
    return re.sub(r"(\]\s?)\(([^)\s]+)\)", fix, line)


def fairness_lines(notes: dict, doc: Path) -> list:
    """Each peer's fairness note (bench/peers/<suite>/<runtime>/README.md), its title
    dropped, its headings turned into bold lines so they stay inside the section, and
    its relative links pointed at the same files from docs/."""
    if not notes:
        return []
    out = ["", "#### The peers"]
    for runtime, path in notes.items():
        text = path.read_text().strip().splitlines()
        if text and text[0].startswith("#"):
            text = text[1:]
        while text and not text[0].strip():
            text.pop(0)
        rel = relpath(path, doc)
        out += ["", f"**{runtime}** ([`{rel.lstrip('./')}`]({rel})):", ""]
        for line in text:
            m = re.match(r"^#+\s+(.*)", line)
            out.append(f"**{m.group(1)}**" if m else _relink(line, path, doc))
    return out


def failed_summary_lines(data: dict, suites_run: list) -> list:
    """One line per suite with FAILED runs: which runtimes, scenarios, how many."""
    out = []
    for name in suites_run:
        fails = data.get(name, {}).get("failures", [])
        if not fails:
            continue
        by_rt: dict = {}
        for f in fails:
            by_rt.setdefault(f["runtime"], set()).add(f["scenario"])
        parts = [f"{rt} ({', '.join(sorted(map(str, sc)))})" for rt, sc in sorted(
            by_rt.items(), key=lambda kv: (kv[0] != "saturn", kv[0]))]
        out.append(f"- {name}: {len(fails)} FAILED run(s): {'; '.join(parts)}")
    if not out:
        return []
    return ["", "Runs that FAILED their checks in this session (never counted as numbers; "
                "the reasons are under each suite's table):", ""] + out


def suite_body(suite, summary: dict, results_rel: str, plot_rel: str | None,
               notes: dict | None = None, doc: Path | None = None) -> str:
    lines = [_params_line(summary, results_rel), ""]
    if suite.note:
        lines += [suite.note, ""]
    main = table(summary)
    lines += main or ["_No run passed its checks._"]
    strace = table(summary, "strace")
    if strace:
        lines += ["", "System calls of one walk of the deep tree (`strace -f -c`; openat(2) counts openat and openat2):", ""] + strace
    if plot_rel:
        lines += ["", f"![{suite.name}: saturn against its peers]({plot_rel})"]
    lines += _baseline_lines(summary)
    lines += _unpaired_lines(summary) + _failure_lines(summary) + _noisy_lines(summary)
    if notes and doc is not None:
        lines += fairness_lines(notes, doc)
    return "\n".join(lines)


def has_percentiles(summary: dict) -> bool:
    return any(r["figure"] in PERCENTILES for r in summary["rows"])


def relpath(target: Path, doc: Path) -> str:
    return os.path.relpath(target, doc.parent)
