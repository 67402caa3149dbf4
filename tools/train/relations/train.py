#!/usr/bin/python3
"""Trains the relation classifier (reading/relation_classifier.hpp): a linear model over the hashed
pair features (a softmax over the labels, and whether a related pair's relation has ended) engram_train_relations computes, learnt with PyTorch, written int8 in the model
format the C++ reader reads. Deterministic: one thread, fixed seeds, pairs in file order, so two
runs on one machine write the same bytes.

usage: train.py --tool BIN --train FILE... --dev FILE... --out MODEL
                [--limit N] [--epochs E] [--seed S] [--average A] [--buckets B] [--name NAME]
--limit N trains on a sample of N items, the same for a seed (the learning curve). --average A
trains A times, seeds S .. S + A - 1, and averages the weights (5 runs of 3 epochs: a better
development F1 than one run of 2, 3, 4 or 6 epochs, docs/training.md). The margin
over "none" is chosen on the development files: the one of the best F1 there (the lowest of
equals).
"""
import argparse
import json
import random
import struct
import subprocess
import sys

import torch

PREDICATES = ["works_at", "reports_to", "uses", "located_in", "part_of", "partner_of", "customer_of",
              "competes_with", "makes", "acquired"]
LABELS = ["none"] + [f"{p}>" for p in PREDICATES] + [f"{p}<" for p in PREDICATES]


def features(tool, buckets, files):
    out = subprocess.run([tool, "features", "--buckets", str(buckets), *files], check=True, capture_output=True,
                         text=True)
    sys.stderr.write(out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line]


class Linear(torch.nn.Module):
    def __init__(self, buckets):
        super().__init__()
        # The labels' columns, then "ended"'s.
        self.emit = torch.nn.EmbeddingBag(buckets, len(LABELS) + 1, mode="sum", sparse=True)
        torch.nn.init.zeros_(self.emit.weight)
        self.bias = torch.nn.Parameter(torch.zeros(len(LABELS) + 1))

    def forward(self, rows):
        flat, offsets = [], []
        for r in rows:
            offsets.append(len(flat))
            flat.extend(r)
        return self.emit(torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)) + self.bias


def train(pairs, buckets, epochs, seed):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = Linear(buckets)
    sparse = torch.optim.SparseAdam([model.emit.weight], lr=0.05)
    dense = torch.optim.Adam([model.bias], lr=0.05)
    order = list(range(len(pairs)))
    batch = 64
    for epoch in range(epochs):
        rng.shuffle(order)
        lr = 0.05 * (1 - epoch / epochs) + 0.002
        for opt in (sparse, dense):
            for group in opt.param_groups:
                group["lr"] = lr
        total = 0.0
        for b in range(0, len(order), batch):
            idx = order[b:b + batch]
            sparse.zero_grad()
            dense.zero_grad()
            out = model([pairs[i]["feats"] for i in idx])
            y = torch.tensor([pairs[i]["y"] for i in idx])
            loss = torch.nn.functional.cross_entropy(out[:, :-1], y)
            # Whether a relation has ended, learnt on the related pairs alone.
            related = y > 0
            if bool(related.any()):
                ended = torch.tensor([float(pairs[i]["ended"]) for i in idx])
                loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(out[related, -1], ended[related])
            loss.backward()
            sparse.step()
            dense.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1}/{epochs}: loss {total / len(pairs):.4f} (lr {lr:.4f})", file=sys.stderr)
    return model


def write_model(path, name, feature_format, buckets, model, margin):
    with torch.no_grad():
        w = model.emit.weight.detach().clone()
        b = model.bias.detach().clone()
    s = 127.0 / max(float(w.abs().max()), 1e-6)
    q = torch.clamp(torch.round(w * s), -127, 127).to(torch.int8)
    bias = [int(round(v * s)) for v in b.tolist()]
    header = json.dumps({"format": 1, "featureFormat": feature_format, "name": name, "labels": LABELS,
                         "buckets": buckets, "unitsPerNat": s, "margin": margin}, sort_keys=True).encode()
    with open(path, "wb") as f:
        f.write(b"ENGREL01")
        f.write(struct.pack("<I", len(header)) + header)
        f.write(q.numpy().tobytes())
        f.write(struct.pack(f"<{len(bias)}i", *bias))


def choose_margin(tool, model_path, dev):
    out = subprocess.run([tool, "eval", "--model", model_path, "--sweep", "--json", *dev], check=True,
                         capture_output=True, text=True)
    rows = json.loads(out.stdout)
    best = max(rows, key=lambda r: (round(r["f"], 6), -r["margin"]))
    print(f"margin: {best['margin']} units over none on development (P {best['p']:.3f} R {best['r']:.3f})",
          file=sys.stderr)
    return best["margin"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--average", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=1 << 16)
    ap.add_argument("--name", default="relations")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    items = features(args.tool, args.buckets, args.train)
    if args.limit and args.limit < len(items):
        keep = sorted(random.Random(args.seed).sample(range(len(items)), args.limit))
        items = [items[i] for i in keep]
    pairs = [p for it in items for p in it["pairs"]]
    for p in pairs:
        p["y"] = LABELS.index(p["label"])
    print(f"training on {len(pairs)} pairs of {len(items)} items, {sum(1 for p in pairs if p['y'])} related",
          file=sys.stderr)
    # Several runs, seeds seed .. seed + average - 1, their weights averaged (their logits, for a
    # linear model): one run's draw of the order weighs less.
    model = train(pairs, args.buckets, args.epochs, args.seed)
    for k in range(1, args.average):
        other = train(pairs, args.buckets, args.epochs, args.seed + k)
        with torch.no_grad():
            model.emit.weight += other.emit.weight
            model.bias += other.bias
    if args.average > 1:
        with torch.no_grad():
            model.emit.weight /= args.average
            model.bias /= args.average
    feature_format = int(subprocess.run([args.tool, "feature-format"], check=True, capture_output=True,
                                        text=True).stdout)
    write_model(args.out, args.name, feature_format, args.buckets, model, 0)
    margin = choose_margin(args.tool, args.out, args.dev)
    write_model(args.out, args.name, feature_format, args.buckets, model, margin)


if __name__ == "__main__":
    main()
