#!/usr/bin/env python3
"""Write a synthetic HttpArena data directory: DIR/dataset.json and DIR/static/.

The layout matches what an HttpArena entry finds under /data: a pretty-printed JSON array
of 50 items and 20 static files of the documented names and sizes, where the 15 text files
have .gz (level 9) and .br (quality 11) siblings. The values are our own, generated from a
seed, so the output is deterministic. Standard library only; brotli siblings need the
`brotli` command-line program (Debian package `brotli`) and are skipped without it.

Usage: gen_data.py DIR [--seed N]
"""
import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys

CATEGORIES = ["electronics", "tools", "home", "books", "toys",
              "clothing", "garden", "auto", "sports", "office"]
ADJECTIVES = ["Amber", "Brisk", "Cobalt", "Dusky", "Ember", "Frosted", "Gilded", "Hollow",
              "Ivory", "Jade", "Keen", "Lunar", "Mossy", "Nimble", "Onyx", "Polar", "Quiet",
              "Rustic", "Solar", "Tidal", "Umber", "Vivid", "Woven", "Zesty"]
NOUNS = ["Lantern", "Bracket", "Kettle", "Spindle", "Satchel", "Compass", "Trowel", "Beacon",
         "Ledger", "Funnel", "Gasket", "Harness", "Pulley", "Sprocket", "Thimble", "Canister",
         "Easel", "Rivet", "Sieve", "Toggle"]
TAGS = ["eco", "compact", "premium", "bundle", "clearance", "durable", "handmade",
        "imported", "limited", "refurbished", "rechargeable", "waterproof"]

# name -> size in bytes (the documented HttpArena static set)
STATIC_FILES = [
    ("reset.css", 8192), ("layout.css", 25600), ("theme.css", 18432),
    ("components.css", 204800), ("utilities.css", 61440),
    ("analytics.js", 12288), ("helpers.js", 22528), ("app.js", 204800),
    ("vendor.js", 307200), ("router.js", 35840),
    ("header.html", 122880), ("footer.html", 56320),
    ("regular.woff2", 18432), ("bold.woff2", 22528),
    ("logo.svg", 15344), ("icon-sprite.svg", 71680),
    ("hero.webp", 46080), ("thumb1.webp", 8192), ("thumb2.webp", 6144),
    ("manifest.json", 2883),
]
BINARY_EXTS = (".woff2", ".webp")


def make_dataset(rng):
    items = []
    for i in range(1, 51):
        items.append({
            "id": i,
            "name": f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}",
            "category": rng.choice(CATEGORIES),
            "price": rng.randint(3, 480),
            "quantity": rng.randint(1, 99),
            "active": rng.random() < 0.8,
            "tags": rng.sample(TAGS, rng.randint(1, 4)),
            "rating": {"score": rng.randint(10, 50), "count": rng.randint(0, 900)},
        })
    return items


def word(rng):
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "pa", "xo", "bel", "tor"]
    return "".join(rng.choice(syll) for _ in range(rng.randint(1, 3)))


def css_chunk(rng):
    props = [("margin", lambda: f"{rng.randint(0, 48)}px {rng.randint(0, 48)}px"),
             ("padding", lambda: f"{rng.randint(0, 32)}px"),
             ("color", lambda: f"#{rng.randrange(0x1000000):06x}"),
             ("background", lambda: f"rgba({rng.randint(0, 255)}, {rng.randint(0, 255)}, {rng.randint(0, 255)}, 0.{rng.randint(1, 9)})"),
             ("display", lambda: rng.choice(["block", "flex", "grid", "inline-block", "none"])),
             ("font-size", lambda: f"{rng.randint(10, 40) / 10}rem"),
             ("border-radius", lambda: f"{rng.randint(0, 12)}px"),
             ("line-height", lambda: str(rng.choice([1, 1.2, 1.4, 1.5, 1.75]))),
             ("transition", lambda: f"opacity {rng.randint(1, 9) * 50}ms ease-in-out")]
    sel = rng.choice([".", "#", ""]) + word(rng) + rng.choice(["", ":hover", " > li", "__item", "--active"])
    body = "".join(f"  {p}: {v()};\n" for p, v in rng.sample(props, rng.randint(2, 6)))
    return f"{sel} {{\n{body}}}\n\n"


def js_chunk(rng):
    name = word(rng) + rng.choice(["Handler", "Store", "View", "Util", "Cache", ""])
    args = ", ".join(word(rng) for _ in range(rng.randint(0, 3)))
    lines = [f"  const {word(rng)} = {rng.randint(0, 9999)};",
             f"  if ({word(rng)} && {word(rng)}.length > {rng.randint(0, 64)}) {{ return null; }}",
             f"  console.debug('{word(rng)}', {rng.randint(0, 99)});",
             f"  for (let i = 0; i < {rng.randint(2, 32)}; i++) {{ out.push(i * {rng.randint(2, 9)}); }}",
             f"  state['{word(rng)}'] = {rng.choice(['true', 'false', 'undefined', '[]', '{}'])};"]
    body = "\n".join(rng.choice(lines) for _ in range(rng.randint(2, 6)))
    return f"export function {name}({args}) {{\n  const out = [];\n{body}\n  return out;\n}}\n\n"


