"""Paths, logging, machine facts and the one place that starts benchmark processes.

Every benchmark process is started by run_process(): stdout is captured (JSON Lines),
stderr is appended to a per-suite log file under a header line, and around the run the
machine's busy time (/proc/stat) and the child's own CPU time (RUSAGE_CHILDREN) are
read, so that each run carries an estimate of how much CPU *other* processes took while
it ran (`run_other_cpu_pct`, 100 = one full CPU). Processes run in their own session;
on a timeout or Ctrl-C only that process group (ours, by its id) is signalled.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SUITES = ("loop", "spawn", "sched", "ring", "walk", "echo", "http")


def log(msg: str) -> None:
    """One diagnostic line on stderr, prefixed like the progress lines."""
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


class BenchError(Exception):
    """A problem the user must fix (missing tool, bad argument); printed without a trace."""


@dataclass
class Paths:
    """Where everything is, all inside the checkout. SATURN_BIN_DIR overrides where
    saturn's programs are; the peers are built into build/peers by bench/peers/build.sh."""

    repo: Path
    bin_dir: Path
    peers: Path = field(init=False)
    walk_trees: Path = field(init=False)

    def __post_init__(self) -> None:
        self.peers = self.repo / "build" / "peers"
        self.walk_trees = self.repo / "build" / "walk-trees"

    @classmethod
    def discover(cls, repo: Path | None = None) -> "Paths":
        repo = (repo or Path(__file__).resolve().parents[2]).resolve()
        bin_dir = Path(os.environ.get("SATURN_BIN_DIR") or repo / "build" / "release" / "bin")
        return cls(repo=repo, bin_dir=bin_dir.resolve())

    @property
    def peers_build(self) -> Path:
        """The dispatcher that builds every peer and the runner's load tools."""
        return self.repo / "bench" / "peers" / "build.sh"

    def saturn(self, name: str) -> Path:
        return self.bin_dir / name

    def peer(self, name: str) -> Path:
        return self.peers / "bin" / name

    def peer_share(self, *parts: str) -> Path:
        """Support files of the peers and load tools (build/peers/share/peers/...)."""
        return self.peers.joinpath("share", "peers", *parts)

    def fairness_note(self, suite: str, runtime: str) -> Path:
        """The peer's README.md: what it is, its configuration, why it is written so."""
        return self.repo / "bench" / "peers" / suite / runtime / "README.md"


def is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def cpus() -> int:
    """CPUs this process may run on (the contract's default --threads)."""
    return len(os.sched_getaffinity(0))


def today() -> str:
    return _dt.date.today().isoformat()


def now_iso() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def hostname() -> str:
    return socket.gethostname().split(".")[0] or "host"


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_facts() -> dict:
    """The facts machine.txt and the docs' machine line report."""
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpu": cpu_model(),
        "nproc": os.cpu_count() or 0,
        "cpus_allowed": cpus(),
        "kernel": platform.release(),
        "gxx": _first_line(["g++", "--version"]),
        "mem_gib": round(mem_kib / 1048576, 1),
        "host": hostname(),
        "date": now_iso(),
    }


def machine_text(facts: dict) -> str:
    return "".join(f"{k}: {facts[k]}\n" for k in
                   ("cpu", "nproc", "cpus_allowed", "kernel", "gxx", "mem_gib", "host", "date"))


# ----------------------------------------------------------------- machine load

