#!/usr/bin/python3
"""A first measure of how far a statement pair's surface and the sentence encoder tell "says the
same" (paraphrase, near_duplicate) from "says something else" (different_fact, related,
unrelated), on the labelled pairs of tools/train/data/paraphrases/ (GUIDE.md).

Features of a pair (a stored, b new), none learned from the text itself: the encoder's cosine
(use_lite.py, the weights engramd reads); word and content-word overlap; whether the numbers,
the capitalised words (names), the negations and the modal words of the two sides agree; the
words only one side has, their count and share; the length ratio. A gradient-boosted classifier
(scikit-learn, fixed seed) and a logistic regression learn "the same" from them.

Judged as a link must be: at the threshold where no pair that says something else is called
the same (0 false links) on the pairs judged, and where at most 1 in 100 is, the share of
paraphrases (and of near-duplicates) called the same. Each writer's pairs are judged by a model
of the other writers' (the curve over 1, 2, 3 writers); --heldout files are judged once by a
model of all the writers, at the threshold the writers' cross-judging chose.

usage: measure.py --model .cache/models/use-lite-en.bin --train DIR/p*.jsonl [--heldout FILE...]
"""
import argparse
import collections
import pathlib
import re
import sys

import numpy as np
import torch
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "recall"))
from use_lite import UseLite  # noqa: E402
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from judge import SAME, at_false, load, recall_above, show  # noqa: E402

STOP = set("""a an the of to in on at for by with from and or but is are was were be been being it its this that
these those we our us you your they their them he she his her i my me as into about over than then so if not no
will would shall should can could may might must do does did done has have had just please fyi also per""".split())
NEGATIONS = {"not", "no", "never", "won't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't",
             "cannot", "can't", "neither", "nor", "without", "longer", "stopped", "cancelled", "canceled", "declined",
             "rejected", "dropped"}
MODALS = {"plan", "plans", "planned", "propose", "proposed", "proposes", "may", "might", "could", "should",
          "considering", "consider", "intend", "intends", "want", "wants", "hope", "hopes", "likely", "expect",
          "expects", "will", "would", "going"}
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d,.:/]*")


def words(text):
    return [w.lower().replace("’", "'") for w in WORD.findall(text)]


def numbers(text):
    return {re.sub(r"[,]", "", n).rstrip(".") for n in re.findall(r"\d[\d,.:/]*", text)}


def names(text):
    toks = re.findall(r"[A-Za-z][A-Za-z'’-]*", text)
    return {t.lower() for i, t in enumerate(toks) if t[0].isupper() and i > 0} | (
        {toks[0].lower()} if toks and toks[0][0].isupper() and toks[0].lower() not in STOP else set())


def jaccard(x, y):
    return len(x & y) / max(1, len(x | y))


def features(a, b, cos):
    wa, wb = words(a), words(b)
    sa, sb = set(wa), set(wb)
    ca, cb = sa - STOP, sb - STOP
    na, nb = numbers(a), numbers(b)
    pa, pb = names(a), names(b)
    nega, negb = len(sa & NEGATIONS) % 2, len(sb & NEGATIONS) % 2
    return [
        cos,
        jaccard(sa, sb),
        jaccard(ca, cb),
        len(ca - cb), len(cb - ca),
        len(ca ^ cb) / max(1, len(ca | cb)),
        float(na == nb), float(bool(na ^ nb)), float(bool(na) and bool(nb) and na != nb),
        float(pa == pb), len(pa ^ pb), jaccard(pa, pb),
        float(nega == negb),
        float(bool(sa & MODALS) == bool(sb & MODALS)),
        min(len(wa), len(wb)) / max(1, max(len(wa), len(wb))),
        float(ca == cb and wa != wb),  # the same content words, in another order or with other fillers
    ]


def embed(model, texts, batch=64):
    vecs = []
    with torch.no_grad():
        for i in range(0, len(texts), batch):
            vecs.append(model([model.tokenize(t) for t in texts[i:i + batch]]))
    return torch.cat(vecs).numpy()


def matrix(model, pairs):
    va = embed(model, [p["a"] for p in pairs])
    vb = embed(model, [p["b"] for p in pairs])
    cos = (va * vb).sum(1)
    x = np.array([features(p["a"], p["b"], float(c)) for p, c in zip(pairs, cos)])
    y = np.array([p["kind"] in SAME for p in pairs], dtype=int)
    return x, y


def fit(kind, x, y):
    m = GradientBoostingClassifier(random_state=0, n_estimators=300, max_depth=3, learning_rate=0.05) \
        if kind == "gbm" else LogisticRegression(max_iter=2000, C=1.0)
    return m.fit(x, y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--heldout", nargs="*", default=[])
    ap.add_argument("--show", type=int, default=0,
                    help="print the N pairs that differ which the cross-judged gbm of all others scores highest")
    a = ap.parse_args()
    torch.set_num_threads(2)
    encoder = UseLite(a.model)
    pairs = load(a.train)
    x, y = matrix(encoder, pairs)
    writers = sorted({p["writer"] for p in pairs})
    print(f"{len(pairs)} pairs of {len(writers)} writers: {dict(collections.Counter(p['kind'] for p in pairs))}")
    cos_only = x[:, 0]
    for share in (0.0, 0.01):
        show(f"cosine alone, {share:.0%} false (all writers)", at_false(cos_only, pairs, share)[1])
    floors = {}
    for kind in ("logistic", "gbm"):
        for count in range(1, len(writers)):
            for share in (0.0, 0.01):
                judged_scores, judged_pairs = [], []
                for w in writers:
                    others = [o for o in writers if o != w][:count]
                    tr = np.array([p["writer"] in others for p in pairs])
                    te = np.array([p["writer"] == w for p in pairs])
                    m = fit(kind, x[tr], y[tr])
                    judged_scores += list(m.predict_proba(x[te])[:, 1])
                    judged_pairs += [p for p, t in zip(pairs, te) if t]
                floor, r = at_false(np.array(judged_scores), judged_pairs, share)
                show(f"{kind}, each writer by a model of {count} other(s), {share:.0%} false", r)
                if a.show and kind == "gbm" and count == len(writers) - 1 and share == 0.0:
                    worst = sorted(((s, p) for s, p in zip(judged_scores, judged_pairs) if p["kind"] not in SAME),
                                   key=lambda sp: sp[0])
                    for sc, p in worst[::-1][:a.show]:
                        print(f"    {sc:.3f} {p['id']} {p['kind']}: {p['a']} | {p['b']} ({p['note']})")
                if count == len(writers) - 1:
                    floors[(kind, share)] = floor
    if a.heldout:
        held = load(a.heldout)
        hx, _ = matrix(encoder, held)
        print(f"held-out: {len(held)} pairs: {dict(collections.Counter(p['kind'] for p in held))}")
        show("cosine > 0.92 (the merge threshold alone)", recall_above(hx[:, 0], held, 0.92))
        for kind in ("logistic", "gbm"):
            m = fit(kind, x, y)
            s = m.predict_proba(hx)[:, 1]
            for share in (0.0, 0.01):
                show(f"{kind} of all writers, the writers' floor at {share:.0%} false", recall_above(s, held, floors[(kind, share)]))


if __name__ == "__main__":
    main()
