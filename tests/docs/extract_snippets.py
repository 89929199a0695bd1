#!/usr/bin/env python3
"""Compiles the C++ examples of saturn's documentation, so that none of them rots.

Two sources (standard library only, run by ctest: tests/docs/CMakeLists.txt):

* docs/guide.md — every ```cpp fence. An HTML comment right before the fence (blank
  lines between are allowed) says what the snippet is; without one it is an error:

      <!-- snippet: wrap=file -->        declarations at namespace scope
      <!-- snippet: wrap=task -->        statements, put in `saturn::task<> f() { ... co_return; }`
      <!-- snippet: wrap=task:T -->      statements, put in `saturn::task<T> f() { ... co_return T{}; }`
      <!-- snippet: wrap=function -->    statements, put in `void f() { ... }`
      <!-- snippet: wrap=none -->        not compiled (pseudo-code); say why in the text
      <!-- snippet: program=NAME ... --> a part of the complete program NAME: the parts of
                                         one NAME are joined in order into a program that
                                         the build compiles with the project's flags and
                                         links against saturn (target docs_guide_NAME),
                                         and the test runs (see "Running" below)

  A fragment may also say `prelude=ID[,ID...]`: hidden declarations it relies on, given
  in the guide as HTML comments that the reader does not see:

      <!-- prelude: ID
      saturn::task<int> compute();
      -->

* the public headers' `///` comments — fenced blocks (/// ```), Doxygen's @code or
  \\code ... @endcode blocks, and Markdown indented blocks (a blank `///` line, then
  lines indented by four spaces after `/// `). The headers carry no markup: each header
  with examples has a file in tests/docs/header_preludes/
  named after its path below include/saturn ("task/join_handle.hpp" ->
  "task_join_handle.hpp") that holds what its examples assume (includes, declarations)
  and a first line `// wrap: MODE` (the modes above; `// wrap N: MODE` for the N-th
  example of that header, counted from 1, when they differ). A header example without
  such a file fails the test, naming the file to add.

Fragments are compiled together, each in a namespace of its own, in one translation unit
per source with `-fsyntax-only` (the project's flags, plus -Wno-unused-*: a fragment
computes values it does not use). `#line` directives make every diagnostic name the
guide's or the header's own file and line.

Running (guide programs): `run=exit0` runs the program (optional `args="..."`, where
@SOURCE_DIR@ is the source tree) and wants exit status 0 (and `expect="..."` in its
output); `run=tcp` and `run=http` start a server, which must print
"listening on HOST:PORT" on stdout, then `send="..."` (escapes such as \\n allowed) and
`expect="..."` check one TCP exchange, or `get="PATH=STATUS ..."` checks HTTP statuses;
then the test sends SIGTERM and wants exit status 0 (a graceful stop) within 10 s.
"""

import argparse
import http.client
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time


WRAPS = ("file", "task", "function", "none")


class snippet:
    def __init__(self, path, line, text, opts, index=0):
        self.path, self.line, self.text, self.opts, self.index = path, line, text, opts, index
        self.prelude = ""          # text of the hidden declarations
        self.prelude_src = None    # (path, line) of the prelude text, for #line

    def where(self):
        return f"{self.path}:{self.line}"


def fail(msg):
    print(f"extract_snippets: {msg}", file=sys.stderr)
    sys.exit(1)


# ---- docs/*.md ---------------------------------------------------------------------------

def parse_opts(text):
    opts = {}
    for tok in shlex.split(text):
        key, _, val = tok.partition("=")
        opts[key] = val
    return opts


