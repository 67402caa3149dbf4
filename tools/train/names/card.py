#!/usr/bin/python3
"""The figures of the data card (tools/train/data/README.md): items, marks by type, styles,
industries and relations of labelled files, by writer.

usage: card.py FILE...
"""
import collections
import json
import re
import sys

MARK = re.compile(r"\[\[(PER|ORG|PROD|LOC|ID):([^\[\]]+?)\]\]")


def main():
    writers = collections.Counter()
    styles, industries, types, predicates, entries = (collections.Counter() for _ in range(5))
    none = 0
    for f in sys.argv[1:]:
        for line in open(f, encoding="utf-8"):
            if not line.strip():
                continue
            it = json.loads(line)
            writers[it["writer"]] += 1
            styles[it["style"]] += 1
            industries[it["industry"]] += 1
            marks = MARK.findall(it["text"])
            none += not marks
            types.update(t for t, _ in marks)
            predicates.update(r["p"] for r in it.get("relations", []))
            entries[(it.get("entry") or {}).get("type")] += 1
    print(f"items {sum(writers.values())}, with no mark {none}; marks {sum(types.values())}")
    for name, c in (("writers", writers), ("types", types), ("styles", styles), ("industries", industries),
                    ("relations", predicates), ("entries", entries)):
        print(f"{name} ({len(c)}): " + ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda x: (-x[1], str(x[0])))))


if __name__ == "__main__":
    main()
