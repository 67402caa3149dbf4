#!/usr/bin/env python3
"""Checks labelled-sentence files against GUIDE.md; prints one line per problem.

usage: check_labels.py FILE...   (exit 1 when any problem is found)
"""
import json
import re
import sys

MARK = re.compile(r"\[\[(PER|ORG|PROD|LOC|ID):([^\[\]]+?)\]\]")
TYPES = {"PER", "ORG", "PROD", "LOC", "ID"}
PREDICATES = {"works_at", "reports_to", "uses", "located_in", "part_of", "partner_of",
              "customer_of", "competes_with", "makes", "acquired"}
ENTRY_TYPES = {"fact", "decision", "event", "preference", "goal", "relationship",
               "action_item", "none"}
STYLES = {"email", "chat", "meeting_notes", "ticket", "crm_note", "document", "signature",
          "forwarded", "list", "invite"}


def parse(text):
    """The plain text and its spans [(begin, end, type)] in characters of the plain text."""
    plain, spans, pos = [], [], 0
    for m in MARK.finditer(text):
        plain.append(text[pos:m.start()])
        begin = sum(len(p) for p in plain)
        plain.append(m.group(2))
        spans.append((begin, begin + len(m.group(2)), m.group(1)))
        pos = m.end()
    plain.append(text[pos:])
    return "".join(plain), spans


def check(path):
    problems, seen = [], set()
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        where = f"{path}:{n}"
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where}: not JSON: {e}")
            continue
        for field in ("id", "writer", "style", "industry", "text", "relations", "entry"):
            if field not in item:
                problems.append(f"{where}: missing field {field}")
        if item.get("id") in seen:
            problems.append(f"{where}: id {item.get('id')} twice")
        seen.add(item.get("id"))
        if item.get("style") not in STYLES:
            problems.append(f"{where}: style {item.get('style')!r} is not one of the guide's")
        text = item.get("text", "")
        plain, spans = parse(text)
        if "[[" in plain or "]]" in plain:
            problems.append(f"{where}: a mark that does not parse (want [[TYPE:name]] with TYPE in {sorted(TYPES)})")
        for b, e, _ in spans:
            if plain[b:e] != plain[b:e].strip():
                problems.append(f"{where}: span {plain[b:e]!r} has spaces around it")
        names = {plain[b:e] for b, e, _ in spans}
        for r in item.get("relations", []):
            if r.get("p") not in PREDICATES:
                problems.append(f"{where}: predicate {r.get('p')!r} is not one of the guide's")
            for end in ("s", "o"):
                if r.get(end) not in names:
                    problems.append(f"{where}: relation end {r.get(end)!r} is not a marked entity")
        entry = item.get("entry") or {}
        if entry.get("type") not in ENTRY_TYPES:
            problems.append(f"{where}: entry type {entry.get('type')!r} is not one of the guide's")
    return problems


def main():
    problems = [p for path in sys.argv[1:] for p in check(path)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
