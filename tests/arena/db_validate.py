#!/usr/bin/env python3
"""Check saturn-arena's database profiles (HttpArena async-db and crud) against a live
PostgreSQL cluster (pg_cluster.py, started by run_validate.sh with ARENA_PG=1).

Our re-implementation of HttpArena's validation checks for async-db and crud (c-... below,
as scripts/validate.sh runs them), plus extras (x-...): every answer compared with the
database's own rows (psql as the oracle), the cache's 200 ms absolute expiry, invalidation
by PUT and by an upsert, 404s, bad input answered 400 (never 500), a pool of
DATABASE_MAX_CONN under concurrent load, a stalled database (503 after the request's
timeout), and the database going away (503 at once) and coming back (answers again).

Usage: db_validate.py --host H --port P --pg-dir DIR [--db-timeout-ms T]
       (DIR: pg_cluster.py's folder; T: the server's --database-timeout-ms, for the stall)
       db_validate.py --host H --port P --no-db        (the server has no database)
Prints PASS/FAIL lines and a summary; exits 1 on any FAIL. Standard library only; every
wait is bounded.
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ITEM_KEYS = {"id", "name", "category", "price", "quantity", "active", "tags", "rating"}


class Checker:
    def __init__(self, host, port, pg_dir):
        self.host, self.port, self.pg_dir = host, port, pg_dir
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def result(self, name, ok, detail=""):
        """ok None: SKIP (the check could not tell on this machine)."""
        if ok is None:
            self.skipped += 1
        elif ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)
        tag = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        print(f"{tag} {name}" + (f": {detail}" if detail else ""), flush=True)

    def run(self, name, fn):
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - any error is the check's failure
            self.result(name, False, f"{type(e).__name__}: {e}")
            return
        ok, detail = out if isinstance(out, tuple) else (out, "")
        self.result(name, ok, detail)

    # ---- HTTP ----
    def request(self, method, path, body=None, timeout=15.0):
        """(status, headers dict lower-cased, body bytes) on a fresh connection."""
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            hdrs = {"Content-Type": "application/json"} if body is not None else {}
            data = body.encode() if isinstance(body, str) else body
            c.request(method, path, body=data, headers=hdrs)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def get_json(self, path):
        st, h, b = self.request("GET", path)
        if st != 200:
            raise AssertionError(f"GET {path}: status {st}: {b[:200]!r}")
        return json.loads(b), h

    # ---- the oracle ----
    def psql(self, sql):
        p = subprocess.run([sys.executable, os.path.join(HERE, "pg_cluster.py"), "psql", self.pg_dir, sql],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError(f"psql failed: {p.stderr.strip()}")
        return p.stdout.strip()

    def db_items(self, where):
        """The database's items for `where` (SQL after FROM items), as HttpArena's objects."""
        out = self.psql("SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'category', category,"
                        " 'price', price, 'quantity', quantity, 'active', active, 'tags', tags, 'rating',"
                        " json_build_object('score', rating_score, 'count', rating_count))), '[]')"
                        f" FROM (SELECT * FROM items {where}) AS t")
        return json.loads(out)


def item_shape(it):
    """'' if `it` is an HttpArena item (integers, no floats anywhere), else why not."""
    if not isinstance(it, dict) or set(it) != ITEM_KEYS:
        return f"keys {sorted(it) if isinstance(it, dict) else it!r}"
    for k in ("id", "price", "quantity"):
        if type(it[k]) is not int:
            return f"{k} {it[k]!r} is not an integer"
    if type(it["active"]) is not bool:
        return f"active {it['active']!r} is not a boolean"
    if not isinstance(it["tags"], list) or not all(isinstance(t, str) for t in it["tags"]):
        return f"tags {it['tags']!r} is not an array of strings"
    r = it["rating"]
    if not isinstance(r, dict) or set(r) != {"score", "count"} or any(type(v) is not int for v in r.values()):
        return f"rating {r!r}"
    return ""


def async_db(c):
    # c-asyncdb-limits: HttpArena's four combinations: count == limit, rating.score, tags
    # array, active boolean. x-: each item within the range and equal to the database's row.
    for mn, mx, lim in ((5, 80, 7), (20, 150, 18), (100, 400, 33), (10, 50, 50)):
        def one(mn=mn, mx=mx, lim=lim):
            d, _ = c.get_json(f"/async-db?min={mn}&max={mx}&limit={lim}")
            items = d.get("items", [])
            if d.get("count") != lim or len(items) != lim:
                return False, f"count {d.get('count')!r}, {len(items)} items, want {lim}"
            bad = [w for w in map(item_shape, items) if w]
            if bad:
                return False, bad[0]
            out = [i["id"] for i in items if not mn <= i["price"] <= mx]
            if out:
                return False, f"items {out[:5]} outside price {mn}..{mx}"
            ids = [i["id"] for i in items]
            if len(set(ids)) != len(ids):
                return False, "an item appears twice"
            want = {i["id"]: i for i in c.db_items(f"WHERE id IN ({','.join(map(str, ids))})")}
            diff = [i for i in items if want.get(i["id"]) != i]
            return not diff, f"item differs from the database: {diff[0]!r} vs {want.get(diff[0]['id'])!r}" if diff else ""
        c.run(f"c-asyncdb-limits min={mn}&max={mx}&limit={lim}", one)

    def ctype():
        st, h, _ = c.request("GET", "/async-db?min=10&max=50&limit=50")
        return st == 200 and h.get("content-type", "").split(";")[0] == "application/json", f"{st} {h.get('content-type')}"
    c.run("c-asyncdb-content-type application/json", ctype)

    def empty():
        d, _ = c.get_json("/async-db?min=9999&max=9999&limit=50")
        return d == {"items": [], "count": 0}, f"{d!r}"
    c.run("c-asyncdb-empty-range count 0", empty)

    def defaults():
        d, _ = c.get_json("/async-db")
        items = d["items"]
        return (d["count"] == 50 and len(items) == 50 and all(10 <= i["price"] <= 50 for i in items),
                f"count {d['count']}")
    c.run("x-asyncdb-defaults min=10 max=50 limit=50", defaults)

    def clamp():
        hi, _ = c.get_json("/async-db?min=1&max=500&limit=500")
        lo, _ = c.get_json("/async-db?min=1&max=500&limit=0")
        return hi["count"] == 50 and lo["count"] == 1, f"limit=500 -> {hi['count']}, limit=0 -> {lo['count']}"
    c.run("x-asyncdb-limit clamped to 1..50", clamp)

    def bad_input():
        got = [c.request("GET", p)[0] for p in ("/async-db?min=abc", "/async-db?max=1.5", "/async-db?limit=",
                                                "/async-db?min=99999999999999999999")]
        return got == [400] * 4, f"statuses {got}"
    c.run("x-asyncdb-non-integer parameters -> 400", bad_input)


def crud(c):
    def listing():
        d, _ = c.get_json("/crud/items?category=electronics&page=1&limit=5")
        items = d.get("items", [])
        ok = len(items) == 5 and d.get("total", 0) > 0 and d.get("page") == 1 and all("rating" in i for i in items)
        return ok, f"{len(items)} items, total {d.get('total')!r}, page {d.get('page')!r}"
    c.run("c-crud-list category=electronics page=1 limit=5", listing)

    def list_oracle():
        for cat, page, lim in (("electronics", 1, 5), ("office", 3, 10), ("garden", 2, 50), ("nothing", 1, 10)):
            d, _ = c.get_json(f"/crud/items?category={cat}&page={page}&limit={lim}")
            want = c.db_items(f"WHERE category = '{cat}' ORDER BY id LIMIT {lim} OFFSET {(page - 1) * lim}")
            if d != {"items": want, "total": len(want), "page": page, "limit": lim}:
                return False, f"{cat} page {page}: {str(d)[:200]} vs the database's {str(want)[:200]}"
        return True, "4 pages equal the database's"
    c.run("x-crud-list pages equal ORDER BY id LIMIT OFFSET", list_oracle)

    def list_defaults():
        d, _ = c.get_json("/crud/items")
        big, _ = c.get_json("/crud/items?limit=1000")
        ok = d["page"] == 1 and d["limit"] == 10 and len(d["items"]) == 10 and all(
            i["category"] == "electronics" for i in d["items"]) and big["limit"] == 50 and len(big["items"]) == 50
        return ok, f"default {d['page']}/{d['limit']}/{len(d['items'])}, limit=1000 -> {big['limit']}"
    c.run("x-crud-list defaults (electronics, page 1, limit 10), limit clamped to 50", list_defaults)

    def list_bad():
        got = [c.request("GET", p)[0] for p in ("/crud/items?page=0", "/crud/items?page=x", "/crud/items?limit=ten")]
        return got == [400] * 3, f"statuses {got}"
    c.run("x-crud-list bad page / limit -> 400", list_bad)

    def read_one():
        d, _ = c.get_json("/crud/items/1")
        want = c.db_items("WHERE id = 1")
        return d.get("id") == 1 and [d] == want, f"{d!r}"
    c.run("c-crud-read /crud/items/1", read_one)

    def miss_hit():
        # HttpArena reads 42 twice; the HIT is only due if the second answer came within
        # 200 ms of the fill (which is after the first request was sent): on a machine too
        # slow for that, try other ids.
        for item in (42, 43, 44, 45, 46, 47, 48, 49, 50, 51):
            t0 = time.monotonic()
            a = c.request("GET", f"/crud/items/{item}")[1].get("x-cache")
            b = c.request("GET", f"/crud/items/{item}")[1].get("x-cache")
            if a != "MISS":
                return False, f"first read of {item}: {a}"
            if time.monotonic() - t0 < 0.19:
                return b == "HIT", f"{a} then {b} ({item})"
        return None, "ten MISS/HIT pairs each took >= 190 ms: too slow to tell"
    c.run("c-crud-cache MISS then HIT", miss_hit)

    c.run("c-crud-404 /crud/items/999999", lambda: (c.request("GET", "/crud/items/999999")[0] == 404, ""))

    def create():
        st, _, b = c.request("POST", "/crud/items",
                             '{"id":200001,"name":"ValidateItem","category":"test","price":42,"quantity":7}')
        return st == 201 and json.loads(b)["id"] == 200001, f"{st} {b[:120]!r}"
    c.run("c-crud-create POST -> 201", create)

    def read_back():
        d, _ = c.get_json("/crud/items/200001")
        want = c.db_items("WHERE id = 200001")
        return d.get("id") == 200001 and d.get("name") == "ValidateItem" and [d] == want, f"{d!r}"
    c.run("c-crud-read-back /crud/items/200001", read_back)

    def update():
        c.request("GET", "/crud/items/200001")  # warm the cache
        st, _, b = c.request("PUT", "/crud/items/200001",
                             '{"name":"UpdatedItem","category":"test","price":99,"quantity":1}')
        s2, h, b2 = c.request("GET", "/crud/items/200001")
        d = json.loads(b2)
        ok = st == 200 and h.get("x-cache") == "MISS" and d["name"] == "UpdatedItem" and d["price"] == 99
        return ok, f"PUT {st} {b[:100]!r}, then {h.get('x-cache')} {d!r}"
    c.run("c-crud-update PUT -> 200, cache invalidated", update)

    def update_body():
        st, _, b = c.request("PUT", "/crud/items/77", '{"name":"Seventy-seven","price":12,"quantity":3}')
        want = c.db_items("WHERE id = 77")[0]
        return (st == 200 and json.loads(b) == {"id": 77, "name": "Seventy-seven", "price": 12, "quantity": 3}
                and (want["name"], want["price"], want["quantity"]) == ("Seventy-seven", 12, 3)), f"{st} {b!r}"
    c.run("x-crud-update answer and row", update_body)

    def upsert():
        c.request("GET", "/crud/items/200001")  # cached
        st, _, b = c.request("POST", "/crud/items",
                             '{"id":200001,"name":"Upserted","category":"other","price":5,"quantity":6}')
        s2, h, b2 = c.request("GET", "/crud/items/200001")
        d = json.loads(b2)
        return (st == 201 and h.get("x-cache") == "MISS" and (d["name"], d["category"], d["price"]) ==
                ("Upserted", "other", 5)), f"POST {st}, then {h.get('x-cache')} {d!r}"
    c.run("x-crud-upsert updates the row and drops the cached copy", upsert)

    def expiry():
        # Absolute TTL: the fill happens between sending the MISS and receiving it, so an
        # answer received < 200 ms after the MISS was sent must be a HIT, and a request
        # sent > 200 ms after the MISS was received must miss again (no refresh by HITs).
        for attempt, item in enumerate(range(1001, 1011)):
            t_send = time.monotonic()
            first = c.request("GET", f"/crud/items/{item}")[1].get("x-cache")
            t_recv = time.monotonic()
            second = c.request("GET", f"/crud/items/{item}")[1].get("x-cache")
            t_second = time.monotonic()
            if first != "MISS":
                return False, f"first read of {item}: {first}"
            if t_second - t_send >= 0.19:
                continue  # too slow a machine to tell: try another item
            if second != "HIT":
                return False, f"{item}: {second} {1000 * (t_second - t_send):.0f} ms after the MISS was sent"
            while time.monotonic() < t_recv + 0.25:
                time.sleep(t_recv + 0.25 - time.monotonic())
            third = c.request("GET", f"/crud/items/{item}")[1].get("x-cache")
            return third == "MISS", f"{third} 250 ms after the fill (attempt {attempt + 1})"
        return None, "ten MISS/HIT pairs each took >= 190 ms: too slow to tell"
    c.run("x-crud-cache expires 200 ms after the fill", expiry)

    def zero_padded():
        # gcannon pads {RAND:1:50000} to /crud/items/00042 and {RAND:1:10} to page=01.
        d, _ = c.get_json("/crud/items/00042")
        p, _ = c.get_json("/crud/items?category=office&page=01&limit=10")
        a, _ = c.get_json("/async-db?min=010&max=050&limit=05")
        return d["id"] == 42 and p["page"] == 1 and len(p["items"]) == 10 and a["count"] == 5, \
            f"id {d['id']}, page {p['page']}, async-db count {a['count']}"
    c.run("x-crud-zero-padded numbers (gcannon's RAND)", zero_padded)

    def not_found():
        got = [c.request(m, p, b)[0] for m, p, b in (
            ("GET", "/crud/items/0", None), ("GET", "/crud/items/-5", None),
            ("GET", "/crud/items/99999999999", None),
            ("PUT", "/crud/items/999999", '{"name":"x","price":1,"quantity":1}'))]
        return got == [404] * 4, f"statuses {got}"
    c.run("x-crud-404 unknown ids (GET, PUT), id beyond INTEGER", not_found)

    def bad_input():
        cases = [("GET", "/crud/items/abc", None), ("GET", "/crud/items/1.5", None),
                 ("PUT", "/crud/items/abc", '{"name":"x","price":1,"quantity":1}'),
                 ("POST", "/crud/items", '{"id":1,"name":'), ("POST", "/crud/items", ""),
                 ("POST", "/crud/items", "[1,2]"), ("POST", "/crud/items", '{"name":"x","category":"c","price":1,"quantity":1}'),
                 ("POST", "/crud/items", '{"id":"7","name":"x","category":"c","price":1,"quantity":1}'),
                 ("POST", "/crud/items", '{"id":3000000000,"name":"x","category":"c","price":1,"quantity":1}'),
                 ("POST", "/crud/items", '{"id":1,"name":"x","category":"c","price":1.5,"quantity":1}'),
                 ("POST", "/crud/items", b'{"id":1,"name":"\xff\xfe","category":"c","price":1,"quantity":1}'),
                 ("POST", "/crud/items", '{"id":1,"name":"nul\\u0000","category":"c","price":1,"quantity":1}'),
                 ("PUT", "/crud/items/1", "not json"), ("PUT", "/crud/items/1", '{"name":"x","price":1}')]
        got = [c.request(m, p, b)[0] for m, p, b in cases]
        bad = [(m, p, b, s) for (m, p, b), s in zip(cases, got) if s != 400]
        return not bad, f"not 400: {bad[:3]}" if bad else f"{len(cases)} requests"
    c.run("x-crud-bad input -> 400 (never 500)", bad_input)


def concurrency(c):
    # Many more requests in flight than pooled connections (DATABASE_MAX_CONN): all answered.
    def many():
        results, lock = [], threading.Lock()

        def worker(k):
            for j in range(25):
                n = k * 25 + j
                path = (f"/async-db?min={1 + n % 50}&max={200 + n % 100}&limit={1 + n % 50}" if n % 3 == 0 else
                        f"/crud/items/{1 + n % 997}" if n % 3 == 1 else f"/crud/items?category=toys&page={1 + n % 7}")
                try:
                    st = c.request("GET", path, timeout=30)[0]
                except Exception as e:  # noqa: BLE001
                    st = repr(e)
                with lock:
                    results.append(st)
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(32)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        bad = [s for s in results if s != 200]
        return len(results) == 800 and not bad, f"{len(results)} answers, not 200: {bad[:5]}"
    c.run("x-pool 32 clients x 25 requests over the pool: all 200", many)


def stall(c, timeout_s):
    # The database stops answering (its processes SIGSTOPped): a request gives up after the
    # server's --database-timeout-ms and the cancel's bounds (about 3x), answering 503, and
    # the routes answer again once the database resumes.
    def frozen():
        cluster = [sys.executable, os.path.join(HERE, "pg_cluster.py")]
        subprocess.run(cluster + ["freeze", c.pg_dir], check=True, timeout=60)
        try:
            t0 = time.monotonic()
            st, _, body = c.request("GET", "/async-db?min=3&max=300&limit=9", timeout=60)
            dt = time.monotonic() - t0
        finally:
            subprocess.run(cluster + ["thaw", c.pg_dir], check=True, timeout=60)
        ok = st == 503 and timeout_s * 0.9 <= dt <= timeout_s * 3 + 4
        return ok, f"{st} after {dt:.1f} s (timeout {timeout_s} s): {body[:80]!r}"
    c.run("x-stall a stalled database: 503 after the request's timeout", frozen)

    def resumed():
        deadline = time.monotonic() + 30
        while (st := c.request("GET", "/async-db?limit=5", timeout=30)[0]) != 200:
            if time.monotonic() > deadline:
                return False, f"still {st} 30 s after the database resumed"
            time.sleep(0.1)
        return True, ""
    c.run("x-stall recovery after the database resumes", resumed)


def outage(c):
    # The database goes away: every route answers 503 at once (no hang, no crash); it comes
    # back: the pool reconnects and the routes answer again.
    stop = subprocess.run([sys.executable, os.path.join(HERE, "pg_cluster.py"), "stop", c.pg_dir],
                          capture_output=True, text=True, timeout=120)
    if stop.returncode != 0:
        c.result("x-outage stop the database", False, stop.stderr.strip())
        return
    reqs = [("GET", "/async-db?limit=5", None), ("GET", "/crud/items?category=toys", None),
            ("GET", "/crud/items/31337", None), ("PUT", "/crud/items/5", '{"name":"x","price":1,"quantity":1}'),
            ("POST", "/crud/items", '{"id":300001,"name":"x","category":"c","price":1,"quantity":1}')]

    def down():
        got = []
        for rnd in range(2):  # twice: the second round finds no pooled connection left
            for m, p, b in reqs:
                t0 = time.monotonic()
                st, _, body = c.request(m, p, b, timeout=10)
                got.append((st, round(time.monotonic() - t0, 2), json.loads(body).get("error", "")[:60]))
        ok = all(s == 503 and dt < 3.0 and e for s, dt, e in got)
        return ok, f"{got[:2]} ..." if ok else f"{got}"
    c.run("x-outage every route 503 within 3 s, with a reason", down)

    start = subprocess.run([sys.executable, os.path.join(HERE, "pg_cluster.py"), "restart", c.pg_dir],
                           capture_output=True, text=True, timeout=120)
    if start.returncode != 0:
        c.result("x-outage restart the database", False, start.stderr.strip())
        return

    def back():
        deadline = time.monotonic() + 30
        while True:
            st = c.request("GET", "/async-db?limit=5", timeout=10)[0]
            if st == 200:
                break
            if time.monotonic() > deadline:
                return False, f"still {st} 30 s after the restart"
            time.sleep(0.1)
        got = [c.request(m, p, b)[0] for m, p, b in reqs]
        return got == [200, 200, 200, 200, 201], f"statuses {got}"
    c.run("x-outage recovery: every route answers again", back)


def no_db(c):
    reqs = [("GET", "/async-db", None), ("GET", "/crud/items", None), ("GET", "/crud/items/1", None),
            ("PUT", "/crud/items/1", '{"name":"x","price":1,"quantity":1}'),
            ("POST", "/crud/items", '{"id":1,"name":"x","category":"c","price":1,"quantity":1}')]

    def all_503():
        got = [c.request(m, p, b) for m, p, b in reqs]
        ok = all(s == 503 and "DATABASE_URL" in json.loads(b)["error"] for s, _, b in got)
        return ok, f"{[(s, b[:80]) for s, _, b in got]}"
    c.run("x-no-db every database route 503 naming DATABASE_URL", all_503)
    c.run("x-no-db the other routes still answer",
          lambda: (c.request("GET", "/baseline11?a=2&b=3")[2] == b"5", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data", help="ignored (run_validate.sh passes it)")
    ap.add_argument("--pg-dir", default=os.environ.get("ARENA_PG_DIR"))
    ap.add_argument("--no-db", action="store_true")
    ap.add_argument("--db-timeout-ms", type=int, default=0,
                    help="the server's --database-timeout-ms: also check a stalled database (0: skip)")
    args = ap.parse_args()
    c = Checker(args.host, args.port, args.pg_dir)
    if args.no_db:
        no_db(c)
    elif not args.pg_dir:
        print("FAIL setup: no --pg-dir / ARENA_PG_DIR (run through run_validate.sh with ARENA_PG=1)")
        return 1
    else:
        async_db(c)
        crud(c)
        concurrency(c)
        if args.db_timeout_ms:
            stall(c, args.db_timeout_ms / 1000)
        outage(c)
    print(f"# summary: {c.passed} passed, {c.failed} failed, {c.skipped} skipped")
    if c.failures:
        print("# failed: " + ", ".join(c.failures))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
