#!/usr/bin/env python3
"""Writes link stubs (.tbd) for the macOS system frameworks the plugins link, for cargo-zigbuild.

Usage: macos-framework-stubs.py OUTDIR TARGET...

Zig links Mach-O binaries without a macOS SDK but ships only libSystem's stub;
the TLS stack (rustls-native-certs -> security-framework) and iana-time-zone
link Security and CoreFoundation. A .tbd stub tells the linker which symbols a
framework exports and under which install name, nothing more: the binary then
loads the real framework on the user's Mac. The symbols are the ones the
dependency tree's `-sys` crates declare for each framework (every crate of the
tree for TARGET that has `#[link(name = "X", kind = "framework")]`), read from
their sources as cargo resolved them, so the stubs follow Cargo.lock. A crate
linking two frameworks is refused (we could not tell whose symbol is whose).
OUTDIR gets X.framework/X.tbd for each framework X; pass -F OUTDIR to the linker.
"""
import json
import os
import re
import subprocess
import sys

LINK = re.compile(r'link\(\s*name\s*=\s*"(\w+)"\s*,\s*kind\s*=\s*"framework"')
SYMBOL = re.compile(r"\bpub\s+(?:unsafe\s+)?(?:fn\s+(\w+)\s*[(<]|static\s+(?:mut\s+)?(\w+)\s*:)")
ARCH = {"x86_64-apple-darwin": "x86_64-macos", "aarch64-apple-darwin": "arm64-macos"}


def crate_sources(root):
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".rs"):
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    yield f.read()


def main():
    outdir, targets = sys.argv[1], sys.argv[2:]
    frameworks = {}
    packages = {}
    for target in targets:
        meta = json.loads(
            subprocess.run(
                ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", target],
                check=True, capture_output=True, text=True,
            ).stdout
        )
        ids = {n["id"] for n in meta["resolve"]["nodes"]}
        for p in meta["packages"]:
            if p["id"] in ids and p["source"]:
                packages[p["id"]] = p
    for p in packages.values():
        src = os.path.join(os.path.dirname(p["manifest_path"]), "src")
        texts = list(crate_sources(src))
        linked = sorted({m for t in texts for m in LINK.findall(t)})
        if not linked:
            continue
        if len(linked) > 1:
            sys.exit(f"{p['name']} {p['version']} links several frameworks ({', '.join(linked)}): cannot split its symbols")
        symbols = frameworks.setdefault(linked[0], set())
        for t in texts:
            for fn, static in SYMBOL.findall(t):
                symbols.add("_" + (fn or static))
    arches = ", ".join(ARCH[t] for t in targets)
    for name, symbols in sorted(frameworks.items()):
        os.makedirs(os.path.join(outdir, f"{name}.framework"), exist_ok=True)
        lines = [
            "--- !tapi-tbd",
            "tbd-version:     4",
            f"targets:         [ {arches} ]",
            f"install-name:    '/System/Library/Frameworks/{name}.framework/Versions/A/{name}'",
            "exports:",
            f"  - targets:         [ {arches} ]",
            "    symbols:         [ " + ",\n                       ".join(sorted(symbols)) + " ]",
            "...",
        ]
        with open(os.path.join(outdir, f"{name}.framework", f"{name}.tbd"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{name}: {len(symbols)} symbols", file=sys.stderr)


if __name__ == "__main__":
    main()
