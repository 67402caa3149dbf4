#!/usr/bin/python3
"""Trains the name tagger (reading/name_tagger.hpp): a linear-chain CRF over the hashed features
engram_train_names computes, learnt with PyTorch, written int8 in the model format the C++
tagger reads. Deterministic: one thread, fixed seeds, items in file order, so two runs on one
machine write the same bytes.

usage: train.py --tool BIN --lexicon LEX --train FILE... --dev FILE... --out MODEL
                [--limit N] [--epochs E] [--seed S] [--buckets B] [--name NAME] [--l2 W]
                [--feature-dropout P]
--limit N trains on a sample of N items, the same for a seed (the learning curve). The threshold is chosen on the
development files: the lowest span probability that keeps typed precision >= 0.85 there at the
highest recall (or the best F1 when no threshold reaches it).
--feature-dropout P leaves out each feature of a token with probability P in training (the kept
ones scaled by 1 / (1 - P)), so no single feature carries a name alone; 0 (the default) trains
as before.
"""
import argparse
import json
import math
import random
import struct
import subprocess
import sys

import torch

TYPES = ["PER", "ORG", "PROD", "LOC", "ID"]
TAGS = ["O"] + [f"{p}-{t}" for t in TYPES for p in ("B", "I")]
IMPOSSIBLE = -1e4  # nats: a transition the BIO scheme forbids
IMPOSSIBLE_UNITS = -10_000_000


def features(tool, lexicon, buckets, files):
    out = subprocess.run([tool, "features", "--lexicon", lexicon, "--buckets", str(buckets), *files],
                         check=True, capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line]


def allowed():
    """1 where the BIO scheme allows a transition (from, to), for start and each tag."""
    k = len(TAGS)
    trans = torch.ones(k, k)
    start = torch.ones(k)
    for j, to in enumerate(TAGS):
        if to.startswith("I-"):
            start[j] = 0
            for i, frm in enumerate(TAGS):
                if frm[2:] != to[2:] or frm == "O":
                    trans[i, j] = 0
    return start, trans


class CRF(torch.nn.Module):
    def __init__(self, buckets):
        super().__init__()
        k = len(TAGS)
        self.emit = torch.nn.EmbeddingBag(buckets, k, mode="sum")
        torch.nn.init.zeros_(self.emit.weight)
        self.trans = torch.nn.Parameter(torch.zeros(k, k))
        self.start = torch.nn.Parameter(torch.zeros(k))
        self.end = torch.nn.Parameter(torch.zeros(k))
        start_ok, trans_ok = allowed()
        self.register_buffer("start_mask", (1 - start_ok) * IMPOSSIBLE)
        self.register_buffer("trans_mask", (1 - trans_ok) * IMPOSSIBLE)

    def scores(self):
        return self.start + self.start_mask, self.trans + self.trans_mask, self.end

    def loss(self, batch, dropout=0.0):
        """Mean negative log-likelihood of the gold tags of a batch of items; `dropout` leaves
        out each feature with that probability (inverted: the kept ones are scaled up)."""
        start, trans, end = self.scores()
        flat, offsets, lengths, golds = [], [], [], []
        for item in batch:
            for row in item["feats"]:
                offsets.append(len(flat))
                flat.extend(row)
            lengths.append(len(item["feats"]))
            golds.append(item["gold"])
        weights = None
        if dropout > 0:
            weights = (torch.rand(len(flat)) >= dropout).float() / (1 - dropout)
        e = self.emit(torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long),
                      per_sample_weights=weights)
        k, longest = len(TAGS), max(lengths)
        em = torch.zeros(len(batch), longest, k)
        gold = torch.zeros(len(batch), longest, dtype=torch.long)
        mask = torch.zeros(len(batch), longest, dtype=torch.bool)
        pos = 0
        for b, (n, g) in enumerate(zip(lengths, golds)):
            em[b, :n] = e[pos:pos + n]
            gold[b, :n] = torch.tensor(g, dtype=torch.long)
            mask[b, :n] = True
            pos += n
        last = torch.tensor([n - 1 for n in lengths], dtype=torch.long)
        rows = torch.arange(len(batch))
        # The gold paths' scores.
        emitted = em.gather(2, gold.unsqueeze(2)).squeeze(2) * mask
        moves = trans[gold[:, :-1], gold[:, 1:]] * mask[:, 1:]
        gold_score = start[gold[:, 0]] + emitted.sum(1) + moves.sum(1) + end[gold[rows, last]]
        # The partition function, by the forward algorithm.
        alpha = start + em[:, 0]
        for i in range(1, longest):
            step = torch.logsumexp(alpha.unsqueeze(2) + trans, dim=1) + em[:, i]
            alpha = torch.where(mask[:, i].unsqueeze(1), step, alpha)
        total = (torch.logsumexp(alpha + end, dim=1) - gold_score).sum()
        return total / len(batch)


