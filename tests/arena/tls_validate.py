#!/usr/bin/env python3
"""HTTPS checks of saturn-arena with real TLS clients: HttpArena's json-tls profile and the
TLS behaviour issue #26 asks for.

Run by run_validate.sh with ARENA_TLS=1, which starts the server with a CA-signed RSA-2048
certificate for localhost / 127.0.0.1 and passes ARENA_TLS_PORT and ARENA_CERTS.

Clients: testssl.sh (-p -f -U: nothing VULNERABLE or NOT ok), curl (OpenSSL), openssl s_client (TLS 1.2 and 1.3, ALPN, resumption, refused
renegotiation, refused old protocols and ciphers), Python's ssl module, and gnutls-cli
(a second TLS implementation). Raw sockets play the hostile peers: garbage instead of a
ClientHello, a record header then silence (other handshakes go on meanwhile), a client
that vanishes mid-handshake.

Prints PASS/FAIL/SKIP lines and exits 1 on any FAIL.
"""
import argparse
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time


class Checks:
    def __init__(self, host, port, certs, data):
        self.host, self.port, self.certs = host, port, certs
        self.ca = os.path.join(certs, "ca.pem")
        self.failed = 0
        with open(os.path.join(data, "dataset.json")) as f:
            self.dataset = json.load(f)

    def result(self, name, ok, detail=""):
        tag = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
        if ok is False:
            self.failed += 1
        print(f"{tag} {name}" + (f": {detail}" if detail else ""), flush=True)

    def run(self, name, fn):
        try:
            ok, detail = fn()
        except Exception as e:  # a check that crashed is a failed check
            ok, detail = False, f"{type(e).__name__}: {e}"
        self.result(name, ok, detail)

    # ---- tools ----
    def url(self, path, host="127.0.0.1"):
        return f"https://{host}:{self.port}{path}"

    def curl(self, *args, timeout=20):
        p = subprocess.run(["curl", "-sS", "--max-time", "10", *args], capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def s_client(self, *args, stdin=b"", timeout=10):
        cmd = ["openssl", "s_client", "-connect", f"{self.host}:{self.port}", "-servername", "localhost",
               "-CAfile", self.ca, *args]
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")

    def json_ok(self, doc, count, m):
        if doc.get("count") != count or len(doc.get("items", [])) != count:
            return False, f"count {doc.get('count')!r}, {len(doc.get('items', []))} items, want {count}"
        for got, src in zip(doc["items"], self.dataset):
            want = src["price"] * src["quantity"] * m
            if got.get("total") != want:
                return False, f"item {src.get('id')}: total {got.get('total')!r}, want {want}"
        return True, ""

    # ---- json-tls (HttpArena) ----
    def json_tls_version(self):
        rc, out, err = self.curl("-k", "--http1.1", "-o", "/dev/null", "-w", "%{http_version}",
                                 self.url("/json/1?m=1"))
        return rc == 0 and out == "1.1", f"rc {rc}, http_version {out!r} {err.strip()}"

    def json_tls_never_h2(self):
        # curl offers h2 first by ALPN; the port must still answer HTTP/1.1.
        rc, out, err = self.curl("-k", "--http2", "-o", "/dev/null", "-w", "%{http_version}",
                                 self.url("/json/1?m=1"))
        return rc == 0 and out == "1.1", f"rc {rc}, http_version {out!r} {err.strip()}"

    def json_tls_totals(self):
        for count, m in ((7, 2), (23, 11), (50, 1)):
            rc, out, err = self.curl("-k", "--http1.1", "-D", "-", self.url(f"/json/{count}?m={m}"))
            if rc != 0:
                return False, f"/json/{count}?m={m}: curl rc {rc} {err.strip()}"
            head, _, body = out.partition("\r\n\r\n")
            if not re.search(r"(?im)^content-type:\s*application/json", head):
                return False, f"/json/{count}?m={m}: Content-Type missing or wrong in {head!r}"
            ok, detail = self.json_ok(json.loads(body), count, m)
            if not ok:
                return False, f"/json/{count}?m={m}: {detail}"
        return True, "(7,2) (23,11) (50,1) exact, application/json"

    # ---- verification with the CA, by name and by address ----
    def curl_verified(self):
        for host in ("localhost", "127.0.0.1"):
            rc, out, err = self.curl("--cacert", self.ca, "--resolve", f"localhost:{self.port}:127.0.0.1",
                                     self.url("/baseline11?a=20&b=22", host))
            if rc != 0 or out != "42":
                return False, f"{host}: rc {rc} body {out!r} {err.strip()}"
        return True, "curl --cacert verifies localhost and 127.0.0.1"

    def curl_keepalive_many(self):
        urls = [self.url(f"/baseline11?a={i}&b=1") for i in range(50)]
        rc, out, err = self.curl("-k", "--http1.1", *urls)
        want = "".join(str(i + 1) for i in range(50))
        return rc == 0 and out == want, f"50 requests on one connection: rc {rc} {err.strip()}"

    # ---- openssl s_client ----
    def protocol(self, flag, want):
        rc, out = self.s_client(flag, "-alpn", "h2,http/1.1", stdin=b"")
        proto = re.search(r"^(?:New|Reused), (TLSv1\.\d)", out, re.M)
        alpn = re.search(r"ALPN protocol: (\S+)", out)
        verify = "Verify return code: 0 (ok)" in out
        ok = proto is not None and proto.group(1) == want and alpn is not None and alpn.group(1) == "http/1.1"
        return ok and verify, (f"{want}, ALPN {alpn.group(1) if alpn else None}, verified {verify}"
                               if ok else out[-600:])

    def old_protocol_refused(self, flag):
        rc, out = self.s_client(flag, stdin=b"")
        ok = re.search(r"Protocol\s*:\s*TLSv1(\.[01])?\s*$", out, re.M) is None or "Cipher is (NONE)" in out
        return ok and ("alert" in out or "no protocols available" in out), out.splitlines()[-1] if out else ""

    def weak_cipher_refused(self, cipher):
        rc, out = self.s_client("-tls1_2", "-cipher", cipher, stdin=b"")
        return "Cipher is (NONE)" in out or "handshake failure" in out or "no cipher" in out, \
            f"-cipher {cipher}: " + (out.splitlines()[-1] if out else "")

    def alpn_h2_only_refused(self):
        rc, out = self.s_client("-alpn", "h2", stdin=b"")
        return "no application protocol" in out, "offering only h2 gets the no_application_protocol alert"

    def resumption(self, flag):
        sess = os.path.join(self.certs, f"sess{flag}")
        # The request makes the client read the server's NewSessionTicket (TLS 1.3).
        req = b"GET /baseline11?a=1&b=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        rc, first = self.s_client(flag, "-sess_out", sess, "-ign_eof", stdin=req)
        rc, second = self.s_client(flag, "-sess_in", sess, "-ign_eof", stdin=req)
        return re.search(r"^Reused, ", second, re.M) is not None, \
            "second connection: " + ("Reused" if "Reused," in second else "New")

    def renegotiation_refused(self):
        # 'R' asks s_client to renegotiate (TLS 1.2); saturn refuses every renegotiation.
        p = subprocess.Popen(["openssl", "s_client", "-connect", f"{self.host}:{self.port}", "-tls1_2",
                              "-CAfile", self.ca, "-servername", "localhost"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            time.sleep(0.5)
            try:
                p.stdin.write(b"R\n")
                p.stdin.flush()
            except BrokenPipeError:
                pass
            time.sleep(1.0)
            out = p.communicate(timeout=10)[0].decode("utf-8", "replace")
        finally:
            if p.poll() is None:
                p.kill()
        refused = "no renegotiation" in out
        # A second "Verify return code" would be a second handshake.
        return refused and out.count("Verify return code:") <= 1, \
            "no_renegotiation alert" if refused else out[-400:]

    # ---- Python's ssl module ----
    def python_ssl(self):
        ctx = ssl.create_default_context(cafile=self.ca)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection((self.host, self.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                got = []
                for a in (5, 6):
                    s.sendall(f"GET /baseline11?a={a}&b=1 HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
                    buf = b""
                    while b"\r\n\r\n" not in buf:
                        buf += s.recv(4096)
                    head, _, body = buf.partition(b"\r\n\r\n")
                    n = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
                    while len(body) < n:
                        body += s.recv(4096)
                    got.append(body.decode())
                ver, alpn = s.version(), s.selected_alpn_protocol()
        ok = got == ["6", "7"] and alpn == "http/1.1" and ver in ("TLSv1.3", "TLSv1.2")
        return ok, f"{ver}, ALPN {alpn}, bodies {got}"

    def python_clean_close(self):
        # Connection: close must end with close_notify: Python's ssl raises on a bare close
        # (suppress_ragged_eofs=False).
        ctx = ssl.create_default_context(cafile=self.ca)
        with socket.create_connection((self.host, self.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False) as s:
                s.sendall(b"GET /baseline11?a=1&b=2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                buf = b""
                try:
                    while True:
                        chunk = s.recv(4096)
                        if not chunk:
                            break
                        buf += chunk
                except ssl.SSLEOFError as e:
                    return False, f"no close_notify before the close: {e}"
        return buf.endswith(b"\r\n\r\n3"), "answer then close_notify"

    # ---- gnutls-cli ----
    def gnutls(self, priority, want):
        exe = shutil.which("gnutls-cli")
        if exe is None:
            return None, "gnutls-cli not installed (gnutls-bin)"
        req = b"GET /baseline11?a=40&b=2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        p = subprocess.run([exe, "--x509cafile", self.ca, "--priority", priority, "--port", str(self.port),
                            "--alpn", "http/1.1", "localhost"], input=req, capture_output=True, timeout=15)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        ok = re.search(r"\r?\n\r?\n42", out) is not None and want in out
        return ok, f"{want}: " + ("answered 42" if ok else out[-500:])

    # ---- WebSocket over TLS ----
    def wss_echo(self):
        ctx = ssl.create_default_context(cafile=self.ca)
        with socket.create_connection((self.host, self.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                buf = b""
                while b"\r\n\r\n" not in buf:
                    buf += s.recv(4096)
                head, _, rest = buf.partition(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 101") or b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" not in head:
                    return False, f"upgrade answered {head[:60]!r}"
                payload, mask = b"wss through saturn", bytes([7, 13, 42, 99])
                s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask +
                          bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                while len(rest) < 2 + len(payload):
                    rest += s.recv(4096)
        ok = rest[:2] == bytes([0x81, len(payload)]) and rest[2:2 + len(payload)] == payload
        return ok, "text frame echoed over TLS" if ok else f"got {rest[:40]!r}"

    # ---- testssl.sh ----
    def testssl(self):
        if os.environ.get("ARENA_NO_TESTSSL"):
            return None, "ARENA_NO_TESTSSL is set (sanitizer builds: the release build runs it)"
        exe = shutil.which("testssl") or shutil.which("testssl.sh")
        if exe is None:
            return None, "testssl.sh not installed (Debian package testssl.sh)"
        p = subprocess.run([exe, "-p", "-f", "-U", "--color", "0", "--warnings", "off", "--quiet",
                            f"{self.host}:{self.port}"], capture_output=True, timeout=600)
        out = p.stdout.decode("utf-8", "replace")
        bad = [l.strip() for l in out.splitlines()
               if re.search(r"(?<!not )VULNERABLE|NOT ok", l)
               or re.match(r"\s*(SSLv2|SSLv3|TLS 1|TLS 1\.1)\s+offered", l)]
        if "Done" not in out:
            return False, "testssl.sh did not finish: " + out[-300:]
        return not bad, "; ".join(bad) if bad else "-p -f -U: nothing VULNERABLE or NOT ok, nothing below TLS 1.2"

    # ---- hostile peers ----
    def garbage_closed(self):
        with socket.create_connection((self.host, self.port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\x00" * 64)
            t0 = time.monotonic()
            data = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except ConnectionResetError:
                pass
            took = time.monotonic() - t0
        # An alert record (content type 21) or nothing, then the close.
        ok = took < 3 and (data == b"" or data[0] == 21)
        return ok, f"closed after {took:.2f} s, {len(data)} bytes back"

    def silent_peer_does_not_block_others(self):
        silent = []
        for _ in range(8):
            s = socket.create_connection((self.host, self.port), timeout=5)
            s.sendall(b"\x16\x03\x01\x02\x00")  # a handshake record header, then nothing
            silent.append(s)
        try:
            t0 = time.monotonic()
            rc, out, err = self.curl("--cacert", self.ca, self.url("/baseline11?a=1&b=1", "localhost"),
                                     "--resolve", f"localhost:{self.port}:127.0.0.1")
            took = time.monotonic() - t0
        finally:
            for s in silent:
                s.close()
        return rc == 0 and out == "2" and took < 3, f"8 silent handshakes held; a full one took {took:.2f} s"

    def vanishing_client(self):
        # 50 clients that send a real ClientHello and vanish; the server must stay healthy.
        ctx = ssl.create_default_context(cafile=self.ca)
        for _ in range(50):
            raw = socket.create_connection((self.host, self.port), timeout=5)
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
            try:
                obj.do_handshake()
            except ssl.SSLWantReadError:
                pass
            raw.sendall(outgoing.read())  # the ClientHello, and gone
            raw.close()
        rc, out, err = self.curl("-k", self.url("/baseline11?a=2&b=2"))
        return rc == 0 and out == "4", "still serving after 50 abandoned handshakes"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True, help="the plain port (unused here)")
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    tls_port, certs = os.environ.get("ARENA_TLS_PORT"), os.environ.get("ARENA_CERTS")
    if not tls_port or not certs:
        sys.exit("tls_validate.py: run it through run_validate.sh with ARENA_TLS=1")
    c = Checks(args.host, int(tls_port), certs, args.data)
    c.run("json-tls http_version 1.1", c.json_tls_version)
    c.run("json-tls never h2 (ALPN http/1.1 only)", c.json_tls_never_h2)
    c.run("json-tls totals and Content-Type", c.json_tls_totals)
    c.run("curl verifies the chain and host", c.curl_verified)
    c.run("curl keep-alive over TLS", c.curl_keepalive_many)
    c.run("s_client TLS 1.3", lambda: c.protocol("-tls1_3", "TLSv1.3"))
    c.run("s_client TLS 1.2", lambda: c.protocol("-tls1_2", "TLSv1.2"))
    c.run("s_client TLS 1.1 refused", lambda: c.old_protocol_refused("-tls1_1"))
    c.run("s_client TLS 1.0 refused", lambda: c.old_protocol_refused("-tls1"))
    c.run("CBC cipher refused", lambda: c.weak_cipher_refused("ECDHE-RSA-AES128-SHA"))
    c.run("RSA key exchange refused", lambda: c.weak_cipher_refused("AES128-GCM-SHA256"))
    c.run("ALPN h2 only refused", c.alpn_h2_only_refused)
    c.run("resumption TLS 1.3", lambda: c.resumption("-tls1_3"))
    c.run("resumption TLS 1.2", lambda: c.resumption("-tls1_2"))
    c.run("renegotiation refused", c.renegotiation_refused)
    c.run("python ssl keep-alive", c.python_ssl)
    c.run("WebSocket over TLS (wss://) echo", c.wss_echo)
    c.run("python ssl close_notify on Connection: close", c.python_clean_close)
    c.run("gnutls-cli TLS 1.3", lambda: c.gnutls("NORMAL", "TLS1.3"))
    c.run("gnutls-cli TLS 1.2", lambda: c.gnutls("NORMAL:-VERS-TLS1.3", "TLS1.2"))
    c.run("testssl.sh protocols, forward secrecy, vulnerabilities", c.testssl)
    c.run("garbage instead of ClientHello closed", c.garbage_closed)
    c.run("silent handshakes do not block others", c.silent_peer_does_not_block_others)
    c.run("abandoned handshakes", c.vanishing_client)
    print(f"# tls_validate: {c.failed} failed")
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
