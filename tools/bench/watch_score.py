#!/usr/bin/env python3
"""`scripts/bench watch`: one watcher's output checked against the writer's log.

Usage: watch_score.py WRITER_LOG OUTPUT.jsonl

WRITER_LOG has one line per change that landed (`NAMESPACE NAME VALUE MANAGER SENT_MS
DONE_MS`, from bench_write); OUTPUT.jsonl is the watcher's JSON Lines (`kubectl owners watch -o json`
or watch_blame.py: the same `change` records). Prints one JSON object: changes made,
reported (each made change seen as a `change` record of `.data.v` with its value),
attributed to the manager that made it, to another, or to nobody, reported twice, and the
lag (the record's time minus the time the write was sent): median, p95, max,
in milliseconds.
"""

import json
import math
import sys
from datetime import datetime


def millis(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000.0


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]  # nearest rank


def main():
    made = {}
    with open(sys.argv[1]) as f:
        for line in f:
            namespace, name, value, manager, sent, _done = line.split()
            made[(namespace, name, value)] = (manager, int(sent))
    seen = set()
    right = wrong = nobody = twice = 0
    lags = []
    with open(sys.argv[2]) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") != "change" or record.get("field") != ".data.v":
                continue
            key = (record.get("namespace"), record.get("name"), record.get("after"))
            if key not in made:
                continue
            if key in seen:
                twice += 1
                continue
            seen.add(key)
            manager, sent = made[key]
            if record.get("manager") is None:
                nobody += 1
            elif record["manager"] == manager:
                right += 1
            else:
                wrong += 1
            lags.append(millis(record["time"]) - sent)
    print(json.dumps({
        "made": len(made), "reported": len(seen), "missed": len(made) - len(seen),
        "attributed_right": right, "attributed_wrong": wrong, "unattributed": nobody, "reported_twice": twice,
        "lag_ms_median": percentile(lags, 0.5), "lag_ms_p95": percentile(lags, 0.95),
        "lag_ms_max": max(lags) if lags else None,
    }))


if __name__ == "__main__":
    main()
