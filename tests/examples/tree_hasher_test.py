"""examples/tree_hasher, driven for real: on a generated tree (nested directories, empty
and multi-buffer files, names with spaces, a symlink and an empty directory) its output
equals what Python's os.walk + hashlib compute, with one hasher and with many; a missing
root is an error (exit 1, said on stderr)."""
import hashlib
import os
import random
import subprocess
import sys
import tempfile

from driver import check


def make_tree(root):
    rng = random.Random(24)
    sizes = [0, 1, 100, 4096, 65535, 65536, 65537, 300_000]
    n = 0
    for d in ["", "a", "a/b", "a/b/c", "dir with space", "deep/" + "/".join(f"l{i}" for i in range(12))]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
        for _ in range(rng.randrange(3, 12)):
            size = sizes[n % len(sizes)] if n < 2 * len(sizes) else rng.randrange(0, 20_000)
            name = f"file {n}.bin" if n % 5 == 0 else f"f{n}"
            with open(os.path.join(root, d, name), "wb") as f:
                f.write(rng.randbytes(size))
            n += 1
    os.makedirs(os.path.join(root, "empty"))
    os.symlink("a/f1", os.path.join(root, "link-to-f1"))  # not a regular file: not hashed
    return n


def expected(root):
    lines, total = [], 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            data = open(path, "rb").read()
            total += len(data)
            lines.append((path, f"{hashlib.sha256(data).hexdigest()}  {path}"))
    lines.sort(key=lambda x: x[0].encode())
    return "".join(l + "\n" for _, l in lines) + f"total: {len(lines)} files, {total} bytes\n"


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def main(binary):
    with tempfile.TemporaryDirectory(prefix="saturn-tree-") as tmp:
        root = os.path.join(tmp, "tree")
        files = make_tree(root)
        want = expected(root)
        check(want.count("\n") == files + 1, "the oracle missed files")
        for extra in ([], ["--jobs", "1"], ["--jobs", "64"]):
            got = run([binary, root] + extra)
            check(got.returncode == 0, f"exit {got.returncode} {extra}: {got.stderr!r}")
            if got.stdout != want:
                diff = [f"{a!r} != {b!r}" for a, b in zip(got.stdout.splitlines(), want.splitlines()) if a != b]
                check(False, f"output differs from Python's {extra}: {diff[:3]} "
                             f"({got.stdout.count(chr(10))} vs {want.count(chr(10))} lines)")
        print(f"tree_hasher: {files} files match Python's SHA-256 ({want.splitlines()[-1]})")
        missing = run([binary, os.path.join(tmp, "no-such-dir")])
        check(missing.returncode == 1 and "no-such-dir" in missing.stderr,
              f"missing root: exit {missing.returncode}, stderr {missing.stderr!r}")


if __name__ == "__main__":
    main(sys.argv[1])
