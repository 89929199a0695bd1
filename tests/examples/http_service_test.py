"""examples/http_service, driven for real: each route answers as documented (the JSON
route parsed as JSON, the timing middleware on every answer), the slow route past its
200 ms deadline gets 504 within the deadline (not after the handler's full second), and
SIGTERM with a request in flight answers it and exits 0."""
import http.client
import json
import sys
import threading
import time

from driver import check, program

DEADLINE_S = 0.2


def get(port, path, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


def main(binary):
    with program([binary, "--port", "0"]) as p:
        status, headers, body = get(p.port, "/fast")
        check(status == 200 and body == b"fast\n", f"/fast: {status} {body!r}")
        check("x-handler-micros" in headers, f"/fast: no timing header: {headers}")

        status, _, body = get(p.port, "/slow?ms=20")
        check(status == 200 and body == b"slept 20 ms\n", f"/slow?ms=20: {status} {body!r}")

        t0 = time.monotonic()
        status, headers, _ = get(p.port, "/slow")  # the handler would take 1000 ms
        took = time.monotonic() - t0
        check(status == 504, f"/slow: {status}, expected 504")
        check(DEADLINE_S * 0.9 <= took < 0.8, f"/slow: 504 after {took:.3f} s, deadline {DEADLINE_S} s")
        check("x-handler-micros" in headers, "the middleware did not see the 504")
        print(f"http: /slow answered 504 after {took * 1000:.0f} ms (deadline {DEADLINE_S * 1000:.0f} ms)")

        status, headers, body = get(p.port, "/items/12")
        check(status == 200 and headers.get("content-type", "").startswith("application/json"),
              f"/items/12: {status} {headers}")
        check(json.loads(body) == {"id": 12, "name": "item 12", "square": 144}, f"/items/12: {body!r}")
        status, _, body = get(p.port, "/items/abc")
        check(status == 400 and "error" in json.loads(body), f"/items/abc: {status} {body!r}")
        status, _, _ = get(p.port, "/nothing-here")
        check(status == 404, f"/nothing-here: {status}")

        # Concurrent slow requests run side by side on the pool.
        results = []
        workers = [threading.Thread(target=lambda: results.append(get(p.port, "/slow?ms=100")[0])) for _ in range(16)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(10)
        check(results == [200] * 16, f"16 concurrent /slow?ms=100: {results}")
        print("http: routes answer; JSON parses; 16 concurrent slow requests all 200")

        # SIGTERM while a request is in flight: it still gets an answer, then exit 0.
        inflight = []
        t = threading.Thread(target=lambda: inflight.append(get(p.port, "/slow?ms=150")[0]))
        t.start()
        time.sleep(0.05)
        p.signal()
        t.join(10)
        status = p.wait(10)
        err = p.stderr()
        check(len(inflight) == 1 and inflight[0] in (200, 503), f"the in-flight request got {inflight}")
        check(status == 0, f"exit status {status}; stderr {err!r}")
        check("stopped" in err, f"stderr {err!r}")
        print(f"http: SIGTERM answered the in-flight request ({inflight[0]}), exit 0")


if __name__ == "__main__":
    main(sys.argv[1])
