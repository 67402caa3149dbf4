#!/usr/bin/python3
"""Measures a second reading of the name tagger's spans (docs/training.md, "A second reading of
a span"): a linear classifier over the whole span and a wider context (the span's words, its
first and last word, their shapes, up to three words either side, optionally the sentence's
words and the neighbours of the span's other mentions) that retypes each span the tagger keeps,
or rejects it. An experiment, not a model the engine serves: it prints typed exact-span
precision and recall on the development set, the held-out sentences and the held-out mail for
each setting, the CRF alone first.

The classifier learns from spans the tagger read on text it was not trained on: two CRFs are
trained by train.py, one on the even writers and one on the odd ones, and each reads the other
half (cross-fitting; the committed model has fit its own training set, loss near 0, so its
scores there say nothing). At evaluation the committed model reads the three sets.

usage: second_stage.py --tool BIN --lexicon LEX --work DIR --model MODEL
                       --train FILE... --dev FILE... --held FILE... --mail FILE...
                       [--probability P] [--window W] [--sentence] [--mentions]
                       [--crf-inputs] [--reject] [--mix L ...] [--reject-above T ...]
--probability P: the spans kept, down to span probability P (0.01, the committed threshold).
--mix L: the type is argmax(CRF log-probability of the span as each type + L x the classifier's
log-probability); without it, the classifier's own choice.
--reject: a sixth class, "not a name"; a span is dropped when its probability is above T.
"""
import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys
import zlib

import torch

TYPES = ["PER", "ORG", "PROD", "LOC", "ID"]
EDGE_PUNCTUATION = set(b".,;:'\"")


def trimmed(text, b, e):
    """A span's edges without the punctuation around it, as engram_train_names eval compares."""
    while e > b and text[e - 1] in EDGE_PUNCTUATION:
        e -= 1
    while b < e and text[b] in EDGE_PUNCTUATION:
        b += 1
    return b, e


def shape(word):
    out = []
    for c in word:
        k = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not out or out[-1] != k:
            out.append(k)
    return "".join(out)


def units_per_nat(model_path):
    b = open(model_path, "rb").read()
    n = struct.unpack("<I", b[8:12])[0]
    return json.loads(b[12:12 + n])["unitsPerNat"]


def read_spans(tool, model, probability, files, work, name):
    """engram_train_names spans at span probability >= `probability`, kept in `work` under the
    set's name, the probability and the model's checksum (another model reads again); items
    with byte texts."""
    out = os.path.join(work, f"spans-{name}-{probability}-{zlib.crc32(open(model, 'rb').read()):08x}.jsonl")
    if not os.path.exists(out):
        threshold = math.floor(math.log(probability) * units_per_nat(model))
        with open(out, "w") as f:
            subprocess.run([tool, "spans", "--model", model, "--threshold", str(threshold), *files], check=True,
                           stdout=f)
    items = []
    for line in open(out):
        it = json.loads(line)
        it["text"] = it["text"].encode()
        it["units"] = units_per_nat(model)
        items.append(it)
    return items


def span_features(it, span, opts):
    text, tokens = it["text"], it["tokens"]
    inside = [i for i, (tb, te) in enumerate(tokens) if tb >= span["begin"] and te <= span["end"]]
    i0, i1 = inside[0], inside[-1]
    words = [text[tb:te].decode("utf-8", "replace") for tb, te in tokens]
    low = [w.lower() for w in words]
    own = low[i0:i1 + 1]
    f = ["bias", "span=" + " ".join(own), "first=" + own[0], "last=" + own[-1], "last3=" + own[-1][-3:],
         "first3=" + own[0][:3], "n=%d" % min(len(own), 5),
         "shape=" + " ".join(shape(w) for w in words[i0:i1 + 1])[:30]]
    f += ["in=" + w for w in own]
    for k in range(1, opts.window + 1):
        left = low[i0 - k] if i0 >= k else "<s>"
        right = low[i1 + k] if i1 + k < len(low) else "</s>"
        f += ["l%d=%s" % (k, left), "r%d=%s" % (k, right), "l=" + left, "r=" + right]
    if opts.sentence:
        f += ["sentence=" + w for w in sorted(set(low)) if w.isalpha() and len(w) > 2]
    if opts.mentions:
        for j, w in enumerate(low):
            if (j < i0 or j > i1) and w == own[-1]:
                f += ["mention_l=" + low[j - 1]] if j > 0 else []
                f += ["mention_r=" + low[j + 1]] if j + 1 < len(low) else []
    return f


def crf_inputs(span, units):
    """The CRF's log-probability of the span as each type, from the best, in nats / 5."""
    best = max(span["scores"])
    return [max((s - best) / units, -20) / 5 for s in span["scores"]]


class Typer(torch.nn.Module):
    def __init__(self, buckets, classes, with_crf):
        super().__init__()
        self.rows = torch.nn.EmbeddingBag(buckets, classes, mode="sum")
        torch.nn.init.zeros_(self.rows.weight)
        self.crf = torch.nn.Linear(len(TYPES), classes, bias=False) if with_crf else None
        if self.crf is not None:
            torch.nn.init.zeros_(self.crf.weight)

    def forward(self, flat, offsets, crf):
        out = self.rows(flat, offsets)
        return out + self.crf(crf) if self.crf is not None else out


