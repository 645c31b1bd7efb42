#!/usr/bin/env python3
"""`scripts/bench drift`'s baseline: what a user writes without `kubectl owners drift`.

Reads the output of `kubectl get TYPE -A -o json --show-managed-fields` (a List) on
stdin, checks every object's managedFields against an OwnershipPolicy with the
semantics of docs/ownership-policy.md, and prints the counts as one JSON line:
{"objects": N, "objectsWithViolations": N, "violations": N}.

Usage: drift_check.py POLICY.yaml < list.json

The semantics, as the plugin's core applies them: a violation is a leaf of a manager's
field set (a path with no other path of the set under it) that is not permitted; a leaf
is permitted when one of its prefixes (in kubectl's notation) is ignored (by the
defaults or a rule that applies to the object), when its manager is expected by a rule
that applies, when a rule that applies allows that manager on one of its prefixes, or
when the default rule allows the manager (an Update by a well-known controller). Manager
classes and label selectors are refused: `--learn` writes neither, and a baseline that
skipped them would not be the same check.
"""

import json
import re
import sys

import yaml

DEFAULT_IGNORED = [
    ".status",
    ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
    ".metadata.annotations.deployment.kubernetes.io/revision",
    ".metadata.annotations.kubectl.kubernetes.io/restartedAt",
    ".metadata.annotations.autoscaling.alpha.kubernetes.io/*",
]
DEFAULT_CONTROLLERS = [
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
    "cloud-controller-manager",
    "*-controller",
    "*-controller-manager",
]
CLASSES = {"human", "controller", "applier"}


def glob(pattern):
    """A policy glob: `*` any run of characters (dots included), `?` one character."""
    text = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(text + r"\Z", re.S)


def globs(patterns):
    return [glob(p) for p in patterns or []]


def any_match(compiled, text):
    return any(g.match(text) for g in compiled)


def covers(compiled, texts):
    return any(g.match(t) for g in compiled for t in texts)


def go_quote(value):
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def element_text(key):
    """A FieldsV1 key in kubectl's notation: f:name -> .name, k:{...} -> [a="b"], v:x -> [=x], i:N -> [N]."""
    kind, rest = key[0], key[2:]
    if kind == "f":
        return "." + rest
    if kind == "k":
        fields = json.loads(rest)
        return "[" + ",".join(f"{k}={go_quote(v)}" for k, v in fields.items()) + "]"
    if kind == "v":
        return "[=" + go_quote(json.loads(rest)) + "]"
    return "[" + rest + "]"


def leaves(node, prefix, out):
    """The leaves of a FieldsV1 set, each as its prefixes' texts (shortest first)."""
    for key, child in node.items():
        if key == ".":
            continue
        text = (prefix[-1] if prefix else "") + element_text(key)
        texts = prefix + [text]
        if any(k != "." for k in child):
            leaves(child, texts, out)
        else:
            out.append(texts)


class Rule:
    def __init__(self, raw, index):
        match = raw.get("match") or {}
        if match.get("labelSelector") is not None:
            sys.exit("drift_check.py: label selectors are not implemented by this baseline")
        self.name = raw.get("name", f"rules[{index}]")
        self.kinds = match.get("kinds") or []
        self.namespaces = globs(match.get("namespaces"))
        self.names = globs(match.get("names"))
        self.managers = self.manager_globs(raw.get("managers"))
        self.allowed = [(globs(a.get("fields")), self.manager_globs(a.get("managers"))) for a in raw.get("allowed") or []]
        self.ignored = globs(raw.get("ignored"))
        self.kind_globs = [(("/" in k), glob(k)) for k in self.kinds]

    @staticmethod
    def manager_globs(patterns):
        for p in patterns or []:
            if p in CLASSES:
                sys.exit("drift_check.py: manager classes are not implemented by this baseline")
        return globs(patterns)

    def applies(self, group, kind, namespace, name):
        kind_ok = not self.kind_globs or any(
            g.match(f"{group}/{kind}" if slash else kind) for slash, g in self.kind_globs
        )
        return (
            kind_ok
            and (not self.namespaces or any_match(self.namespaces, namespace))
            and (not self.names or any_match(self.names, name))
        )


def main():
    with open(sys.argv[1]) as f:
        policy = yaml.safe_load(f)
    defaults = policy.get("defaults", True)
    rules = [Rule(r, i) for i, r in enumerate(policy.get("rules") or [])]
    default_ignored = globs(DEFAULT_IGNORED) if defaults else []
    default_controllers = globs(DEFAULT_CONTROLLERS)

    listed = json.load(sys.stdin)
    items = listed.get("items", [listed]) if listed.get("kind", "").endswith("List") else [listed]
    objects = with_violations = violations = 0
    for obj in items:
        objects += 1
        meta = obj.get("metadata") or {}
        api_version = obj.get("apiVersion", "")
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        applying = [r for r in rules if r.applies(group, obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))]
        found = 0
        for entry in meta.get("managedFields") or []:
            manager = entry.get("manager", "")
            if defaults and entry.get("operation") == "Update" and any_match(default_controllers, manager):
                continue
            if any(any_match(r.managers, manager) for r in applying):
                continue
            allowances = [fields for r in applying for fields, managers in r.allowed if any_match(managers, manager)]
            ignored = default_ignored + [g for r in applying for g in r.ignored]
            paths = []
            leaves(entry.get("fieldsV1") or {}, [], paths)
            for texts in paths:
                if covers(ignored, texts) or any(covers(fields, texts) for fields in allowances):
                    continue
                found += 1
        violations += found
        with_violations += found > 0
    print(json.dumps({"objects": objects, "objectsWithViolations": with_violations, "violations": violations}))


if __name__ == "__main__":
    main()
