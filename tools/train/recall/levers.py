#!/usr/bin/python3
"""The classic levers of recall, measured on development conversations in a simulation of recall's
fusion (docs/recall.md, "What each step gave"): a BM25 over the messages (each reply with the
words of the two messages before it) and the query head's vectors over the messages (each reply
with half the vector of the message it answers), fused by reciprocal rank, then each lever alone.
Not the engine (no entries, no people, no dates): its figures say which way a lever goes, and the
engine's bench (engram_bench recall-conversations) measures what is kept.

usage: levers.py --tool BIN --model ENCODER --head HEAD --glove WORDS.json FILE...
"""
import argparse
import collections
import importlib.util
import json
import os
import pathlib
import re
import struct
import sys
import tempfile

import numpy as np

here = pathlib.Path(__file__).resolve().parent


def module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


bm25 = module("difficulty", here.parent.parent / "bench" / "conversations_difficulty.py")
trainer = module("train", here / "train.py")  # its embed(): the encoder's vectors of the conversations


def load_head(path):
    b = open(path, "rb").read()
    n = struct.unpack("<I", b[8:12])[0]
    h = json.loads(b[12:12 + n])
    o, dim, rank = 12 + n, h["dim"], h["rank"]
    u = np.frombuffer(b[o:o + 4 * dim * rank], "<f4").reshape(dim, rank).astype(np.float64)
    v = np.frombuffer(b[o + 4 * dim * rank:], "<f4").reshape(rank, dim).astype(np.float64)

    def apply(q):
        x = q + (q @ u) @ v
        return x / np.linalg.norm(x)
    return apply


def words(text):
    return [w for w in re.findall(r"[a-z]+", text.lower().replace("'", "")) if w not in bm25.STOP and len(w) > 2]


def fuse(lists, k):
    score = collections.defaultdict(float)
    for weight, ranked in lists:
        for r, i in enumerate(ranked):
            score[i] += weight / (k + r + 1)
    return score


def messages(c, vec, cfg):
    """One conversation's messages as the simulation searches them: their ids, the encoder's
    vectors as they are, the vectors searched (a reply with half the vector of the message it
    answers) and the BM25 index (a reply with the words of the two messages before it)."""
    ms, cid = c["messages"], c["id"]
    ids = [m["id"] for m in ms]
    raw = np.array([vec[(cid, i)] for i in ids], dtype=np.float64)
    m_vec = raw.copy()
    docs = {}
    for j, m in enumerate(ms):
        t = bm25.terms(m["text"])
        if j > 0 and ms[j - 1]["from"] != m["from"]:
            m_vec[j] = raw[j] + 0.5 * raw[j - 1]
            if cfg.get("reply_words", True):
                t += bm25.terms(ms[j - 1]["text"]) + (bm25.terms(ms[j - 2]["text"]) if j > 1 else [])
        if cfg.get("next") and j + 1 < len(ms):
            m_vec[j] = m_vec[j] + cfg["next"] * raw[j + 1]
        docs[j] = t
    m_vec /= np.linalg.norm(m_vec, axis=1, keepdims=True)
    return ids, raw, m_vec, docs, bm25.BM25(docs)


def evaluate(convs, vec, head, glove, cfg):
    hits = total = 0
    k = cfg.get("k", 30)
    for c in convs:
        ms, cid = c["messages"], c["id"]
        ids, raw, m_vec, docs, index = messages(c, vec, cfg)
        vocab = sorted({w for m in ms for w in words(m["text"]) if w in glove["index"]}) if cfg.get("expand") else []
        vocab_vec = glove["vectors"][[glove["index"][w] for w in vocab]] if vocab else None
        for q in c["questions"]:
            if not q["answers"]:
                continue
            answers = {ids.index(a) for a in q["answers"]}
            qv = vec[(cid, q["id"])].astype(np.float64)
            by_meaning = list(np.argsort(-(m_vec @ head(qv)))[:100])
            by_words = index.top(q["question"], 100)
            lists = [(1.0, by_words), (cfg.get("meaning", 1.0), by_meaning)]
            if cfg.get("unmapped"):
                lists.append((cfg["unmapped"], list(np.argsort(-(m_vec @ (qv / np.linalg.norm(qv))))[:100])))
            if cfg.get("prf"):
                seen = collections.Counter()
                for i in by_words[:3]:
                    seen.update(set(docs[i]))
                asked = set(bm25.terms(q["question"]))
                extra = [w for w, _ in seen.most_common() if w not in asked][:5]
                lists.append((0.5, index.top(q["question"] + " " + " ".join(extra), 100)))
            if cfg.get("expand"):
                extra = []
                for w in words(q["question"]):
                    if w in glove["index"]:
                        sim = vocab_vec @ glove["vectors"][glove["index"][w]]
                        extra += [vocab[j] for j in np.argsort(-sim)[:3]
                                  if sim[j] >= cfg["expand"] and bm25.stem(vocab[j]) != bm25.stem(w)]
                if extra:
                    lists.append((0.5, index.top(" ".join(extra), 100)))
            score = fuse(lists, k)
            if cfg.get("neighbours"):
                spread = collections.defaultdict(float, score)
                for i, v in score.items():
                    for j in (i - 1, i + 1):
                        if 0 <= j < len(ms):
                            spread[j] += cfg["neighbours"] * v
                score = spread
            top = sorted(score, key=lambda i: -score[i])[:10]
            hits += bool(answers & set(top))
            total += 1
    return hits / max(total, 1)


LEVERS = [
    ("fusion as before (k 30, every list x1)", {}),
    ("lists by meaning x1.5, k 15", {"meaning": 1.5, "k": 15}),
    ("without the reply's words", {"meaning": 1.5, "k": 15, "reply_words": False}),
    ("pseudo-relevance feedback", {"meaning": 1.5, "k": 15, "prf": True}),
    ("window: 0.3 of the next message's vector", {"meaning": 1.5, "k": 15, "next": 0.3}),
    ("window: 0.5 of the next message's vector", {"meaning": 1.5, "k": 15, "next": 0.5}),
    ("neighbours 0.3", {"meaning": 1.5, "k": 15, "neighbours": 0.3}),
    ("unmapped query vector x0.5", {"meaning": 1.5, "k": 15, "unmapped": 0.5}),
    ("unmapped query vector x1", {"meaning": 1.5, "k": 15, "unmapped": 1.0}),
    ("query words widened by word vectors", {"meaning": 1.5, "k": 15, "expand": 0.6}),
]


def arguments():
    """The options every simulation takes: the embedding tool, the encoder, the query head, the
    word vectors."""
    ap = argparse.ArgumentParser()
    for name in ("--tool", "--model", "--head", "--glove"):
        ap.add_argument(name, required=True)
    return ap


def main():
    ap = arguments()
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rows, vectors = trainer.embed(a.tool, a.model, a.files,
                                  os.path.join(tempfile.mkdtemp(prefix="engram-levers-"), "vectors"))
    vec = {(r["conversation"], r["id"]): vectors[i] for i, r in enumerate(rows)}
    g = json.load(open(a.glove))
    top = g["words"][:80000]
    gv = np.array([g["vectors"][w][:100] for w in top], dtype=np.float32)
    gv /= np.linalg.norm(gv, axis=1, keepdims=True) + 1e-9
    glove = {"index": {w: i for i, w in enumerate(top)}, "vectors": gv}
    convs = [json.load(open(f)) for f in a.files]
    head = load_head(a.head)
    for name, cfg in LEVERS:
        print(f"{name:45s} recall@10 {evaluate(convs, vec, head, glove, cfg):.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
