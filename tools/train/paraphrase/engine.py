#!/usr/bin/python3
"""Paraphrase links measured on what the engine reads of a pair (engram_train_paraphrase dump):
each statement read as a save is, its signature (numbers, dates, amounts, names, stemmed content
words), subject / slot / value, polarity, markers and sense words, and the encoder's cosine.

Two stages, as a link would be decided: vetoes first, exact disagreements that no score may
overrule (another polarity, sense, number, date, amount or name), then a score learned over what
remains. Judged as measure.py judges (judge.py): at 0 false links and at 1 in 100, each writer's
pairs by a model of the other writers'; the shares are of all the pairs of a kind, vetoed ones
included. --heldout dumps are judged once, by a model of all the writers at the floor their
cross-judging chose.

usage: engine.py --train DEV.jsonl [--heldout HELD.jsonl] [--show N]
"""
import argparse
import collections
import pathlib
import sys

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from judge import SAME, at_false, load, recall_above, show  # noqa: E402


def disagree(x, y):
    """Both sides name some and not the same."""
    return bool(x) and bool(y) and sorted(x) != sorted(y)


def nested(x, y):
    return set(x) <= set(y) or set(y) <= set(x)


# Each veto: a name and whether it holds (the pair may not be linked).
VETOES = [
    ("unread", lambda p: p.get("unread", False)),
    ("polarity", lambda p: not p["checks"]["polarity"]),
    ("sense", lambda p: p["checks"]["sense_differs"]),
    ("numbers", lambda p: disagree(p["a"]["numbers"], p["b"]["numbers"])),
    ("dates", lambda p: disagree(p["a"]["dates"], p["b"]["dates"])),
    ("amounts", lambda p: disagree(p["a"]["amounts"], p["b"]["amounts"])),
    ("values one-sided", lambda p: any(bool(p["a"][k]) != bool(p["b"][k]) for k in ("numbers", "dates", "amounts"))),
    ("entities", lambda p: not nested(p["a"]["entities"], p["b"]["entities"])),
    ("markers", lambda p: not p["checks"]["markers"]),
]


def words(side):
    return set(side["words"].split())


def jaccard(x, y):
    return len(x & y) / max(1, len(x | y))


def features(p):
    a, b = p["a"], p["b"]
    wa, wb = words(a), words(b)
    values = sum(len(a[k]) for k in ("numbers", "dates", "amounts"))
    return [
        p["cos"],
        jaccard(wa, wb),
        len(wa - wb), len(wb - wa),
        min(len(wa), len(wb)) / max(1, max(len(wa), len(wb))),
        float(values > 0),
        float(bool(a["entities"]) and a["entities"] == b["entities"]),
        float(bool(a["subject"]) and a["subject"].lower() == b["subject"].lower()),
        float(bool(a["slot"]) and a["slot"] == b["slot"]),
        float(bool(a["value"]) and a["value"].lower() == b["value"].lower()),
        float(p["checks"]["same_wording"]),
    ]


def vetoed(p, names):
    return next((n for n, f in VETOES if n in names and f(p)), None)


def fit(kind, x, y):
    m = GradientBoostingClassifier(random_state=0, n_estimators=200, max_depth=3, learning_rate=0.05) \
        if kind == "gbm" else LogisticRegression(max_iter=2000, C=1.0)
    return m.fit(x, y)


def scores_of(pairs, model, names):
    """A model's score of each pair; -1 for a vetoed one."""
    kept = [i for i, p in enumerate(pairs) if not vetoed(p, names)]
    s = np.full(len(pairs), -1.0)
    if kept:
        s[kept] = model.predict_proba(np.array([features(pairs[i]) for i in kept]))[:, 1]
    return s


def veto_table(pairs, names):
    print("vetoes, in order (pairs each removes of those left: same / differ):")
    left = list(pairs)
    for n, f in VETOES:
        if n not in names:
            continue
        gone = [p for p in left if f(p)]
        left = [p for p in left if not f(p)]
        same = sum(p["kind"] in SAME for p in gone)
        print(f"  {n:18s} {same:4d} / {len(gone) - same:4d}")
    kinds = collections.Counter(p["kind"] for p in left)
    print(f"  left: {dict(sorted(kinds.items()))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--heldout", nargs="*", default=[])
    ap.add_argument("--vetoes", default=",".join(n for n, _ in VETOES if n not in ("values one-sided", "markers")),
                    help="comma-separated veto names (of: " + ", ".join(n for n, _ in VETOES) + ")")
    ap.add_argument("--show", type=int, default=0, help="print the N pairs that differ scored highest")
    a = ap.parse_args()
    names = set(a.vetoes.split(","))
    pairs = load(a.train)
    writers = sorted({p["writer"] for p in pairs})
    print(f"{len(pairs)} pairs of {len(writers)} writers: {dict(collections.Counter(p['kind'] for p in pairs))}")
    veto_table(pairs, names)
    floors = {}
    for kind in ("logistic", "gbm"):
        judged_scores, judged_pairs = [], []
        for w in writers:
            train = [p for p in pairs if p["writer"] != w and not vetoed(p, names)]
            model = fit(kind, np.array([features(p) for p in train]), np.array([p["kind"] in SAME for p in train]))
            test = [p for p in pairs if p["writer"] == w]
            judged_scores += list(scores_of(test, model, names))
            judged_pairs += test
        for share in (0.0, 0.01):
            floor, r = at_false(np.array(judged_scores), judged_pairs, share)
            floors[(kind, share)] = max(floor, 0.0)
            show(f"{kind}, each writer by a model of the others, {share:.0%} false", r)
        if a.show and kind == "gbm":
            worst = sorted(((s, p) for s, p in zip(judged_scores, judged_pairs) if p["kind"] not in SAME),
                           key=lambda sp: -sp[0])
            for sc, p in worst[:a.show]:
                print(f"    {sc:.3f} {p['id']} {p['kind']} cos {p['cos']:.2f}: {p['a']['title']} | {p['b']['title']}")
    if a.heldout:
        held = load(a.heldout)
        print(f"held-out: {len(held)} pairs: {dict(collections.Counter(p['kind'] for p in held))}")
        veto_table(held, names)
        train = [p for p in pairs if not vetoed(p, names)]
        x, y = np.array([features(p) for p in train]), np.array([p["kind"] in SAME for p in train])
        for kind in ("logistic", "gbm"):
            s = scores_of(held, fit(kind, x, y), names)
            for share in (0.0, 0.01):
                show(f"{kind} of all writers, the writers' floor at {share:.0%} false",
                     recall_above(s, held, floors[(kind, share)]))


if __name__ == "__main__":
    main()
