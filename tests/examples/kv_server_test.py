"""examples/kv_server, driven for real: several concurrent clients agree with a model of
the store across the shards; an idle connection is closed after --idle-ms; on SIGTERM it
refuses new connections, answers the request in flight, and exits 0."""
import random
import socket
import sys
import threading
import time

from driver import check, fail, program

IDLE_MS = 1000
CLIENTS = 8
OPS = 300


class conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def line(self):
        while b"\n" not in self.buf:
            got = self.s.recv(4096)
            if not got:
                return None
            self.buf += got
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def ask(self, req):
        self.s.sendall(req.encode() + b"\n")
        return self.line()


def client(port, n, model, errors):
    """Random SET/GET/DEL on keys of its own, checked against a dict as it goes."""
    rng = random.Random(n)
    c = conn(port)
    mine = {}
    for i in range(OPS):
        key = f"c{n}-k{rng.randrange(60)}"
        op = rng.choice("SSGGD")
        if op == "S":
            value = f"v{i} of {n}"  # values with spaces
            want, mine[key] = "OK", value
            got = c.ask(f"SET {key} {value}")
        elif op == "G":
            want = f"VALUE {mine[key]}" if key in mine else "NOT_FOUND"
            got = c.ask(f"GET {key}")
        else:
            want = "DELETED" if mine.pop(key, None) is not None else "NOT_FOUND"
            got = c.ask(f"DEL {key}")
        if got != want:
            errors.append(f"client {n} op {i} on {key}: got {got!r}, want {want!r}")
            return
    model.update(mine)


def main(binary):
    with program([binary, "--port", "0", "--threads", "4", "--idle-ms", str(IDLE_MS)]) as p:
        # 1. Concurrent clients, then one client reads every key back and the shards' counts.
        model, errors = {}, []
        threads = [threading.Thread(target=client, args=(p.port, n, model, errors)) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        check(not errors, "; ".join(errors[:3]))
        check(all(not t.is_alive() for t in threads), "a client hung")
        check(len(model) > 100, f"too few keys to check the shards: {len(model)}")
        c = conn(p.port)
        for key, value in model.items():
            got = c.ask(f"GET {key}")
            check(got == f"VALUE {value}", f"read back {key}: {got!r}")
        stats = c.ask("STATS").split()
        check(stats[0] == "KEYS" and len(stats) == 5, f"STATS: {stats}")
        per_shard = [int(x) for x in stats[1:]]
        check(sum(per_shard) == len(model), f"shards hold {per_shard}, the model {len(model)} keys")
        check(sum(1 for k in per_shard if k > 0) >= 3, f"keys not spread over the shards: {per_shard}")
        check(c.ask("PUT a b").startswith("ERROR"), "an unknown command is not an error")
        print(f"kv: {CLIENTS} clients x {OPS} ops agree; shards hold {per_shard}")

        # 2. Idle connections are closed after --idle-ms (one silent, one after a request).
        silent, talker = conn(p.port), conn(p.port)
        t0 = time.monotonic()
        check(talker.ask("GET nothing") == "NOT_FOUND", "GET of a missing key")
        check(silent.line() is None, "the silent connection got data")
        t_silent = time.monotonic() - t0
        check(talker.line() is None, "the talker's connection got data")
        check(IDLE_MS / 1000 * 0.9 <= t_silent <= IDLE_MS / 1000 + 2, f"idle close after {t_silent:.2f} s")
        print(f"kv: idle connection closed after {t_silent:.2f} s (--idle-ms {IDLE_MS})")

        # 3. SIGTERM: a request half sent when the signal comes is still answered; new
        # connections are refused; the program exits 0 once the connections are done.
        inflight, idle = conn(p.port), conn(p.port)
        check(inflight.ask("SET inflight 1") == "OK", "warm-up SET")
        inflight.s.sendall(b"SET inflight yes")  # no newline yet
        time.sleep(0.05)
        p.signal()
        t_sig = time.monotonic()
        time.sleep(0.15)
        try:
            socket.create_connection(("127.0.0.1", p.port), timeout=2).close()
            fail("a connection was accepted after SIGTERM")
        except ConnectionRefusedError:
            pass
        inflight.s.sendall(b"\n")
        t_done = time.monotonic()
        check(inflight.line() == "OK", "the in-flight request was not answered")
        check(inflight.line() is None, "the connection got more data after its last request")
        t_closed = time.monotonic() - t_done
        # Closed right after its answer, not at its idle timeout: draining ends connections.
        check(t_closed < IDLE_MS / 1000 / 2, f"closed {t_closed:.2f} s after its last answer while draining")
        status = p.wait(IDLE_MS / 1000 + 5)
        t_exit = time.monotonic() - t_sig
        check(idle.line() is None, "the idle connection was not closed")
        err = p.stderr()
        check(status == 0, f"exit status {status}; stderr: {err!r}")
        check("draining" in err, f"stderr: {err!r}")
        print(f"kv: SIGTERM answered the in-flight request, exit 0 after {t_exit:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
