#!/usr/bin/env python3
"""netrun_test.py ECHO_LOAD: scripts/bench_lib/netrun.py against small fake servers.

The echo and http suites must record a run only when the server's answers are right:
every echoed byte, every route's status, headers and body, 404 for an unknown path,
and /delay/{ms} never early. Each case starts one fake server (this file with --serve)
through netrun, exactly as `make bench` starts a peer, and checks which scenarios came
back FAILED and why; afterwards no fake server may be left running. Needs wrk and the
echo-load binary given on the command line. About 15 s.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------- the fake servers

async def echo(reader, writer, corrupt: bool) -> None:
    seen = 0
    while data := await reader.read(65536):
        seen += len(data)
        if corrupt and seen > 2000:  # a few messages in: one wrong byte
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        writer.write(data)
        await writer.drain()


ROUTES = {"/plaintext": ("text/plain", b"Hello, World!"),
          "/json": ("application/json", b'{"message":"Hello, World!"}')}


async def http(reader, writer, kind: str) -> None:
    while line := await reader.readline():
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        path = line.split()[1].decode()
        status, ctype, body = 404, "text/plain", b"not found"
        if path in ROUTES:
            status, (ctype, body) = 200, ROUTES[path]
        elif path.startswith("/delay/"):
            ms = int(path[len("/delay/"):])
            await asyncio.sleep(0 if kind == "early" else ms / 1000)
            status, ctype, body = 200, "text/plain", str(ms).encode()
        elif kind == "no404":
            status = 200
        length = len(body) + (1 if kind == "badlength" and path == "/json" else 0)
        head = (f"HTTP/1.1 {status} X\r\nServer: fake\r\nDate: {email.utils.formatdate(usegmt=True)}"
                f"\r\nContent-Type: {ctype}\r\nContent-Length: {length}\r\n\r\n")
        writer.write(head.encode() + body + (b"!" if length > len(body) else b""))
        await writer.drain()


def serve(kind: str, argv: list) -> None:
    port = int(argv[argv.index("--port") + 1])
    if kind.startswith("echo"):
        handler = lambda r, w: echo(r, w, kind == "echo-corrupt")  # noqa: E731
    else:
        handler = lambda r, w: http(r, w, kind)  # noqa: E731

    async def main() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", port, backlog=2048)
        async with server:
            await server.serve_forever()
    asyncio.run(main())


# ----------------------------------------------------------------- the cases

def run_case(tmp: Path, paths, suite_name: str, kind: str, scenarios: tuple,
             context: dict | None = None) -> dict:
    """{scenario: reason or ""} of one step against the fake server `kind`."""
    from bench_lib.execute import execute
    from bench_lib.model import Runtime, SuiteRun
    from bench_lib.suites import SUITES

    server = tmp / f"fake-{kind}"
    server.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} --serve {kind} \"$@\"\n")
    server.chmod(0o755)
    suite = SUITES[suite_name]
    run = SuiteRun(suite, paths, suite.smoke, 1, 0.0, [Runtime("fake", server)])
    step = replace(suite.make_steps(run, run.runtimes[0])[0], scenarios=scenarios, round=1)
    step.context.update(context or {})
    records = execute(step, run, tmp)
    return {r["scenario"]: r.get("reason", "") if r.get("failed") else "" for r in records}


def leftovers(tmp: Path) -> list:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if str(tmp).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(int(pid))
        except OSError:
            pass
    return out


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3:])
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO / "scripts"))
    from bench_lib.common import Paths

    tmp = Path(tempfile.mkdtemp(prefix="netrun-test-"))
    failures = []
    try:
        paths = Paths.discover(REPO)
        paths.peers = tmp / "peers"
        (paths.peers / "bin").mkdir(parents=True)
        os.symlink(Path(sys.argv[1]).resolve(), paths.peer("echo-load"))
        shutil.copytree(REPO / "bench" / "peers" / "wrk", paths.peer_share("wrk"))

        def expect(suite: str, kind: str, scenarios: tuple, want: dict,
                   context: dict | None = None) -> None:
            got = run_case(tmp, paths, suite, kind, scenarios, context)
            for sc, needle in want.items():
                reason = got.get(sc)
                ok = reason == "" if needle is None else (reason or "").find(needle) >= 0
                print(f"{'ok  ' if ok else 'FAIL'} {suite} {kind} {sc}: {reason or 'passed'}")
                if not ok:
                    failures.append(f"{suite} {kind} {sc}: want "
                                    f"{'a pass' if needle is None else repr(needle)}, got {reason!r}")
            if leftovers(tmp):
                failures.append(f"{kind}: processes left running: {leftovers(tmp)}")

        expect("echo", "echo", ("single", "few-large"), {"single": None, "few-large": None})
        expect("echo", "echo-corrupt", ("few-large",), {"few-large": "load generator exit status"})
        expect("http", "good", ("plaintext", "json", "delay"),
               {"plaintext": None, "json": None, "delay": None})
        # An answer at once to /delay/200: early by far more than any loaded machine's lag.
        expect("http", "early", ("delay",), {"delay": "before the 200 ms asked"}, {"delay_ms": 200})
        expect("http", "badlength", ("plaintext", "json"),
               {"plaintext": None, "json": "want b'{\"message\""})
        expect("http", "no404", ("json",), {"json": "want 404"})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print(f"netrun_test: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