def markdown_snippets(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    snippets, preludes = [], {}
    pending = None  # (opts, line) of the last snippet comment
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^<!--\s*prelude:\s*(\S+)\s*$", ln)
        if m:
            j = i + 1
            while j < len(lines) and lines[j].strip() != "-->":
                j += 1
            preludes[m.group(1)] = (i + 2, "\n".join(lines[i + 1:j]))
            i = j + 1
            continue
        m = re.match(r"^<!--\s*snippet:(.*)-->\s*$", ln)
        if m:
            pending = (parse_opts(m.group(1)), i + 1)
            i += 1
            continue
        if re.match(r"^```", ln):
            lang = ln[3:].strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if lang in ("cpp", "c++"):
                if pending is None:
                    fail(f"{rel}:{i + 1}: a ```cpp block without a <!-- snippet: ... --> comment before it "
                         "(see tests/docs/extract_snippets.py)")
                snippets.append(snippet(rel, i + 2, "\n".join(lines[i + 1:j]), pending[0]))
            pending = None
            i = j + 1
            continue
        if ln.strip():
            pending = None if not ln.startswith("<!--") else pending
        i += 1
    for s in snippets:
        ids = [p for p in s.opts.get("prelude", "").split(",") if p]
        for pid in ids:
            if pid not in preludes:
                fail(f"{s.where()}: prelude '{pid}' is not defined in {rel}")
        # Several preludes: their #line is the first one's; good enough for diagnostics.
        if ids:
            s.prelude = "\n".join(preludes[p][1] for p in ids)
            s.prelude_src = (rel, preludes[ids[0]][0]) if len(ids) == 1 else None
    return snippets


# ---- include/saturn/**/*.hpp ------------------------------------------------------------

def header_snippets(path, rel):
    """Code blocks in `///` comments: fenced, or indented after a blank `///` line."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    doc = [None] * len(lines)  # the text after "///" (None: not a doc line)
    for i, ln in enumerate(lines):
        m = re.match(r"^\s*///(.*)$", ln)
        if m:
            t = m.group(1)
            doc[i] = t[1:] if t.startswith(" ") else t
    i = 0
    while i < len(lines):
        t = doc[i]
        if t is not None and (t.startswith("```") or re.match(r"^[@\\]code\b", t)):
            end = "```" if t.startswith("```") else None
            j = i + 1
            while j < len(lines) and doc[j] is not None and not (
                    doc[j].startswith(end) if end else re.match(r"^[@\\]endcode\b", doc[j])):
                j += 1
            out.append(snippet(rel, i + 2, "\n".join(doc[i + 1:j]), {}))
            i = j + 1
            continue
        if t is not None and t.startswith("    ") and i > 0 and doc[i - 1] is not None and doc[i - 1].strip() == "":
            j = i
            while j < len(lines) and doc[j] is not None and (doc[j].startswith("    ") or doc[j].strip() == ""):
                j += 1
            while doc[j - 1].strip() == "":
                j -= 1
            out.append(snippet(rel, i + 1, "\n".join(d[4:] for d in doc[i:j]), {}))
            i = j
            continue
        i += 1
    for n, s in enumerate(out, 1):
        s.index = n
    return out


def prelude_name(rel):
    return rel[len("include/saturn/"):].replace("/", "_")


def attach_header_prelude(s, prelude_dir):
    name = prelude_name(s.path)
    p = os.path.join(prelude_dir, name)
    if not os.path.exists(p):
        fail(f"{s.where()}: this header example has no prelude: add tests/docs/header_preludes/{name} "
             "with a first line `// wrap: file|task|task:T|function|none` and the declarations the example "
             "uses (see tests/docs/extract_snippets.py)")
    text = open(p, encoding="utf-8").read()
    wrap = None
    for ln in text.split("\n"):
        m = re.match(r"^//\s*wrap(?:\s+(\d+))?:\s*(\S+)", ln)
        if m and (m.group(1) is None and wrap is None or m.group(1) == str(s.index)):
            wrap = m.group(2)
    if wrap is None:
        fail(f"tests/docs/header_preludes/{name}: no `// wrap: MODE` line for example {s.index} ({s.where()})")
    s.opts = {"wrap": wrap}
    s.prelude = text
    s.prelude_src = ("tests/docs/header_preludes/" + name, 1)


# ---- translation units --------------------------------------------------------------------

def split_includes(text):
    """The #include lines (hoisted to the top of the translation unit), and the text with
    each of them blanked, so that #line numbers still match."""
    inc, rest = [], []
    for ln in text.split("\n"):
        if re.match(r"^\s*#\s*include\b", ln):
            inc.append(ln.strip())
            rest.append("")
        else:
            rest.append(ln)
    return inc, rest


class tu_writer:
    def __init__(self, path):
        self.path, self.lines = path, []

    def emit(self, text):
        self.lines.extend(text.split("\n"))

    def origin(self, path, line):
        self.lines.append(f'#line {line} "{path}"')

    def here(self):
        self.lines.append(f'#line {len(self.lines) + 2} "{self.path}"')

    def write(self):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("\n".join(self.lines) + "\n")


def wrap_of(s):
    w = s.opts.get("wrap")
    base = w.split(":", 1)[0] if w else None
    if base not in WRAPS:
        fail(f"{s.where()}: unknown or missing wrap= ('{w}'); one of file, task, task:T, function, none")
    return base, (w.split(":", 1)[1] if ":" in w else None)


def fragments_tu(snippets, path):
    includes = []
    for s in snippets:
        for src in (s.prelude, s.text):
            for ln in split_includes(src)[0]:
                if ln not in includes:
                    includes.append(ln)
    tu = tu_writer(path)
    tu.emit("// Generated by tests/docs/extract_snippets.py: one namespace per documentation snippet.")
    tu.emit("\n".join(includes))
    for n, s in enumerate(snippets):
        base, ret = wrap_of(s)
        tu.here()
        tu.emit(f"namespace snippet_{n} {{  // {s.where()}")
        if s.prelude:
            if s.prelude_src:
                tu.origin(*s.prelude_src)
            tu.emit("\n".join(split_includes(s.prelude)[1]))
            tu.here()
        body = "\n".join(split_includes(s.text)[1])
        if base == "file":
            tu.origin(s.path, s.line)
            tu.emit(body)
        elif base == "function":
            tu.emit("[[maybe_unused]] void snippet_body() {")
            tu.origin(s.path, s.line)
            tu.emit(body)
            tu.here()
            tu.emit("}")
        else:  # task
            rtype = ret if ret else "void"
            tu.emit(f"[[maybe_unused]] saturn::task<{rtype}> snippet_body() {{")
            tu.origin(s.path, s.line)
            tu.emit(body)
            tu.here()
            tu.emit("co_return;" if ret is None else f"co_return {rtype}{{}};")
            tu.emit("}")
        tu.here()
        tu.emit(f"}}  // namespace snippet_{n}")
    tu.write()


def run_compiler(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def compile_fragments(cfg, snippets, name):
    frags = [s for s in snippets if wrap_of(s)[0] != "none"]
    if not frags:
        fail(f"{name}: no snippet found to compile (the extractor would pass vacuously)")
    path = os.path.join(cfg["work_dir"], f"{name}.cpp")
    fragments_tu(frags, path)
    cmd = [cfg["cxx"], *cfg["flags"], *cfg["fragment_flags"], "-I", cfg["include_dir"], "-fsyntax-only", path]
    t0 = time.monotonic()
    rc, out = run_compiler(cmd)
    skipped = len(snippets) - len(frags)
    print(f"{name}: {len(frags)} snippets in one translation unit ({path}), "
          f"{skipped} marked wrap=none, compiled in {time.monotonic() - t0:.1f} s")
    if rc != 0:
        print(out)
        print(f"{name}: FAILED: a documentation snippet does not compile (the lines above name it)")
        return False
    return True


# ---- programs -----------------------------------------------------------------------------

def collect_programs(snippets):
    progs = {}
    for s in snippets:
        name = s.opts.get("program")
        if name:
            progs.setdefault(name, []).append(s)
    return progs


def program_source(name, parts):
    lines = [f"// Generated by tests/docs/extract_snippets.py from docs/guide.md (program={name})."]
    for s in parts:
        lines.append(f'#line {s.line} "{s.path}"')
        lines.append(s.text)
    return "\n".join(lines) + "\n"


def write_programs(snippets, out_dir):
    """Writes guide_NAME.cpp per program (only when its text changed: no needless
    rebuilds) and programs.txt, the names, for tests/docs/CMakeLists.txt."""
    progs = collect_programs(snippets)
    if not progs:
        fail("docs/guide.md: no program=NAME snippet found")
    os.makedirs(out_dir, exist_ok=True)
    files = {f"guide_{n}.cpp": program_source(n, parts) for n, parts in progs.items()}
    files["programs.txt"] = "\n".join(progs) + "\n"
    for fn, text in files.items():
        p = os.path.join(out_dir, fn)
        if not os.path.exists(p) or open(p, encoding="utf-8").read() != text:
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
    return 0


def read_listening(proc, deadline):
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on (\S+):(\d+)", line)
        if m:
            return m.group(1), int(m.group(2))
    raise RuntimeError(f"no 'listening on HOST:PORT' line on stdout (last: {line!r})")


def stop_gracefully(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError("did not stop within 10 s of SIGTERM")
    if rc != 0:
        raise RuntimeError(f"exit status {rc} after SIGTERM (wanted 0)")


def run_program(cfg, name, exe, opts):
    how = opts.get("run", "")
    args = shlex.split(opts.get("args", "").replace("@SOURCE_DIR@", cfg["source_dir"]))
    if how == "exit0":
        p = subprocess.run([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError(f"exit status {p.returncode} (wanted 0); output:\n{p.stdout}")
        want = opts.get("expect", "").encode().decode("unicode_escape")
        if want not in p.stdout:
            raise RuntimeError(f"wanted {want!r} in the output:\n{p.stdout}")
        return f"ran, exit 0 ({len(p.stdout.splitlines())} lines of output)"
    if how not in ("tcp", "http"):
        raise RuntimeError(f"unknown run={how!r} (exit0, tcp or http)")
    proc = subprocess.Popen([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        host, port = read_listening(proc, time.monotonic() + 20)
        if how == "tcp":
            send = opts.get("send", "").encode().decode("unicode_escape").encode()
            want = opts.get("expect", "").encode().decode("unicode_escape")
            with socket.create_connection((host, port), timeout=10) as c:
                c.sendall(send)
                c.shutdown(socket.SHUT_WR)
                got = b""
                while True:
                    b = c.recv(4096)
                    if not b:
                        break
                    got += b
            if want not in got.decode(errors="replace"):
                raise RuntimeError(f"sent {send!r}, got {got!r}, wanted {want!r} in it")
            done = f"tcp exchange ok ({got!r})"
        else:
            checks = []
            for item in opts.get("get", "").split():
                path, _, status = item.rpartition("=")
                c = http.client.HTTPConnection(host, port, timeout=10)
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                c.close()
                if r.status != int(status):
                    raise RuntimeError(f"GET {path}: status {r.status}, wanted {status}")
                checks.append(f"GET {path} -> {r.status}")
            done = ", ".join(checks)
        stop_gracefully(proc)
        return done + "; stopped by SIGTERM with exit 0"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err = proc.stderr.read() if proc.stderr else ""
        if err.strip():
            print(f"  {name} stderr: " + err.strip().replace("\n", "\n    "))


def run_programs(cfg, snippets, programs_dir):
    """Runs the programs the build made from the guide (targets docs_guide_NAME)."""
    progs = collect_programs(snippets)
    if not progs:
        fail("docs/guide.md: no program=NAME snippet found")
    ok = True
    for name, parts in progs.items():
        exe = os.path.join(programs_dir, f"guide_{name}")
        if not os.path.exists(exe):
            print(f"program {name}: FAILED: {exe} was not built (build the docs_guide_{name} target; "
                  "a program added to the guide needs a cmake re-run)")
            ok = False
            continue
        opts = {}
        for s in parts:
            opts.update({k: v for k, v in s.opts.items() if k not in ("program", "wrap")})
        if not opts.get("run"):
            print(f"program {name}: built (not run: no run=)")
            continue
        t0 = time.monotonic()
        try:
            done = run_program(cfg, name, exe, opts)
            print(f"program {name}: {done} ({time.monotonic() - t0:.1f} s)")
        except Exception as e:  # noqa: BLE001 - any failure of the run is the test's failure
            print(f"program {name}: FAILED when run: {e}")
            ok = False
    return ok


# ---- main ---------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["guide", "guide-programs", "write-programs", "headers", "list"])
    ap.add_argument("--config", help="JSON written by tests/docs/CMakeLists.txt")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--out-dir", help="write-programs: where the sources go")
    ap.add_argument("--programs-dir", help="guide-programs: where the built programs are")
    a = ap.parse_args()
    src = os.path.abspath(a.source_dir)
    programs_dir = os.path.abspath(a.programs_dir) if a.programs_dir else None
    guide = os.path.join(src, "docs", "guide.md")

    def all_header_snippets():
        out = []
        root = os.path.join(src, "include", "saturn")
        for d, _, files in sorted(os.walk(root)):
            for fn in sorted(files):
                if fn.endswith(".hpp"):
                    p = os.path.join(d, fn)
                    out.extend(header_snippets(p, os.path.relpath(p, src)))
        return out

    if a.what == "write-programs":
        return write_programs(markdown_snippets(guide, "docs/guide.md"), a.out_dir)
    if a.what == "list":
        for s in markdown_snippets(guide, "docs/guide.md") + all_header_snippets():
            print(f"{s.where()}: {s.opts or '(header)'}\n    " + s.text.replace("\n", "\n    "))
        return 0
    cfg = json.load(open(a.config, encoding="utf-8"))
    cfg["source_dir"] = src
    os.makedirs(cfg["work_dir"], exist_ok=True)
    os.chdir(cfg["work_dir"])
    if a.what == "headers":
        snips = all_header_snippets()
        for s in snips:
            attach_header_prelude(s, os.path.join(src, "tests", "docs", "header_preludes"))
        return 0 if compile_fragments(cfg, snips, "header_snippets") else 1
    snips = markdown_snippets(guide, "docs/guide.md")
    if a.what == "guide":
        frags = [s for s in snips if "program" not in s.opts]
        return 0 if compile_fragments(cfg, frags, "guide_snippets") else 1
    return 0 if run_programs(cfg, snips, programs_dir) else 1


if __name__ == "__main__":
    sys.exit(main())
