#!/usr/bin/env python3
"""`scripts/bench watch`'s baseline: live blame without `kubectl owners watch`.

Runs `kubectl get TYPE -A -w -o json --show-managed-fields --output-watch-events` for each
TYPE, keeps the last version of every object, and for every change prints one JSON line
per changed field with the manager whose managedFields entry moved with it, the same
attribution as the plugin's core (docs/owners-output.md):

  {"type": "change", "time": RFC 3339 (ms), "kind", "namespace", "name", "field",
   "before", "after", "manager", "operation", "subresource"}

An entry moved when it is new, has a newer `time`, or owns fields it did not own. One
moved entry: its manager. None: the field's one owner, if it has one. Otherwise the
change is unattributed (manager null).

Usage: watch_blame.py SECONDS EXPECTED TYPE...   (EXPECTED: how many objects the first
list holds; "Watching N object(s)" goes to stderr once they are all in.) At the end a
summary line goes to stderr, with this process's and the largest kubectl's peak RSS.
"""

import json
import queue
import resource
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

BOOKKEEPING = {"resourceVersion", "generation", "managedFields"}


def read_events(kind, stream, out):
    """kubectl prints each watch event as one line of JSON (indented JSON is read too)."""
    lines = []
    for line in stream:
        lines.append(line)
        if not line.rstrip().endswith("}"):
            continue
        try:
            event = json.loads("".join(lines))
        except ValueError:
            continue
        out.put((time.time(), kind, event))
        lines = []
    out.put((time.time(), kind, None))


def entries_of(obj):
    """managedFields as {(manager, operation, subresource): (time, set of paths)}."""
    out = {}
    for e in obj.get("metadata", {}).get("managedFields") or []:
        paths = set()
        walk(e.get("fieldsV1") or {}, (), paths)
        out[(e.get("manager", ""), e.get("operation", ""), e.get("subresource", ""))] = (e.get("time"), paths)
    return out


def walk(node, prefix, out):
    for key, child in node.items():
        if key == ".":
            continue
        path = prefix + (key,)
        out.add(path)
        walk(child, path, out)


def walked(value):
    """None (absent) or a map with fields: walked field by field; anything else: compared whole."""
    return value is None or isinstance(value, dict) and bool(value)


def changed(before, after, at, out):
    """Maps walked to their leaves, lists and scalars compared whole (as the core does)."""
    if walked(before) and walked(after) and (before or after):
        old, new = before or {}, after or {}
        for name in list(new) + [k for k in old if k not in new]:
            if at == ("metadata",) and name in BOOKKEEPING:
                continue
            changed(old.get(name), new.get(name), at + (name,), out)
    elif before != after:
        out.append((at, before, after))


def attribute(before_entries, after_entries, at):
    moved = [
        identity
        for identity, (stamp, paths) in after_entries.items()
        if identity not in before_entries
        or before_entries[identity][0] != stamp
        or not paths <= before_entries[identity][1]
    ]
    if len(moved) == 1:
        return moved[0]
    if moved:
        return None
    fields = tuple("f:" + name for name in at)
    owners = {
        identity
        for entries in (before_entries, after_entries)
        for identity, (_, paths) in entries.items()
        if any(p[: len(fields)] == fields for p in paths)
    }
    return owners.pop() if len(owners) == 1 else None


def stamp(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def main():
    seconds, expected, types = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    events = queue.Queue(maxsize=10000)
    children = []
    for kind in types:
        child = subprocess.Popen(
            ["kubectl", "get", kind, "-A", "-w", "-o", "json", "--show-managed-fields", "--output-watch-events"],
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1 << 16,
        )
        children.append(child)
        threading.Thread(target=read_events, args=(kind, child.stdout, events), daemon=True).start()
    known = {}
    ready = False
    counts = {"changes": 0, "unattributed": 0}
    deadline = time.time() + seconds
    out = sys.stdout
    open_streams = len(children)
    while open_streams:
        left = deadline - time.time()
        if left <= 0:
            break
        try:
            received, kind, event = events.get(timeout=left)
        except queue.Empty:
            break
        if event is None:
            open_streams -= 1
            continue
        listed = event["object"]
        # The first list comes as one List per page of 500 when there are more objects.
        objects = (listed.get("items") or []) if listed.get("kind", "").endswith("List") else [listed]
        for obj in objects:
            meta = obj.get("metadata", {})
            key = (kind, meta.get("namespace"), meta.get("name"))
            if event["type"] == "DELETED":
                known.pop(key, None)
                continue
            after_entries = entries_of(obj)
            meta.pop("managedFields", None)
            previous = known.get(key)
            known[key] = (obj, after_entries)
            if not ready:
                if len(known) >= expected:
                    ready = True
                    print(f"Watching {len(known)} object(s)", file=sys.stderr, flush=True)
                continue
            before, before_entries = previous if previous else ({}, {})
            found = []
            changed(before, obj, (), found)
            for at, old, new in found:
                writer = attribute(before_entries, after_entries, at)
                counts["changes"] += 1
                counts["unattributed"] += writer is None
                record = {"type": "change", "time": stamp(received), "kind": obj.get("kind"),
                          "namespace": meta.get("namespace"), "name": meta.get("name"),
                          "field": "".join("." + name for name in at), "before": old, "after": new,
                          "manager": writer and writer[0], "operation": writer and writer[1],
                          "subresource": writer and writer[2]}
                out.write(json.dumps(record) + "\n")
        out.flush()
    for child in children:
        child.terminate()
        child.wait()
    counts["objects"] = len(known)
    counts["python_max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    counts["kubectl_max_rss_kb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"type": "summary", **counts}), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