def batch(examples, buckets):
    flat, offsets, crf = [], [], []
    for feats, scores, _ in examples:
        offsets.append(len(flat))
        flat.extend(zlib.crc32(x.encode()) % buckets for x in feats)
        crf.append(scores)
    return torch.tensor(flat), torch.tensor(offsets), torch.tensor(crf, dtype=torch.float32)


def examples_of(items, opts):
    """(features, CRF inputs, class) of each kept span whose edges are a labelled name's (and,
    with --reject, of the others, as class 5)."""
    out = []
    for it in items:
        gold = {trimmed(it["text"], b, e): t for b, e, t in it["gold"]}
        for span in it["kept"]:
            t = gold.get(trimmed(it["text"], span["begin"], span["end"]))
            if t is None and not opts.reject:
                continue
            out.append((span_features(it, span, opts), crf_inputs(span, it["units"]),
                        TYPES.index(t) if t else len(TYPES)))
    return out


def fit(examples, opts, epochs=6, seed=7):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = Typer(opts.buckets, len(TYPES) + opts.reject, opts.crf_inputs)
    adam = torch.optim.Adam(model.parameters(), lr=0.05)
    order = list(range(len(examples)))
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for b in range(0, len(order), 64):
            chosen = [examples[i] for i in order[b:b + 64]]
            adam.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(*batch(chosen, opts.buckets)),
                                                     torch.tensor([c for _, _, c in chosen]))
            (loss + 1e-6 * model.rows.weight.pow(2).sum()).backward()
            adam.step()
            total += loss.item() * len(chosen)
        print(f"epoch {epoch + 1}/{epochs}: loss {total / len(examples):.4f}", file=sys.stderr)
    return model.eval()


def score(items, choose):
    tp = fp = fn = 0
    for it in items:
        gold = {trimmed(it["text"], b, e) + (t,) for b, e, t in it["gold"]}
        found = set()
        for span in it["kept"]:
            t = choose(it, span)
            if t is not None:
                found.add(trimmed(it["text"], span["begin"], span["end"]) + (t,))
        tp, fp, fn = tp + len(gold & found), fp + len(found - gold), fn + len(gold - found)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def main():
    ap = argparse.ArgumentParser()
    for name in ("--tool", "--lexicon", "--work", "--model"):
        ap.add_argument(name, required=True)
    for name in ("--train", "--dev", "--held", "--mail"):
        ap.add_argument(name, nargs="+", required=True)
    ap.add_argument("--probability", type=float, default=0.01)
    ap.add_argument("--window", type=int, default=3)
    ap.add_argument("--sentence", action="store_true")
    ap.add_argument("--mentions", action="store_true")
    ap.add_argument("--crf-inputs", action="store_true")
    ap.add_argument("--reject", action="store_true")
    ap.add_argument("--mix", type=float, nargs="*", default=[])
    ap.add_argument("--reject-above", type=float, nargs="*", default=[1.01])
    ap.add_argument("--buckets", type=int, default=1 << 18)
    opts = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(opts.work, exist_ok=True)

    halves = {"even": [], "odd": []}
    for f in opts.train:
        writer = os.path.basename(f).split("-")[0]
        halves["even" if int(writer[1:]) % 2 == 0 else "odd"].append(f)
    learnt = []
    for half, other in (("even", "odd"), ("odd", "even")):
        model = os.path.join(opts.work, f"crf-{half}.bin")
        if not os.path.exists(model):
            subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "train.py"), "--tool", opts.tool,
                            "--lexicon", opts.lexicon, "--dev", *opts.dev, "--train", *halves[half], "--out", model],
                           check=True)
        learnt += read_spans(opts.tool, model, opts.probability, halves[other], opts.work, other)
    sets = {name: read_spans(opts.tool, opts.model, opts.probability, files, opts.work, name)
            for name, files in (("development", opts.dev), ("held-out", opts.held), ("held-out mail", opts.mail))}
    examples = examples_of(learnt, opts)
    print(f"learning from {len(examples)} spans read by the other half's CRF", file=sys.stderr)
    typer = fit(examples, opts)

    cache = {}

    def log_probs(it, span):
        key = (id(it), span["begin"], span["end"])
        if key not in cache:
            with torch.no_grad():
                cache[key] = torch.log_softmax(
                    typer(*batch([(span_features(it, span, opts), crf_inputs(span, it["units"]), 0)], opts.buckets)),
                    1)[0]
        return cache[key]

    def row(label, choose):
        cells = [f"{p:.3f} / {r:.3f}" for p, r in (score(items, choose) for items in sets.values())]
        print(f"| {label} | " + " | ".join(cells) + " |")

    print("| setting | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    row(f"CRF alone, p >= {opts.probability}", lambda it, span: span["type"])
    for above in opts.reject_above:
        for mix in opts.mix or [None]:
            def choose(it, span, mix=mix, above=above):
                lp = log_probs(it, span)
                if len(lp) > len(TYPES) and math.exp(float(lp[len(TYPES)])) > above:
                    return None
                if mix is None:
                    return TYPES[int(torch.argmax(lp[:len(TYPES)]))] if not opts.reject else span["type"]
                crf = torch.tensor([s / it["units"] for s in span["scores"]])
                return TYPES[int(torch.argmax(crf + mix * lp[:len(TYPES)]))]
            row(f"mix {mix}, reject above {above}", choose)


if __name__ == "__main__":
    main()
