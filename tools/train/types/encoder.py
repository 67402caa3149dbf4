#!/usr/bin/python3
"""The sentence encoder trained for entry types: the adapter engramd's type model reads through
(--part lora --rank 8 --words --out, as `tools/dev.sh train types` runs it), and the other parts
of the encoder one could train instead, measured (docs/training.md, "The entry-type model").
Deterministic on one machine: one thread, seed 7, the examples in the dump's order.

The encoder (tools/train/recall/use_lite.py, from the model file engramd reads) with a linear
head over its sentence vector (times 8) for the seven entry types and none, and optionally the
hashed words beside it (--words: the words and adjacent pairs of embedding/type_model.cpp's
word_features, as the dump gives them: FNV-1a into 8,192 buckets, scaled to length 2). What is trained besides the head:

  --part head     nothing (the encoder as it is)
  --part tanh     the last projection (tanh layer)
  --part norms    every bias and layer norm of the encoder
  --part lora     a rank-R update (--rank) of every matrix, the tanh layer's included, with the
                  biases and layer norms
  --part all      every weight (measured with --lr 5e-5)

With --out (--part lora), writes the encoder's change as the adapter file engramd reads
(embedding/type_model.hpp, "ENGADPT1"): each rank-R update as its two factors, then the trained
biases and norms. The head trained here only steers the encoder: engram_train_types fits the
shipped head (type_weights.inc) again on the changed encoder's vectors.

Examples are what `engram_train_types --dump FILE` writes (text, class and words; the vectors
are not read): train on one dump, and optionally judge on another (e.g. development 2's labelled
statements and junk, `--dump FILE --embed STATEMENTS`). Prints, after each epoch, the share of
the judged statements typed right and of the junk read as none. Adam, batches of 16.

  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread OPENBLAS_NUM_THREADS=1 \\
    /usr/bin/python3 tools/train/types/encoder.py --model .cache/models/use-lite-en.bin \\
    --train train.jsonl --judge dev2.jsonl --part lora --rank 8 --words --epochs 1
"""
import argparse
import json
import os
import random
import struct
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "recall"))
from use_lite import UseLite  # noqa: E402

TYPES = 8  # the seven entry types, then none
BUCKETS = 8192
MATRICES = ["qkv_w", "out_w", "res_w", "ffn1_w", "ffn2_w"]


class LowRank:
    """W + A.B in place of the matrix `name` of `owner` (its base kept as it is)."""

    def __init__(self, owner, name, rank):
        self.owner, self.name = owner, name
        self.base = getattr(owner, name).data
        del owner._parameters[name]
        self.a = torch.nn.Parameter(torch.randn(self.base.shape[0], rank) * 0.01)
        self.b = torch.nn.Parameter(torch.zeros(rank, self.base.shape[1]))

    def apply(self):
        setattr(self.owner, self.name, self.base + self.a @ self.b)


def trainable(enc, part, rank):
    """The encoder's parameters to train, and the low-rank updates to apply before each pass."""
    for p in enc.parameters():
        p.requires_grad = part == "all"
    if part in ("head", "all"):
        return (list(enc.parameters()) if part == "all" else []), []
    if part == "tanh":
        chosen = [enc.tanh_w, enc.tanh_b]
    else:
        chosen = [p for n, p in enc.named_parameters() if n.endswith("_b") or "ln" in n]
    updates = []
    if part == "lora":
        for layer in enc.layers:
            updates += [LowRank(layer, m, rank) for m in MATRICES if getattr(layer, m, None) is not None]
        updates.append(LowRank(enc, "tanh_w", rank))
        chosen += [t for u in updates for t in (u.a, u.b)]
    for p in chosen:
        p.requires_grad = True
    return chosen, updates


def tensor_name(param_name):
    """The model file's name of a parameter of UseLite ("layers.0.qkv_b" -> "l0.qkv_b")."""
    m = param_name.split(".")
    return f"l{m[1]}.{m[2]}" if m[0] == "layers" else param_name


