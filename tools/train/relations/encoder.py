#!/usr/bin/python3
"""A relation reader that starts from the sentence encoder (a measurement, not the shipped model).

The shipped relation classifier (reading/relation_classifier.hpp) is linear over hashed words
around a pair of names: it sees neither the parse nor who "she" is. This reads the whole item
with the encoder's two layers (tools/train/recall/use_lite.py, every weight trained), pools the
last layer's rows over each name's tokens, and scores every pair of marked names with a small
network over the two names' rows, their product, the rows between them, the two types and the
distance in tokens: the same 21 labels (none, p> and p< for the ten predicates) and "ended".

Judged as `engram_train_relations eval` judges the linear model: per item, the set of
(subject, predicate, object) read among the marked names against the set labelled (names
compared folded and with their spaces collapsed). A pair is read with its best label but
"none" when that leads "none" by the margin of the best F1 on the development set, and by more
than nothing when the margin is 0 or more; a margin below 0 also reads pairs "none" wins
narrowly.

With --linear and --tool, the shipped linear model's logits of the same pairs (from
`engram_train_relations features` and the model file) are also judged alone and summed with the
reader's, weighted w and 1 - w: whether the two read different things. With --then, the weight
of the best F1 on --dev and each row's margin chosen there are applied to the items of --then.

usage: encoder.py --model .cache/models/use-lite-en.bin --train FILE... --dev FILE...
                  [--epochs N] [--limit N] [--lr X] [--seed S] [--freeze] [--save FILE | --load FILE]
                  [--linear reading/models/relations.bin --tool build/bin/engram_train_relations]
"""
import argparse
import json
import pathlib
import random
import re
import struct
import subprocess
import sys
import time
import unicodedata

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "recall"))
from use_lite import MAX_TOKENS, UseLite  # noqa: E402

PREDICATES = ["works_at", "reports_to", "uses", "located_in", "part_of", "partner_of", "customer_of",
              "competes_with", "makes", "acquired"]
LABELS = ["none"] + [f"{p}>" for p in PREDICATES] + [f"{p}<" for p in PREDICATES]
TYPES = {"PER": 0, "ORG": 1, "PROD": 2, "LOC": 3}
MARK = re.compile(r"\[\[([A-Z]+):(.*?)\]\]", re.S)


def normal(s):
    return " ".join(s.casefold().split())


def parse(item):
    """(text NFKC-normalised, [(begin, end, type)]) of a marked item, spans in the text."""
    text, spans, at = "", [], 0
    for m in MARK.finditer(item["text"]):
        text += unicodedata.normalize("NFKC", item["text"][at:m.start()])
        name = unicodedata.normalize("NFKC", m.group(2))
        spans.append((len(text), len(text) + len(name), TYPES.get(m.group(1), 4)))
        text += name
        at = m.end()
    text += unicodedata.normalize("NFKC", item["text"][at:])
    return text, spans


def example(tok, item):
    """An item as token ids, each name's token range, and its pairs (i, j, label, ended)."""
    text, spans = parse(item)
    toks = tok.spans(text)[:MAX_TOKENS]  # text is NFKC already: the spans index it
    ranges = []
    for b, e, _ in spans:
        inside = [k for k, (_, ts, te) in enumerate(toks) if ts < e and te > b]
        ranges.append((inside[0], inside[-1] + 1) if inside else None)
    texts = [normal(text[b:e]) for b, e, _ in spans]
    gold = {(normal(r["s"]), normal(r["o"])): r["p"] for r in item.get("relations", [])}
    ended = {(normal(r["s"]), normal(r["o"])) for r in item.get("relations", []) if r.get("ended")}
    pairs = []
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            if texts[i] == texts[j]:
                continue
            if (texts[i], texts[j]) in gold:
                label = gold[(texts[i], texts[j])] + ">"
            elif (texts[j], texts[i]) in gold:
                label = gold[(texts[j], texts[i])] + "<"
            else:
                label = "none"
            end = (texts[i], texts[j]) in ended or (texts[j], texts[i]) in ended
            pairs.append((i, j, LABELS.index(label), label != "none" and end))
    return {"id": item["id"], "ids": [t[0] for t in toks], "ranges": ranges, "types": [s[2] for s in spans], "texts": texts,
            "pairs": pairs}