def _proc_stat_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine; busy excludes idle and iowait."""
    with open("/proc/stat") as f:
        parts = f.readline().split()
    vals = [int(v) for v in parts[1:9]]
    total = sum(vals)
    return total - vals[3] - vals[4], total


def busy_pct(interval: float = 0.5) -> float:
    """Share of all CPUs that was busy over `interval` seconds, in percent."""
    b0, t0 = _proc_stat_jiffies()
    time.sleep(interval)
    b1, t1 = _proc_stat_jiffies()
    return 100.0 * (b1 - b0) / max(1, t1 - t0)


_quiet_budget: list = [None, None]  # [seconds of waiting left, the whole budget]; None: no cap


def set_quiet_budget(seconds: float | None) -> None:
    """Cap the time all wait_quiet() calls of this session may spend waiting (quick mode:
    a busy machine must not add minutes to every suite); None: no cap."""
    _quiet_budget[:] = [seconds, seconds]


FIRST_LOOK_S = 0.12  # wait_quiet's first look at the machine (free of the waiting budget)
RECENT_RUN_S = 3.0  # how long a finished run's others'-load figure stands in for a look

_last_other: list = [None, 0.0]  # [others' CPU (% of one CPU) in the last run, when it ended]
quiet_looks = {"looked": 0, "taken": 0, "waited_s": 0.0}  # wait_quiet's calls, for the log


def note_other_load(pct: float | None) -> None:
    """Record what other processes took during a run of ours that just ended (% of one
    CPU, measured over the whole run, at least a second). For RECENT_RUN_S the next
    wait_quiet() takes it instead of a look of its own: a measurement over the run just
    ended is a longer look at the same machine than FIRST_LOOK_S. A make bench makes
    about 420 looks (~50 s at FIRST_LOOK_S each); 303 of them were taken this way in the
    run of 2026-12-06. None forgets the last figure."""
    _last_other[:] = [pct, time.monotonic()]


def wait_quiet(max_wait: float, pct: float = 10.0) -> float:
    """Wait up to max_wait seconds until under pct % of the machine is busy.

    Returns the last busy percentage seen (0 when max_wait is 0: no check). Time spent
    beyond the first look comes out of the session's budget; once that is used up, runs
    start without waiting."""
    budget = _quiet_budget[0]
    if max_wait <= 0 or (budget is not None and budget <= 0):
        return 0.0
    t0 = time.monotonic()
    last, ended = _last_other
    if last is not None and t0 - ended < RECENT_RUN_S:
        _last_other[0] = None  # stands in for one look only
        machine = last / (os.cpu_count() or 1)
        if machine < pct:
            quiet_looks["taken"] += 1
            return machine
    quiet_looks["looked"] += 1
    deadline = t0 + (max_wait if budget is None else min(max_wait, budget + FIRST_LOOK_S))
    # The first look is short (a quiet machine is the common case and every run pays it);
    # the later ones, while waiting, are half a second each.
    b = busy_pct(FIRST_LOOK_S)
    while b >= pct and time.monotonic() < deadline:
        b = busy_pct()
    quiet_looks["waited_s"] += time.monotonic() - t0
    if budget is not None:
        _quiet_budget[0] = budget - max(0.0, time.monotonic() - t0 - FIRST_LOOK_S)
        if _quiet_budget[0] <= 0:
            log(f"the machine stayed busy: the {_quiet_budget[1]:.0f} s budget for waiting "
                "for a quiet machine is used up, later runs start at once (see each run's "
                "other-load figure)")
    return b


QUIET_BUDGET_QUICK_S = 180.0


# ----------------------------------------------------------------- processes

@dataclass
class ProcessResult:
    """What one benchmark process did."""

    argv: list[str]
    returncode: int | None  # None: killed after a timeout
    stdout: str
    wall_s: float
    other_cpu_pct: float | None  # None for runs under a second (too short to tell)
    error: str = ""  # set when the program could not be started or timed out
    unstuck: str = ""  # what run_process's Unstick did, if it had to act

    @property
    def ok(self) -> bool:
        return not self.error and self.returncode == 0


_current_pgid: int | None = None


def kill_current() -> None:
    """Stop the process group of the benchmark we started (on Ctrl-C or a timeout)."""
    global _current_pgid
    if _current_pgid is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(_current_pgid, sig)
        except ProcessLookupError:
            break
        time.sleep(1.0)
    _current_pgid = None


def install_signal_handlers() -> None:
    """Ctrl-C (also when started in the background) and SIGTERM end the runner cleanly:
    the benchmark process group we started is stopped before we exit."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(_signum, _frame) -> None:
    raise KeyboardInterrupt


