#!/usr/bin/python3
"""Checks files of labelled statement pairs (GUIDE.md): every line one JSON object with the
fields and kinds the guide names, ids unique across the files given, the two sides different.

usage: check_pairs.py FILE...
"""
import collections
import json
import sys

KINDS = {"paraphrase", "near_duplicate", "different_fact", "related", "unrelated"}
TYPES = {"fact", "decision", "event", "preference", "goal", "relationship", "action_item"}
FIELDS = {"id", "kind", "type", "a", "b", "note"}


def check(paths):
    errors, ids, kinds = [], set(), collections.Counter()
    for path in paths:
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            where = f"{path}:{n}"
            if not line.strip():
                errors.append(f"{where}: an empty line")
                continue
            try:
                p = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{where}: not JSON ({e})")
                continue
            if not isinstance(p, dict) or set(p) != FIELDS:
                errors.append(f"{where}: the fields must be exactly {sorted(FIELDS)}")
                continue
            if not all(isinstance(p[k], str) and p[k].strip() for k in FIELDS):
                errors.append(f"{where}: every field is a non-empty string")
                continue
            if p["id"] in ids:
                errors.append(f"{where}: id {p['id']} used before")
            ids.add(p["id"])
            if p["kind"] not in KINDS:
                errors.append(f"{where}: kind {p['kind']!r} is not one of {sorted(KINDS)}")
            if p["type"] not in TYPES:
                errors.append(f"{where}: type {p['type']!r} is not one of {sorted(TYPES)}")
            if p["a"].strip() == p["b"].strip():
                errors.append(f"{where}: a and b are the same text")
            for side in ("a", "b"):
                if len(p[side].split()) > 60:
                    errors.append(f"{where}: {side} is over 60 words")
            kinds[p["kind"]] += 1
    return errors, kinds


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    errors, kinds = check(sys.argv[1:])
    for e in errors[:50]:
        print(e)
    if errors:
        print(f"{len(errors)} errors")
        sys.exit(1)
    print("OK", sum(kinds.values()), "pairs:", dict(kinds))


if __name__ == "__main__":
    main()
