"""Shared by the example drivers: start one program, read the line it prints once it
listens, stop it, and never leave it running (only the PID started here is signalled)."""
import os
import re
import signal
import subprocess
import sys
import time


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class program:
    """`with program([bin, args...]) as p:` starts it; p.port is the port from its
    "listening on 127.0.0.1:PORT" line. Leaving the block kills it if it still runs."""

    def __init__(self, argv, startup_s=10):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + startup_s
        line = self.proc.stdout.readline()  # the program flushes it once it listens
        if time.monotonic() > deadline or not line:
            self.kill()
            fail(f"{argv[0]} did not say where it listens: {line!r} {self.proc.stderr.read()!r}")
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not m:
            self.kill()
            fail(f"unexpected first line {line!r}")
        self.port = int(m.group(1))

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def wait(self, timeout_s):
        """The exit status, or fails if it has not exited within timeout_s."""
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            fail(f"the program did not exit within {timeout_s} s")

    def stderr(self):
        return self.proc.stderr.read() if self.proc.poll() is not None else ""

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
