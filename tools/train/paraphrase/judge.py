"""How a reader of statement pairs is judged as a link must be: at the threshold where no pair that
says something else (different_fact, related, unrelated) is called the same, or at most a share of
them, the share of paraphrases and near-duplicates called the same. Shared by measure.py and
engine.py."""
import collections
import json

import numpy as np

SAME = {"paraphrase", "near_duplicate"}


def load(paths):
    """Pairs of JSON Lines files (the labelled pairs, or engram_train_paraphrase's dumps), each with
    its writer (the id's prefix: p1, h1)."""
    out = []
    for p in paths:
        for line in open(p, encoding="utf-8"):
            j = json.loads(line)
            j["writer"] = j["id"].split("-")[0]
            out.append(j)
    return out


def at_false(scores, pairs, share):
    """The threshold that calls at most `share` of the pairs that differ the same, and the share
    of paraphrases and near-duplicates above it."""
    other = np.sort(np.array([s for s, p in zip(scores, pairs) if p["kind"] not in SAME]))[::-1]
    allowed = int(share * len(other))
    floor = other[allowed] if allowed < len(other) else -1.0
    return floor, recall_above(scores, pairs, floor)


def recall_above(scores, pairs, floor):
    got = collections.defaultdict(lambda: [0, 0])
    for s, p in zip(scores, pairs):
        got[p["kind"]][0] += s > floor
        got[p["kind"]][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(got.items())}


def show(label, r):
    para, near = r.get("paraphrase", (0, 0)), r.get("near_duplicate", (0, 0))
    wrong = sum(v[0] for k, v in r.items() if k not in SAME)
    total = sum(v[1] for k, v in r.items() if k not in SAME)
    print(f"  {label}: paraphrases {para[0]}/{para[1]} ({para[0] / max(1, para[1]):.2f}), near-duplicates "
          f"{near[0]}/{near[1]} ({near[0] / max(1, near[1]):.2f}), false {wrong}/{total}", flush=True)