def _children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class _LoadMeter:
    """How much CPU other processes took while our child ran: the machine's busy time
    (/proc/stat) minus the child's own (RUSAGE_CHILDREN, counted once it is reaped)."""

    def __init__(self) -> None:
        self.cpu0, self.busy0, self.t0 = _children_cpu_s(), _proc_stat_jiffies()[0], time.monotonic()

    def stop(self) -> tuple[float, float | None]:
        """(wall seconds, others' CPU in % of one CPU, or None for runs under a second:
        /proc/stat counts in clock ticks, so a shorter estimate is mostly noise)."""
        wall = time.monotonic() - self.t0
        busy_s = (_proc_stat_jiffies()[0] - self.busy0) / os.sysconf("SC_CLK_TCK")
        other = max(0.0, busy_s - (_children_cpu_s() - self.cpu0))
        pct = round(100.0 * other / wall, 1) if wall >= 1.0 else None
        note_other_load(pct)
        return wall, pct


def _wait(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """(stdout, error): the child's output; on a timeout its process group is stopped."""
    global _current_pgid
    _current_pgid = proc.pid
    try:
        out, _ = proc.communicate(timeout=timeout)
        error = ""
    except subprocess.TimeoutExpired:
        kill_current()
        out, _ = proc.communicate()
        error = f"timed out after {timeout:.0f} s"
    except BaseException:  # Ctrl-C, SIGTERM: stop the benchmark, then let it propagate
        kill_current()
        proc.wait()
        raise
    _current_pgid = None
    return out or "", error


@dataclass
class Unstick:
    """A remedy for a child that has finished its work but does not exit (h2load 1.52
    after -D with a few connections left running): once `done(stdout so far)` is true
    and the child still runs `grace_s` later, `act()` is called once; the note it
    returns is kept in ProcessResult.unstuck."""

    done: object  # Callable[[str], bool]
    act: object  # Callable[[], str]
    grace_s: float = 0.5


def _wait_unstick(proc: subprocess.Popen, timeout: float, unstick: Unstick) -> tuple[str, str, str]:
    """_wait() that reads stdout as it comes and applies `unstick`: (stdout, error, note)."""
    global _current_pgid
    _current_pgid = proc.pid
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    start, done_at, note, error = time.monotonic(), None, "", ""
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if now - start > timeout:
                kill_current()
                error = f"timed out after {timeout:.0f} s"
                break
            if done_at is None and unstick.done("".join(chunks)):
                done_at = now
            if done_at is not None and not note and now - done_at >= unstick.grace_s:
                note = unstick.act() or "unstuck"
            time.sleep(0.05)
        proc.wait()
    except BaseException:  # as _wait
        kill_current()
        proc.wait()
        raise
    reader.join()
    _current_pgid = None
    return "".join(chunks), error, note


def run_process(argv: list[str], *, env: dict | None = None, timeout: float,
                log_path: Path, header: str, cwd: Path | None = None,
                unstick: Unstick | None = None) -> ProcessResult:
    """Run argv to completion in its own session; stdout captured, stderr appended to
    log_path under a header with the command line. `unstick`: see Unstick."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    shown_env = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    with open(log_path, "a") as logf:
        logf.write(f"\n===== {now_iso()} {header}\n$ {shown_env + ' ' if shown_env else ''}"
                   f"{shlex.join(argv)}\n")
        logf.flush()
        meter = _LoadMeter()
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=logf, cwd=cwd, text=True,
                                    env={**os.environ, **(env or {})}, start_new_session=True)
        except OSError as e:
            logf.write(f"cannot start: {e}\n")
            return ProcessResult(argv, None, "", 0.0, None, f"cannot start {argv[0]}: {e}")
        note = ""
        if unstick is None:
            out, error = _wait(proc, timeout)
        else:
            out, error, note = _wait_unstick(proc, timeout, unstick)
            if note:
                logf.write(f"----- {note}\n")
        wall, other_pct = meter.stop()
        rc = None if error else proc.returncode
        load = "" if other_pct is None else f", other load {other_pct:.0f}% of one CPU"
        logf.write(f"----- exit {'killed' if rc is None else rc}, {wall:.1f} s{load}"
                   f"{'; ' + error if error else ''}\n")
    return ProcessResult(argv, rc, out, wall, other_pct, error, note)


def which(name: str) -> str | None:
    return shutil.which(name)
