#!/usr/bin/env python3
"""unstick_test.py: run_process's Unstick (scripts/bench_lib/common.py) and the arena
suite's use of it for h2load's stray connections (scripts/bench_lib/arena.py).

A child that has finished its work but does not exit must be unstuck once, after the
grace period, and its output kept; a child that exits by itself must not be touched; a
child that never finishes still times out. The h2load case uses a real TCP connection:
a fake "h2load" prints "Stopped all clients" for both threads and then blocks on a
connection to a local listener; the runner's ss -K must end that connection so the fake
prints its result and exits (skipped unless root and ss are there: SOCK_DESTROY needs
CAP_NET_ADMIN). About 5 s.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_lib import check, finish  # noqa: E402  (puts scripts/ on sys.path)

from bench_lib import arena  # noqa: E402
from bench_lib.common import Unstick, run_process  # noqa: E402


def ss_kill_works() -> bool:
    """Whether ss -K ends a loopback connection on this machine (CONFIG_INET_DIAG_DESTROY)."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    port = lst.getsockname()[1]
    c = socket.create_connection(("127.0.0.1", port))
    peer, _ = lst.accept()
    try:
        subprocess.run(["ss", "-K", "-tn", "state", "established", f"( dport = :{port} )"],
                       capture_output=True, timeout=10)
        c.settimeout(2)
        try:
            return c.recv(1) == b""
        except OSError:
            return True  # ECONNABORTED: destroyed
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        for x in (c, peer, lst):
            x.close()


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="saturn-unstick-test-"))
    log = tmp / "run.log"
    try:
        # 1. Done, then stuck until a file appears: act() makes the file.
        flag = tmp / "go"
        child = [sys.executable, "-c",
                 "import os,sys,time\nprint('work done', flush=True)\n"
                 f"while not os.path.exists({str(flag)!r}): time.sleep(0.02)\nprint('result 42')"]
        acted = []

        def act() -> str:
            acted.append(time.monotonic())
            flag.touch()
            return "made the flag"
        t0 = time.monotonic()
        r = run_process(child, timeout=20, log_path=log, header="stuck child",
                        unstick=Unstick(done=lambda out: "work done" in out, act=act, grace_s=0.3))
        wall = time.monotonic() - t0
        check(r.returncode == 0 and not r.error, f"the unstuck child exits normally (rc {r.returncode}, {r.error!r})")
        check(r.unstuck == "made the flag", f"the note is kept ({r.unstuck!r})")
        check(len(acted) == 1, f"act() called once ({len(acted)})")
        check("work done" in r.stdout and "result 42" in r.stdout, f"the whole output is kept ({r.stdout!r})")
        check(0.3 <= wall < 5, f"unstuck after the grace, not at the timeout ({wall:.2f} s)")

        # 2. A child that exits by itself right after 'done' is never touched.
        acted.clear()
        r = run_process([sys.executable, "-c", "print('work done'); print('result 7')"], timeout=20,
                        log_path=log, header="clean child",
                        unstick=Unstick(done=lambda out: "work done" in out, act=act, grace_s=0.5))
        check(r.returncode == 0 and not r.unstuck and not acted, f"a child that exits is left alone ({r.unstuck!r})")
        check("result 7" in r.stdout, "its output is kept")

        # 3. A child that never says it is done still times out.
        t0 = time.monotonic()
        r = run_process([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1.5, log_path=log,
                        header="hung child", unstick=Unstick(done=lambda out: "work done" in out, act=act))
        check(r.returncode is None and "timed out" in r.error and not acted,
              f"a child never done times out ({r.error!r}, {time.monotonic() - t0:.1f} s)")

        # 4. h2load's stray connection, ended with ss -K.
        if os.geteuid() != 0 or shutil.which("ss") is None:
            print("skip h2load case: needs root and ss (iproute2)")
        elif not ss_kill_works():
            print("skip h2load case: ss -K cannot end a socket here (kernel without SOCK_DESTROY?)")
        else:
            lst = socket.socket()
            lst.bind(("127.0.0.1", 0))
            lst.listen(4)
            port = lst.getsockname()[1]
            fake = [sys.executable, "-c",
                    "import socket,sys\n"
                    f"s=socket.create_connection(('127.0.0.1',{port}))\n"
                    "print('Stopped all clients for thread #0'); print('Stopped all clients for thread #1')\n"
                    "sys.stdout.flush()\n"
                    "try:\n  s.recv(1)\nexcept OSError:\n  pass\n"
                    "print('finished in 1.00s, 100.00 req/s, 1KB/s')"]
            t0 = time.monotonic()
            r = run_process(fake, timeout=20, log_path=log, header="fake h2load",
                            unstick=arena._h2load_unstick(port, 2))
            wall = time.monotonic() - t0
            lst.close()
            check(r.returncode == 0 and "finished in" in r.stdout,
                  f"the stray connection was ended and the fake printed its result (rc {r.returncode}, {r.error!r})")
            check("closed its 1 remaining connection" in r.unstuck, f"the note counts it ({r.unstuck!r})")
            check(wall < 5, f"within the grace, not the timeout ({wall:.2f} s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