def write_adapter(path, enc, updates, rank):
    """The adapter file (embedding/type_model.hpp: "ENGADPT1", JSON, then the tensor table)."""
    tensors = []
    for u in updates:
        prefix = next((f"l{i}." for i, layer in enumerate(enc.layers) if layer is u.owner), "")
        tensors += [(f"{prefix}{u.name}.a", u.a), (f"{prefix}{u.name}.b", u.b)]
    tensors += [(tensor_name(n), p) for n, p in enc.named_parameters() if p.requires_grad]
    meta = json.dumps({"format": 1, "encoder": "use-lite-int8", "rank": rank}, sort_keys=True).encode()
    with open(path, "wb") as f:
        f.write(b"ENGADPT1" + struct.pack("<I", len(meta)) + meta + struct.pack("<I", len(tensors)))
        for name, t in tensors:
            data = t.detach().contiguous().view(-1).to(torch.float32).numpy().astype("<f4").tobytes()
            f.write(struct.pack("<I", len(name)) + name.encode() + struct.pack("<I", len(data) // 4) + data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--judge", help="examples to judge after each epoch (none: no judging)")
    ap.add_argument("--part", choices=["head", "tanh", "norms", "lora", "all"], default="lora")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--words", action="store_true")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3, help="the encoder's part (the head: 1e-3)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="write the encoder's change here as an adapter file (--part lora)")
    a = ap.parse_args()
    if a.out and a.part != "lora":
        ap.error("--out writes the adapter of --part lora only")
    torch.manual_seed(7)
    random.seed(7)
    torch.set_num_threads(a.threads)
    words = {}

    def load(path):
        out = []
        for r in map(json.loads, open(path, encoding="utf-8")):
            out.append((r["text"], r["cls"]))
            words[r["text"]] = dict(r["words"])
        return out

    train, judged = load(a.train), (load(a.judge) if a.judge else [])
    enc = UseLite(a.model)
    tokens = {t: enc.tokenize(t) for t, _ in train + judged}
    head = torch.nn.Linear(512, TYPES)
    bag = torch.nn.EmbeddingBag(BUCKETS, TYPES, mode="sum")
    torch.nn.init.zeros_(bag.weight)
    encoder_part, updates = trainable(enc, a.part, a.rank)
    groups = [{"params": list(head.parameters()) + list(bag.parameters()), "lr": 1e-3}]
    if encoder_part:
        groups.append({"params": encoder_part, "lr": a.lr})
    opt = torch.optim.Adam(groups)
    print(f"{a.part}: {sum(p.numel() for p in encoder_part)} weights of the encoder trained", flush=True)

    def logits(texts):
        for u in updates:
            u.apply()
        z = head(enc([tokens[t] for t in texts]) * 8.0)
        if a.words:
            idx, off, val = [], [], []
            for t in texts:
                off.append(len(idx))
                idx += list(words[t].keys())
                val += list(words[t].values())
            z = z + bag(torch.tensor(idx, dtype=torch.long), torch.tensor(off, dtype=torch.long),
                        per_sample_weights=torch.tensor(val, dtype=torch.float32))
        return z

    def judge():
        if not judged:
            return "(nothing judged)"
        right = [0, 0]
        seen = [0, 0]
        with torch.no_grad():
            for i in range(0, len(judged), 64):
                batch = judged[i:i + 64]
                for (_, c), p in zip(batch, logits([t for t, _ in batch]).argmax(-1).tolist()):
                    k = int(c == TYPES - 1)
                    seen[k] += 1
                    right[k] += p == c
        return f"statements typed right {right[0] / seen[0]:.3f}, junk read as none {right[1] / seen[1]:.3f}"

    print("before:", judge(), flush=True)
    for epoch in range(a.epochs):
        random.shuffle(train)
        start, total = time.time(), 0.0
        for i in range(0, len(train), 16):
            batch = train[i:i + 16]
            loss = torch.nn.functional.cross_entropy(logits([t for t, _ in batch]),
                                                     torch.tensor([c for _, c in batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss)
        print(f"epoch {epoch + 1} (loss {total / (len(train) / 16):.3f}, {time.time() - start:.0f} s):", judge(),
              flush=True)
    if a.out:
        write_adapter(a.out, enc, updates, a.rank)
        print("wrote", a.out, flush=True)


if __name__ == "__main__":
    main()