def distance_bucket(d):
    return min(15, d if d < 8 else 8 + (d - 8).bit_length())


class Reader(torch.nn.Module):
    def __init__(self, encoder, hidden=256):
        super().__init__()
        self.encoder = encoder
        self.kind = torch.nn.Embedding(5, 32)
        self.dist = torch.nn.Embedding(16, 32)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(4 * 512 + 2 * 32 + 32 + 1, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, len(LABELS) + 1))

    def forward(self, batch):
        """Logits [pairs, 22] of every scorable pair of the items, and their (item, pair) places."""
        ids, mask = self.encoder.batch([ex["ids"] for ex in batch])
        x = self.encoder.hidden(ids, mask)
        rows, places = [], []
        for b, ex in enumerate(batch):
            pooled = [x[b, r[0]:r[1]].mean(0) if r else None for r in ex["ranges"]]
            for k, (i, j, _, _) in enumerate(ex["pairs"]):
                ri, rj = ex["ranges"][i], ex["ranges"][j]
                if ri is None or rj is None:
                    continue
                lo, hi = min(ri[1], rj[1]), max(ri[0], rj[0])
                between = x[b, lo:hi].mean(0) if hi > lo else torch.zeros(512)
                rows.append((pooled[i], pooled[j], between, ex["types"][i], ex["types"][j],
                             distance_bucket(max(0, hi - lo)), 1.0 if hi > lo else 0.0))
                places.append((b, k))
        if not rows:
            return torch.zeros(0, len(LABELS) + 1), places
        a = torch.stack([r[0] for r in rows])
        c = torch.stack([r[1] for r in rows])
        between = torch.stack([r[2] for r in rows])
        t = self.kind(torch.tensor([[r[3], r[4]] for r in rows])).flatten(1)
        d = self.dist(torch.tensor([r[5] for r in rows]))
        has = torch.tensor([[r[6]] for r in rows])
        return self.mlp(torch.cat([a, c, a * c, between, t, d, has], -1)), places


def label_logits(reader, examples, batch=32):
    """Per example, per pair: the labels' logits less none's (a tensor of 21), or None for a
    pair with a name beyond the tokens read."""
    reader.eval()
    out = [[None] * len(ex["pairs"]) for ex in examples]
    with torch.no_grad():
        for s in range(0, len(examples), batch):
            logits, places = reader(examples[s:s + batch])
            for row, (b, k) in zip(logits, places):
                out[s + b][k] = row[:-1] - row[0]
    reader.train()
    return out


def linear_logits(tool, model_path, files, examples):
    """The linear model's label logits less none's, in nats, of the same pairs (its features
    list every pair of an item's marked names in the order example() does)."""
    blob = open(model_path, "rb").read()
    if blob[:8] != b"ENGREL01":
        raise ValueError(f"{model_path}: not a relation model")
    (n,) = struct.unpack_from("<I", blob, 8)
    header = json.loads(blob[12:12 + n])
    if header["labels"] != LABELS:
        raise ValueError(f"{model_path}: labels {header['labels']}, this script reads {LABELS}")
    at, rows, cols = 12 + n, header["buckets"], len(header["labels"]) + 1
    w = torch.frombuffer(bytearray(blob[at:at + rows * cols]), dtype=torch.int8).view(rows, cols).float()
    bias = torch.tensor(struct.unpack_from(f"<{cols}i", blob, at + rows * cols), dtype=torch.float32)
    out = subprocess.run([tool, "features", "--buckets", str(rows), *files], check=True, capture_output=True,
                         text=True).stdout
    by_id = {}
    for line in out.splitlines():
        it = json.loads(line)
        by_id[it["id"]] = it["pairs"]
    logits = []
    for ex in examples:
        pairs = by_id.get(ex["id"], [])
        if [p["label"] for p in pairs] != [LABELS[y] for _, _, y, _ in ex["pairs"]]:
            raise ValueError(f"{ex['id']}: the features' pairs are not labelled as here")
        logits.append([(lambda v: (v[:-1] - v[0]) / header["unitsPerNat"])(w[p["feats"]].sum(0) + bias)
                       for p in pairs])
    return logits