def html_chunk(rng):
    tag = rng.choice(["div", "section", "nav", "li", "p", "span"])
    return (f'<{tag} class="{word(rng)} {word(rng)}" data-id="{rng.randint(1, 99999)}">'
            f'<a href="/{word(rng)}/{word(rng)}">{word(rng).title()} {word(rng)}</a></{tag}>\n')


def svg_chunk(rng):
    return rng.choice([
        f'  <circle cx="{rng.randint(0, 512)}" cy="{rng.randint(0, 512)}" r="{rng.randint(1, 64)}" fill="#{rng.randrange(0x1000000):06x}"/>\n',
        f'  <rect x="{rng.randint(0, 512)}" y="{rng.randint(0, 512)}" width="{rng.randint(1, 99)}" height="{rng.randint(1, 99)}" rx="{rng.randint(0, 8)}"/>\n',
        f'  <path d="M{rng.randint(0, 512)} {rng.randint(0, 512)} L{rng.randint(0, 512)} {rng.randint(0, 512)} Q{rng.randint(0, 512)} {rng.randint(0, 512)} {rng.randint(0, 512)} {rng.randint(0, 512)} Z" stroke="#{rng.randrange(0x1000000):06x}"/>\n',
        f'  <symbol id="icon-{word(rng)}" viewBox="0 0 24 24"><path d="M{rng.randint(0, 24)} {rng.randint(0, 24)}h{rng.randint(1, 9)}v{rng.randint(1, 9)}z"/></symbol>\n'])


def fill(rng, size, head, tail, chunk, pad_open, pad_close):
    """head + chunks + padding comment + tail, exactly `size` bytes."""
    room = size - len(head) - len(tail) - len(pad_open) - len(pad_close)
    parts, used = [], 0
    while True:
        c = chunk(rng)
        if used + len(c) > room:
            break
        parts.append(c)
        used += len(c)
    pad = "x" * (room - used)
    out = (head + "".join(parts) + pad_open + pad + pad_close + tail).encode()
    assert len(out) == size, (len(out), size)
    return out


def make_text(rng, name, size):
    if name.endswith(".css"):
        return fill(rng, size, f"/* {name} (synthetic) */\n", "", css_chunk, "/* ", " */\n")
    if name.endswith(".js"):
        return fill(rng, size, f"'use strict';\n// {name} (synthetic)\n", "", js_chunk, "// ", "\n")
    if name.endswith(".html"):
        return fill(rng, size, f"<!-- {name} (synthetic) -->\n<div class=\"{name[:-5]}\">\n",
                    "</div>\n", html_chunk, "<!-- ", " -->\n")
    if name.endswith(".svg"):
        return fill(rng, size, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">\n',
                    "</svg>\n", svg_chunk, "  <!-- ", " -->\n")
    if name.endswith(".json"):
        icons = [{"src": f"/static/icon-{s}.png", "sizes": f"{s}x{s}", "type": "image/png"}
                 for s in (48, 72, 96, 144, 192, 256, 384, 512)]
        doc = {"name": "Saturn Arena Demo", "short_name": "arena", "start_url": "/",
               "display": "standalone", "background_color": "#101820",
               "theme_color": "#f2aa4c", "icons": icons, "description": ""}
        base = json.dumps(doc, indent=2) + "\n"
        need = size - len(base.encode())
        assert need >= 0
        doc["description"] = " ".join(word(rng) for _ in range(need))[:need].ljust(need, "a")
        out = (json.dumps(doc, indent=2) + "\n").encode()
        assert len(out) == size, (len(out), size)
        return out
    raise ValueError(name)


def make_binary(rng, name, size):
    if name.endswith(".webp"):
        head = b"RIFF" + (size - 8).to_bytes(4, "little") + b"WEBPVP8 "
    else:
        head = b"wOF2" + b"\x00\x01\x00\x00" + size.to_bytes(4, "big")
    return head + rng.randbytes(size - len(head))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=20260501)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(os.path.join(args.dir, "static"), exist_ok=True)
    with open(os.path.join(args.dir, "dataset.json"), "w") as f:
        json.dump(make_dataset(rng), f, indent=2)
        f.write("\n")
    brotli = shutil.which("brotli")
    if not brotli:
        print("gen_data: brotli program not found; writing no .br siblings", file=sys.stderr)
    for name, size in STATIC_FILES:
        path = os.path.join(args.dir, "static", name)
        binary = name.endswith(BINARY_EXTS)
        data = make_binary(rng, name, size) if binary else make_text(rng, name, size)
        with open(path, "wb") as f:
            f.write(data)
        if binary:
            continue
        with open(path + ".gz", "wb") as f:
            f.write(gzip.compress(data, compresslevel=9, mtime=0))
        if brotli:
            subprocess.run([brotli, "-q", "11", "-f", "-n", "-o", path + ".br", path], check=True)
            os.chmod(path + ".br", 0o644)
    return 0


if __name__ == "__main__":
    sys.exit(main())
