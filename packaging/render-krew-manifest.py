#!/usr/bin/env python3
"""Renders a krew-release-bot template (krew-manifests/<plugin>.yaml) the way the bot does.

Usage: render-krew-manifest.py TEMPLATE TAG RELEASE_URL DIST > MANIFEST

Template comments (`{{- /* ... */ -}}`) are dropped, as Go's text/template drops them;
`{{ .TagName }}` becomes TAG; each `{{addURIAndSha "URL" .TagName }}` becomes
`uri:` and `sha256:` of the archive named by URL's last path element, read from
DIST (the bot downloads the URL instead). The uri is RELEASE_URL/<archive>, so a
test can point it at a local server. A platform whose archive is not in DIST (a
build of some platforms only) is left out; no platform left is an error.
"""
import hashlib
import os
import re
import sys

ADD = re.compile(r'^(\s*)\{\{\s*addURIAndSha\s+"([^"]+)"\s+\.TagName\s*\}\}\s*$')
TAG = re.compile(r"\{\{\s*\.TagName\s*\}\}")
# A Go template comment, `{{/* ... */}}`, with text/template's trim markers: `{{- ` drops the
# white space before it, ` -}}` the white space (newlines included) after it.
COMMENT = re.compile(r"(\s*\{\{- |\{\{)/\*.*?\*/( -\}\}\s*|\}\})", re.S)


def main():
    template, tag, release_url, dist = sys.argv[1:5]
    with open(template, encoding="utf-8") as f:
        lines = COMMENT.sub("", f.read()).splitlines()
    head, entries, entry = [], [], None
    for line in lines:
        if line.startswith("  - selector:"):
            if entry is not None:
                entries.append(entry)
            entry = []
        if entry is None:
            head.append(line)
        else:
            entry.append(line)
    if entry is not None:
        entries.append(entry)
    out = [f"# Rendered by scripts/package from {template} for {tag}. Do not edit: edit the template."]
    out += [TAG.sub(tag, line) for line in head]
    kept = 0
    for entry in entries:
        rendered, missing = [], None
        for line in entry:
            m = ADD.match(line)
            if not m:
                rendered.append(TAG.sub(tag, line))
                continue
            archive = TAG.sub(tag, m.group(2)).rsplit("/", 1)[-1]
            path = os.path.join(dist, archive)
            if not os.path.exists(path):
                missing = archive
                break
            with open(path, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
            rendered.append(f"{m.group(1)}uri: {release_url}/{archive}")
            rendered.append(f"{m.group(1)}sha256: {sha}")
        if missing is None:
            out += rendered
            kept += 1
    text = "\n".join(out) + "\n"
    if kept == 0:
        sys.exit(f"{template}: none of its platforms' archives is in {dist}")
    if "{{" in text:
        sys.exit(f"{template}: a template action is left after rendering")
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