def as_scored(logits):
    """(margin of the best label over none, best label, 0) of each pair's logits."""
    out = []
    for row in logits:
        out.append([])
        for v in row:
            best = int(v[1:].argmax()) + 1 if v is not None else 0
            out[-1].append((float(v[best]), best, 0.0) if v is not None else None)
    return out


def report(label, examples, scored):
    """Prints P, R and F1 at the best margin and at 0; returns (that margin, its F1, its counts by
    predicate)."""
    m = best_margin(examples, scored)
    p, r, f, by = judge(examples, scored, m)
    p0, r0, f0, _ = judge(examples, scored, 0.0)
    print(f"{label}: P {p:.3f} R {r:.3f} F {f:.3f} at margin {m:.2f} (at 0: P {p0:.3f} R {r0:.3f} F {f0:.3f})",
          flush=True)
    return m, f, by


def judge(examples, scored, margin):
    """(P, R, F1, by predicate {p: [tp, fp, fn]}) of the relations read at `margin`."""
    tp = fp = fn = 0
    by = {p: [0, 0, 0] for p in PREDICATES}
    for ex, sc in zip(examples, scored):
        gold, found = set(), set()
        for (i, j, y, _), s in zip(ex["pairs"], sc):
            if y:
                lab = LABELS[y]
                gold.add((ex["texts"][i], lab[:-1], ex["texts"][j]) if lab[-1] == ">" else
                         (ex["texts"][j], lab[:-1], ex["texts"][i]))
            if s and s[0] >= margin and (margin < 0 or s[0] > 0):  # as relation_classifier::read
                lab = LABELS[s[1]]
                found.add((ex["texts"][i], lab[:-1], ex["texts"][j]) if lab[-1] == ">" else
                          (ex["texts"][j], lab[:-1], ex["texts"][i]))
        for g in gold:
            hit = g in found
            tp += hit
            fn += not hit
            by[g[1]][0 if hit else 2] += 1
        for f in found - gold:
            fp += 1
            by[f[1]][1] += 1
    p = tp / max(1, tp + fp)
    r = tp / max(1, tp + fn)
    return p, r, 2 * p * r / max(1e-9, p + r), by


