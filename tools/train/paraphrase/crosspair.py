#!/usr/bin/python3
"""The sentence encoder as a reader of a statement pair: a stored statement and a new one read
together by the encoder's two layers (a's tokens, </s>, b's), its pooled output through the
encoder's tanh layer and one new unit: "does b say what a says?" (paraphrase, near_duplicate
against different_fact, related, unrelated), every weight trained (recall/crossenc.py's Reader).

Each writer's pairs are judged by a model of the other writers' (both orders of each pair in
training); judged as measure.py judges: the share of paraphrases and near-duplicates above the
threshold where none (or 1 in 100) of the pairs that differ is called the same. --heldout files
are judged once by a model of all the writers at the cross-judged threshold.

usage: crosspair.py --model .cache/models/use-lite-en.bin --train DIR/p*.jsonl [--epochs N] [--heldout FILE...]
"""
import argparse
import pathlib
import random
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "recall"))
from crossenc import Reader  # noqa: E402
from judge import SAME, at_false, load, recall_above, show  # noqa: E402
from use_lite import UseLite  # noqa: E402


def train(model_path, pairs, epochs, lr):
    torch.manual_seed(7)
    random.seed(7)
    encoder = UseLite(model_path)
    reader = Reader(encoder)
    tok = encoder.tokenize
    data = []
    for p in pairs:
        ta, tb, y = tok(p["a"]), tok(p["b"]), float(p["kind"] in SAME)
        data += [(ta, tb, y), (tb, ta, y)]
    opt = torch.optim.Adam([{"params": encoder.parameters(), "lr": lr},
                            {"params": reader.out.parameters(), "lr": 1e-3}])
    loss_fn = torch.nn.BCEWithLogitsLoss()
    reader.train()
    for epoch in range(epochs):
        random.shuffle(data)
        t0, total = time.time(), 0.0
        for i in range(0, len(data), 32):
            chunk = data[i:i + 32]
            loss = loss_fn(reader([(a, b) for a, b, _ in chunk]), torch.tensor([y for _, _, y in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(chunk)
            if (i // 32) % 20 == 0:
                print(f"      batch {i // 32}: loss {float(loss):.3f} ({time.time() - t0:.0f} s)", flush=True)
        print(f"    epoch {epoch + 1}: mean loss {total / len(data):.4f} in {time.time() - t0:.0f} s", flush=True)
    reader.eval()
    return reader, tok


def score(reader, tok, pairs):
    with torch.no_grad():
        out = []
        for i in range(0, len(pairs), 64):
            chunk = pairs[i:i + 64]
            ab = torch.sigmoid(reader([(tok(p["a"]), tok(p["b"])) for p in chunk]))
            ba = torch.sigmoid(reader([(tok(p["b"]), tok(p["a"])) for p in chunk]))
            out += list(((ab + ba) / 2).numpy())
    return np.array(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--heldout", nargs="*", default=[])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    pairs = load(a.train)
    writers = sorted({p["writer"] for p in pairs})
    judged_scores, judged_pairs = [], []
    for w in writers:
        print(f"  judging {w} by a model of the others", flush=True)
        reader, tok = train(a.model, [p for p in pairs if p["writer"] != w], a.epochs, a.lr)
        mine = [p for p in pairs if p["writer"] == w]
        s = score(reader, tok, mine)
        for share in (0.0, 0.01):
            show(f"{w} alone, {share:.0%} false", at_false(s, mine, share)[1])
        judged_scores += list(s)
        judged_pairs += mine
    floors = {}
    for share in (0.0, 0.01):
        floors[share], r = at_false(np.array(judged_scores), judged_pairs, share)
        show(f"every writer by a model of the others, {share:.0%} false (floor {floors[share]:.4f})", r)
    if a.heldout:
        held = load(a.heldout)
        reader, tok = train(a.model, pairs, a.epochs, a.lr)
        s = score(reader, tok, held)
        for share in (0.0, 0.01):
            show(f"held-out, a model of all the writers at the writers' floor for {share:.0%} false",
                 recall_above(s, held, floors[share]))


if __name__ == "__main__":
    main()
