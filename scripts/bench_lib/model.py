"""The data model shared by the runner's modules: parameters, runtimes, steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .common import Paths

if TYPE_CHECKING:
    from .suites import Suite


@dataclass(frozen=True)
class Params:
    """How much to measure. samples/warmup go to the program; rounds are ours."""

    rounds: int
    samples: int = 1
    warmup: int = 1
    duration: int = 0  # echo/http: seconds per measured window
    runs: int = 0  # walk: hyperfine --runs
    warmup_big: int | None = None  # ring: --warmup of the 1,000,000 rung (None: warmup)
    children: int = 0  # process: children per sample (0: the programs' 10,000)
    smoke: bool = False  # the CI check: smallest ring rungs, one server thread count


@dataclass(frozen=True)
class Runtime:
    name: str  # as printed in the JSON `runtime` field
    path: Path
    missing: str = ""  # why it cannot run (a peer that did not build); "" when it can


@dataclass
class Step:
    suite: str
    kind: str  # program | walk-prepare | walk-time | walk-strace
    runtime: str  # "" for steps that cover several runtimes (walk)
    job: str
    argv: list
    threads: int
    est_s: float
    timeout: float
    scenarios: tuple = ()
    env: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)
    round: int = 0

    @property
    def key(self) -> tuple:
        return (self.suite, self.kind, self.job, self.runtime)


@dataclass
class SuiteRun:
    """One suite as it will be run now."""

    suite: "Suite"
    paths: Paths
    params: Params
    threads: int
    quiet_wait: float
    runtimes: list = field(default_factory=list)  # saturn first
    only: tuple = ()  # --profiles: the arena profiles or tls scenarios to run (empty: all)

    @property
    def name(self) -> str:
        return self.suite.name

    def runtime(self, name: str) -> "Runtime | None":
        return next((rt for rt in self.runtimes if rt.name == name), None)


def runtime_order(runtimes: list, rnd: int) -> list:
    """Odd rounds: saturn, peers...; even rounds: peers reversed, then saturn."""
    return list(runtimes) if rnd % 2 == 1 else list(reversed(runtimes))