def best_margin(examples, scored):
    margins = sorted({round(s[0], 2) for sc in scored for s in sc if s} | {0.0})
    grid = [m for m in margins if -8 <= m <= 8][::max(1, len(margins) // 200)] + [0.0]
    return max(sorted(set(grid)), key=lambda m: (round(judge(examples, scored, m)[2], 6), -m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="train on a sample of this many items (the curve)")
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save", help="write the trained weights here (torch.save)")
    ap.add_argument("--freeze", action="store_true", help="the encoder's weights as they are; only the head learns")
    ap.add_argument("--load", help="judge the weights saved here instead of training")
    ap.add_argument("--linear", help="the linear model file, judged alone and with the reader")
    ap.add_argument("--tool", help="engram_train_relations (its features of the development pairs), with --linear")
    ap.add_argument("--then", nargs="*", default=[],
                    help="with --linear: items judged at the weights and margins chosen on --dev")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(a.threads)
    encoder = UseLite(a.model)
    t0 = time.time()
    load = lambda files: [example(encoder.tokenize, json.loads(line))  # noqa: E731
                          for f in files for line in open(f) if line.strip()]
    train = [ex for ex in load(a.train) if ex["pairs"]]
    dev = load(a.dev)
    if a.limit and a.limit < len(train):
        train = [train[i] for i in sorted(rng.sample(range(len(train)), a.limit))]
    cut = sum(1 for ex in dev for i, j, _, _ in ex["pairs"] if ex["ranges"][i] is None or ex["ranges"][j] is None)
    print(f"{len(train)} training items ({sum(len(ex['pairs']) for ex in train)} pairs), {len(dev)} development "
          f"({sum(len(ex['pairs']) for ex in dev)} pairs, {cut} with a name past {MAX_TOKENS} tokens); "
          f"read in {time.time() - t0:.0f} s", flush=True)
    reader = Reader(encoder)
    head = [p for n, p in reader.named_parameters() if not n.startswith("encoder.")]
    groups = [{"params": head, "lr": 1e-3}]
    if a.freeze:
        encoder.requires_grad_(False)
    else:
        groups.append({"params": encoder.parameters(), "lr": a.lr})
    opt = torch.optim.Adam(groups)
    batch = 16
    if a.load:
        reader.load_state_dict(torch.load(a.load))
    for epoch in range(0 if a.load else a.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        t1, total, seen = time.time(), 0.0, 0
        for step, s in enumerate(range(0, len(order), batch)):
            chunk = [train[i] for i in order[s:s + batch]]
            logits, places = reader(chunk)
            if not places:
                continue
            y = torch.tensor([chunk[b]["pairs"][k][2] for b, k in places])
            loss = torch.nn.functional.cross_entropy(logits[:, :-1], y)
            related = y > 0
            if bool(related.any()):
                ended = torch.tensor([float(chunk[b]["pairs"][k][3]) for b, k in places])
                loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(logits[related, -1], ended[related])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(places)
            seen += len(places)
            if step % 200 == 0:
                print(f"  epoch {epoch + 1} step {step}: loss {total / max(1, seen):.4f} ({time.time() - t1:.0f} s)",
                      flush=True)
        scored = as_scored(label_logits(reader, dev))
        _, _, by = report(f"epoch {epoch + 1} ({time.time() - t1:.0f} s, loss {total / max(1, seen):.4f}): "
                          "development", dev, scored)
        print("  " + "; ".join(f"{k} {v[0] / max(1, v[0] + v[1]):.2f}/{v[0] / max(1, v[0] + v[2]):.2f} "
                               f"({v[0] + v[2]})" for k, v in by.items()), flush=True)
    if a.save:
        torch.save(reader.state_dict(), a.save)
    if a.linear:
        sets = [("development", a.dev, dev)] + ([("then", a.then, load(a.then))] if a.then else [])
        chosen, best_f = {}, {}
        for name, files, items in sets:
            mine = label_logits(reader, items)
            theirs = linear_logits(a.tool, a.linear, files, items)
            for w in (None, 0.0, 0.3, 0.5, 0.7):
                label = "the reader" if w is None else f"the linear model, with the reader's logits weighted {w}"
                both = mine if w is None else [[t if m is None else w * m + (1 - w) * t for m, t in zip(mr, tr)]
                                               for mr, tr in zip(mine, theirs)]
                scored = as_scored(both)
                if name == "development":
                    chosen[w], f, _ = report(f"{name}, {label}", items, scored)
                    if w:
                        best_f[w] = f
                else:
                    p, r, f, _ = judge(items, scored, chosen[w])
                    mark = " (the weight chosen on development)" if w == max(best_f, key=best_f.get) else ""
                    print(f"{name}, {label}: P {p:.3f} R {r:.3f} F {f:.3f} at the development margin "
                          f"{chosen[w]:.2f}{mark}", flush=True)


if __name__ == "__main__":
    main()
