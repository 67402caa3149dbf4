#!/usr/bin/python3
"""Trains recall's query head (embedding/query_head.hpp): a low-rank residual map of a question's
vector, learnt with PyTorch so that a question lands near the messages that answer it. Written in
the head format the C++ reads. Deterministic: one thread, fixed seeds, conversations and questions
in file order, so two runs on one machine write the same bytes.

usage: train.py --tool BIN --model ENCODER --train FILE... --dev FILE... --out HEAD
                [--rank R] [--epochs E] [--tau T] [--lr L] [--seed S] [--work DIR]

The vectors come from `engram_train_recall embed` (the int8 encoder recall runs). A message is
represented as the store keeps it: its own vector, plus half the vector of the message before it
when another speaker wrote that one (a reply leans towards the message it answers). The loss, per
question: minus the log of the softmax mass of its evidence messages among all the messages of its
conversation (temperature tau). The epoch kept is the one with the best recall@10 of the mapped
questions over the development conversations' messages (vectors alone); the figures of every
epoch are printed.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch


def embed(tool, model, files, prefix):
    subprocess.run([tool, "embed", "--model", model, "--out", prefix, *files], check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in open(prefix + ".json")]
    vectors = np.fromfile(prefix + ".f32", dtype="<f4").reshape(len(rows), -1)
    return rows, vectors


def conversations(rows, vectors):
    """Per conversation, in file order: (messages as stored, question vectors, evidence indexes,
    kinds). Questions with no answer are left out (they have no evidence to learn from)."""
    order, by = [], {}
    for i, r in enumerate(rows):
        c = r["conversation"]
        if c not in by:
            by[c] = {"messages": [], "questions": []}
            order.append(c)
        by[c]["messages" if r["what"] == "message" else "questions"].append(i)
    out = []
    for c in order:
        ms = by[c]["messages"]
        m = vectors[ms].astype(np.float64)
        for k in range(1, len(ms)):
            if rows[ms[k]]["from"] != rows[ms[k - 1]]["from"]:
                m[k] = vectors[ms[k]] + 0.5 * vectors[ms[k - 1]]
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        position = {rows[i]["id"]: j for j, i in enumerate(ms)}
        qs, evidence, kinds = [], [], []
        for qi in by[c]["questions"]:
            answers = [position[a] for a in rows[qi]["answers"] if a in position]
            if answers:
                qs.append(vectors[qi])
                evidence.append(answers)
                kinds.append(rows[qi]["kind"])
        if qs:
            out.append((torch.tensor(m, dtype=torch.float32), torch.tensor(np.array(qs), dtype=torch.float32),
                        evidence, kinds))
    return out


class Head(torch.nn.Module):
    def __init__(self, dim, rank):
        super().__init__()
        self.u = torch.nn.Parameter(torch.randn(dim, rank) * 0.01)
        self.v = torch.nn.Parameter(torch.zeros(rank, dim))

    def forward(self, q):
        o = q + (q @ self.u) @ self.v
        return o / o.norm(dim=1, keepdim=True)


def recall_at(head, sets, k=10):
    hits, n, by_kind = 0, 0, {}
    with torch.no_grad():
        for m, q, evidence, kinds in sets:
            mapped = head(q) if head else q
            top = (mapped @ m.T).topk(min(k, m.shape[0]), dim=1).indices.tolist()
            for i, answers in enumerate(evidence):
                hit = any(x in answers for x in top[i])
                hits += hit
                n += 1
                row = by_kind.setdefault(kinds[i], [0, 0])
                row[0] += hit
                row[1] += 1
    return hits / max(n, 1), {kind: round(a / b, 3) for kind, (a, b) in sorted(by_kind.items())}


def train(train_sets, dev_sets, dim, rank, epochs, tau, lr, seed, batch=64):
    torch.manual_seed(seed)
    head = Head(dim, rank)
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    base, base_kinds = recall_at(None, dev_sets)
    print(f"development recall@10 by vectors, no head: {base:.3f} {base_kinds}", file=sys.stderr)
    best = (base, -1, None)
    for epoch in range(epochs):
        total = 0.0
        for m, q, evidence, _ in train_sets:
            perm = torch.randperm(len(evidence))
            for b in range(0, len(evidence), batch):
                idx = perm[b:b + batch].tolist()
                s = head(q[idx]) @ m.T / tau
                mask = torch.zeros_like(s, dtype=torch.bool)
                for row, i in enumerate(idx):
                    mask[row, evidence[i]] = True
                loss = -(torch.logsumexp(s.masked_fill(~mask, -1e9), 1) - torch.logsumexp(s, 1)).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item()
        dev, kinds = recall_at(head, dev_sets)
        print(f"epoch {epoch + 1}: loss {total:.2f}, train recall@10 {recall_at(head, train_sets)[0]:.3f}, "
              f"development {dev:.3f} {kinds}", file=sys.stderr)
        if dev > best[0]:
            best = (dev, epoch + 1, {k: v.detach().clone() for k, v in head.state_dict().items()})
    if best[2] is None:
        sys.exit("train.py: no epoch beat the encoder alone on the development conversations")
    print(f"kept epoch {best[1]}: development recall@10 {best[0]:.3f} (no head {base:.3f})", file=sys.stderr)
    head.load_state_dict(best[2])
    return head, best


def write_head(path, head, dim, rank, name):
    header = json.dumps({"format": 1, "name": name, "encoder": "use-lite-int8", "dim": dim, "rank": rank},
                        separators=(",", ":"), sort_keys=True).encode()
    u = head.u.detach().numpy().astype("<f4")
    v = head.v.detach().numpy().astype("<f4")
    with open(path, "wb") as f:
        f.write(b"ENGHEAD1")
        f.write(struct.pack("<I", len(header)))
        f.write(header)
        f.write(u.tobytes(order="C"))
        f.write(v.tobytes(order="C"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--name", default="query-head")
    ap.add_argument("--work", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    work = a.work or tempfile.mkdtemp(prefix="engram-recall-")
    os.makedirs(work, exist_ok=True)
    train_sets = conversations(*embed(a.tool, a.model, a.train, os.path.join(work, "train")))
    dev_sets = conversations(*embed(a.tool, a.model, a.dev, os.path.join(work, "dev")))
    dim = train_sets[0][0].shape[1]
    print(f"{sum(len(s[2]) for s in train_sets)} training questions in {len(train_sets)} conversations, "
          f"{sum(len(s[2]) for s in dev_sets)} development questions in {len(dev_sets)}", file=sys.stderr)
    head, _ = train(train_sets, dev_sets, dim, a.rank, a.epochs, a.tau, a.lr, a.seed)
    write_head(a.out, head, dim, a.rank, a.name)


if __name__ == "__main__":
    main()
