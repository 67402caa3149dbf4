#!/usr/bin/env python3
"""Where the default relation reading misses, on one set of `engram_bench relations`.

  ENGRAM_BENCH_RELATIONS_SHOW=1 build/bin/engram_bench relations 2>show.txt >/dev/null
  tools/bench/relations_misses.py show.txt reld2 tests/data/relations/dev2.jsonl

With ENGRAM_BENCH_RELATIONS_SHOW set, the bench writes, message by message and for each reading
it compares (the default, the cue rules + relation classifier, last), the relations labelled and
not read ("MISS"), read and not labelled ("read"), and the labelled ends not among the names
read ("ENDS"). This takes the default's lines of the messages whose ids start with PREFIX and
sorts each miss into: an end not among the names read; a relation read between the two names
with another predicate or direction; or both names read and nothing read between them, the
last by how far apart the two names are written in the message (the fewest sentence ends and
line breaks between any of their occurrences).
"""
import collections
import json
import re
import sys

# schemas::relation_predicates less relates_to (never labelled, not scored), and acquired (labelled,
# not yet a predicate of the graph).
PREDICATES = ["works_at", "reports_to", "uses", "located_in", "part_of", "partner_of", "customer_of",
              "competes_with", "defines", "mentions", "contains", "makes", "acquired"]


def triple(text):
    for p in PREDICATES:
        if f" {p} " in text:
            s, o = text.split(f" {p} ", 1)
            return s, p, o
    raise ValueError(f"no predicate in {text!r}")


def default_block(path, prefix):
    """The lines of the last reading compared: a reading's lines start again at the first message."""
    blocks, last = [], None
    for line in open(path):
        if not line.startswith(prefix):
            continue
        mid = line.split()[0]
        if last is None or mid < last:
            blocks.append([])
        blocks[-1].append(line.rstrip("\n"))
        last = mid
    return blocks[-1] if blocks else []


# A stop after these is not a sentence end (names read without their legal form leave "Inc. "
# between two names).
NOT_ENDS = re.compile(r"\b(?:inc|ltd|co|corp|llc|plc|gmbh|bv|st|dr|mr|mrs|ms|e\.g|i\.e|etc|vs|no)$")


def breaks_between(text, a, b):
    """The fewest sentence ends and line breaks between an occurrence of a and one of b, a run of
    them counted once (None: either is not written as named). A rough count: the engine's own
    sentence splitting, and its reading of a signature with the sentence above it, differ."""
    best = None
    for i in (m.start() for m in re.finditer(re.escape(a), text)):
        for k in (m.start() for m in re.finditer(re.escape(b), text)):
            lo, hi = sorted((i, k))
            seg = text[lo:hi]
            n = sum(1 for m in re.finditer(r"(?:[.!?]+(?=\s|$)|\n)(?:\s*\n)*", seg)
                    if not (m.group().startswith(".") and NOT_ENDS.search(seg[:m.start()])))
            best = n if best is None else min(best, n)
    return best


def main():
    show, prefix, labelled = sys.argv[1:4]
    bodies = {}
    for line in open(labelled):
        if line.strip():
            j = json.loads(line)
            bodies[j["eventId"]] = (j.get("subject", "") + "\n" + j["body"]).lower()
    missed, read, ends = (collections.defaultdict(list) for _ in range(3))
    for line in default_block(show, prefix):
        mid, kind, rest = line.split(None, 2)
        target = {"MISS": missed, "read": read, "ENDS": ends}.get(kind)
        if target is not None:
            target[mid].append(rest)
    kinds = collections.Counter()
    for mid, misses in missed.items():
        related = {frozenset((s, o)) for s, _, o in map(triple, read.get(mid, []))}
        # "a / b not among: ...": the labelled pair in label order (a miss of partner_of or
        # competes_with names it in either order).
        unread = {frozenset(e.split(" not among:", 1)[0].split(" / ", 1)) for e in ends.get(mid, [])}
        for m in misses:
            s, _, o = triple(m)
            if frozenset((s, o)) in unread:
                kinds["an end not among the names read"] += 1
            elif frozenset((s, o)) in related:
                kinds["a relation read between the two, another predicate or direction"] += 1
            else:
                n = breaks_between(bodies.get(mid, ""), s, o)
                where = ("not written as named" if n is None else "in one sentence" if n == 0 else
                         "one or two breaks apart" if n <= 2 else "three or more breaks apart")
                kinds[f"both names read, nothing read between them: {where}"] += 1
    total = sum(kinds.values())
    print(f"{prefix}: {total} labelled relations missed, {sum(len(v) for v in read.values())} read and not labelled")
    for k, v in sorted(kinds.items()):
        print(f"  {v:4d} ({v / max(1, total):.2f}) {k}")


if __name__ == "__main__":
    main()