def train(items, buckets, epochs, seed, l2, dropout=0.0):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = CRF(buckets)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    order = list(range(len(items)))
    batch = 16
    for epoch in range(epochs):
        rng.shuffle(order)
        lr = 0.05 * (1 - epoch / epochs) + 0.002
        for group in opt.param_groups:
            group["lr"] = lr
        total = 0.0
        for b in range(0, len(order), batch):
            opt.zero_grad()
            loss = model.loss([items[i] for i in order[b:b + batch]], dropout)
            # L2 on the weights a batch touched would need their rows; a small decay on all of them
            # keeps unseen combinations at zero.
            reg = l2 * (model.emit.weight.pow(2).sum() + model.trans.pow(2).sum())
            (loss + reg).backward()
            opt.step()
            total += loss.item() * len(order[b:b + batch])
        print(f"epoch {epoch + 1}/{epochs}: loss {total / len(items):.4f} (lr {lr:.4f})", file=sys.stderr)
    return model


def quantise(model):
    """The int8 emissions, int32 scores and log-sum-exp table, in units of 1/S nats."""
    with torch.no_grad():
        w = model.emit.weight.detach().clone()
        start, trans, end = (x.detach().clone() for x in model.scores())
    s = 127.0 / max(float(w.abs().max()), 1e-6)
    q = torch.clamp(torch.round(w * s), -127, 127).to(torch.int8)

    def ints(t):
        return [IMPOSSIBLE_UNITS if v <= IMPOSSIBLE / 2 else int(round(v * s)) for v in t.flatten().tolist()]

    lut = []
    d = 0
    while True:
        v = int(round(s * math.log1p(math.exp(-d / s))))
        if v == 0:
            break
        lut.append(v)
        d += 1
    return s, q, ints(start), ints(trans), ints(end), lut


def write_model(path, name, feature_format, lexicon_bytes, buckets, units, q, start, trans, end, lut,
                threshold):
    header = json.dumps({"format": 1, "featureFormat": feature_format, "name": name, "tags": TAGS, "buckets": buckets,
                         "unitsPerNat": units, "threshold": threshold}, sort_keys=True).encode()
    with open(path, "wb") as f:
        f.write(b"ENGNAME1")
        f.write(struct.pack("<I", len(header)) + header)
        f.write(struct.pack("<I", len(lexicon_bytes)) + lexicon_bytes)
        f.write(q.numpy().tobytes())
        for row in (start, trans, end):
            f.write(struct.pack(f"<{len(row)}i", *row))
        f.write(struct.pack("<I", len(lut)) + struct.pack(f"<{len(lut)}i", *lut))


def choose_threshold(tool, model_path, dev):
    out = subprocess.run([tool, "eval", "--model", model_path, "--sweep", "--json", *dev],
                         check=True, capture_output=True, text=True)
    rows = json.loads(out.stdout)
    good = [r for r in rows if r["p"] >= 0.85]
    best = max(good, key=lambda r: (r["r"], -r["probability"])) if good else max(rows, key=lambda r: r["f"])
    print(f"threshold: span probability >= {best['probability']:.2f} on development "
          f"(P {best['p']:.3f} R {best['r']:.3f})", file=sys.stderr)
    return best["threshold"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--buckets", type=int, default=1 << 16)
    ap.add_argument("--name", default="names")
    ap.add_argument("--l2", type=float, default=1e-6)
    ap.add_argument("--feature-dropout", type=float, default=0.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    items = features(args.tool, args.lexicon, args.buckets, args.train)
    if args.limit and args.limit < len(items):
        # A sample across every writer and style, the same for a seed (the learning curve).
        keep = sorted(random.Random(args.seed).sample(range(len(items)), args.limit))
        items = [items[i] for i in keep]
    for it in items:
        it["gold"] = [TAGS.index(t) for t in it["tags"]]
    items = [it for it in items if it["feats"]]
    print(f"training on {len(items)} items, {sum(len(i['feats']) for i in items)} tokens", file=sys.stderr)
    model = train(items, args.buckets, args.epochs, args.seed, args.l2, args.feature_dropout)
    units, q, start, trans, end, lut = quantise(model)
    lexicon_bytes = open(args.lexicon, "rb").read()
    # The feature format of the tool that computed the features, which the model must be read with.
    feature_format = int(subprocess.run([args.tool, "feature-format"], check=True, capture_output=True,
                                        text=True).stdout)
    write_model(args.out, args.name, feature_format, lexicon_bytes, args.buckets, units, q, start, trans, end, lut,
                int(math.floor(math.log(0.5) * units)))
    threshold = choose_threshold(args.tool, args.out, args.dev)
    write_model(args.out, args.name, feature_format, lexicon_bytes, args.buckets, units, q, start, trans, end, lut,
                threshold)


if __name__ == "__main__":
    main()
