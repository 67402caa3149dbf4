#!/usr/bin/env python3
"""How hard a set of long conversations is, decided without Engram: recall@1/5/10 of a plain BM25
over the raw messages (k1 1.2, b 0.75; a question is answered when one of its answer messages is
among the n best), and the share of answerable questions that use no content word of their
answer messages (the speakers' names not counted).

usage: conversations_difficulty.py DIR   (the .json files of tests/data/conversations/<set>/)
"""
import collections
import json
import math
import pathlib
import re
import sys

STOP = set("""a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves ok oh yeah yes lol haha im dont its
thats get got go going gonna one really like just also would could still did does""".split())


def stem(w):
    for suffix in ("ingly", "edly", "ing", "ed", "ies", "es", "s", "ly"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


def terms(text):
    return [stem(w) for w in re.findall(r"[a-z0-9]+", text.lower().replace("'", "")) if w not in STOP]


class BM25:
    """The index of one conversation's messages, built once; top() ranks them for a query."""

    def __init__(self, docs):
        self.lengths = {i: len(t) for i, t in docs.items()}
        self.avg = sum(self.lengths.values()) / max(1, len(self.lengths))
        self.df = collections.Counter(w for t in docs.values() for w in set(t))
        self.tfs = {i: collections.Counter(t) for i, t in docs.items()}

    def top(self, query, n):
        q = set(terms(query))
        scored = []
        for i, tf in self.tfs.items():
            s = 0.0
            for w in q:
                f = tf.get(w, 0)
                if f:
                    idf = math.log(1 + (len(self.tfs) - self.df[w] + 0.5) / (self.df[w] + 0.5))
                    s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lengths[i] / self.avg))
            if s > 0:
                scored.append((-s, i))
        scored.sort()
        return [i for _, i in scored[:n]]


def main():
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])  # questions, @1, @5, @10
    no_shared, answerable, messages = 0, 0, 0
    files = sorted(pathlib.Path(sys.argv[1]).glob("*.json"))
    for f in files:
        c = json.load(open(f, encoding="utf-8"))
        speakers = {stem(s.lower()) for s in c["speakers"]}
        docs = {m["id"]: terms(m["text"]) for m in c["messages"]}
        messages += len(docs)
        index = BM25(docs)
        for q in c["questions"]:
            if not q["answers"]:
                continue
            answerable += 1
            evidence = set(w for a in q["answers"] for w in docs[a]) - speakers
            no_shared += not (set(terms(q["question"])) - speakers) & evidence
            top = index.top(q["question"], 10)
            for kind in (q["kind"], "all"):
                r = rows[kind]
                r[0] += 1
                for k, n in ((1, 1), (2, 5), (3, 10)):
                    r[k] += any(a in top[:n] for a in q["answers"])
    print(f"{len(files)} conversations, {messages} messages, {answerable} answerable questions")
    print(f"{'kind':10} {'questions':>9} {'BM25 @1':>8} {'@5':>6} {'@10':>6}")
    for kind in ("single", "multi", "temporal", "inference", "all"):
        r = rows[kind]
        if r[0]:
            print(f"{kind:10} {r[0]:9d} {r[1] / r[0]:8.3f} {r[2] / r[0]:6.3f} {r[3] / r[0]:6.3f}")
    print(f"answerable questions sharing no content word with their evidence: {no_shared} "
          f"({no_shared / max(1, answerable):.3f})")


if __name__ == "__main__":
    main()
