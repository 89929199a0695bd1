#!/usr/bin/env python3
"""DESIGN rule 4: saturn reaches atomics only through include/saturn/detail/atomic.hpp,
so a test build can swap in an instrumented version (tests/model). This check fails on
any `std::atomic...` name (std::atomic<T>, atomic_ref, atomic_flag, atomic_thread_fence,
...) in the given trees outside that header. A justified exception (a user-facing example,
an app using the public API as any user would) carries `atomic door:` and its reason in a
comment on the same line or the line above.

Usage: atomic_door.py SOURCE_DIR [SUBDIR...]   (default subdirs: include src apps)
Exit status 0 when clean, 1 with one line per offending use (file:line: text)."""
import os
import re
import sys

DOOR = os.path.join("include", "saturn", "detail", "atomic.hpp")
PATTERN = re.compile(r"\bstd::atomic")
MARK = "atomic door:"
EXTENSIONS = (".hpp", ".cpp", ".h", ".cc", ".ipp", ".inl")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    subdirs = argv[2:] or ["include", "src", "apps"]
    bad = []
    scanned = 0
    for sub in subdirs:
        for dirpath, _, files in os.walk(os.path.join(root, sub)):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if not name.endswith(EXTENSIONS) or rel == DOOR:
                    continue
                scanned += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                for i, line in enumerate(lines):
                    if PATTERN.search(line) and MARK not in line and (i == 0 or MARK not in lines[i - 1]):
                        bad.append(f"{rel}:{i + 1}: {line.strip()}")
    if scanned == 0:
        print(f"atomic_door: no source files under {subdirs} in {root}")
        return 2
    for b in bad:
        print(b)
    if bad:
        print(f"atomic_door: {len(bad)} bare std::atomic use(s): name saturn::detail::atomic "
              f"(include/saturn/detail/atomic.hpp; extend it if it lacks what you need), or mark a "
              f"justified exception with '// {MARK} <reason>' on the line or the line above")
        return 1
    print(f"atomic_door: {scanned} files clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
