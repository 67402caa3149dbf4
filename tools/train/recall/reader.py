#!/usr/bin/python3
"""A neural reader of a question against each of its ten results, tried as a second signal for
"no answer" (docs/recall.md, "No answer"): does this passage (a message with the one before it)
answer the question? Decomposable attention (Parikh et al., 2016) over the word vectors (frozen,
100-d) with seven features a token (in the other text, a digit, capitalised, a date word, a
number word, its rarity in the conversation, unknown to the word vectors): each question word
attends over the passage and each passage word over the question, the aligned pairs are
compared and pooled, and one logit says whether the passage is among the question's evidence.
It learns from the training conversations' answered questions (their evidence among the ten)
and those with no answer (none of the ten), the questions written apart included. "No answer"
is then 1 - the best of the ten; it is judged alone and stacked on abstain.py's classifier
(a logistic regression over both, each development conversation scored by one fitted on the
other), on the development conversations only.

usage: reader.py --tool BIN --model ENCODER --head HEAD --glove WORDS.json --train FILE... --dev FILE...
                 [--more-none DIR...] [--epochs N]
"""
import math
import pathlib
import re
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here))
import abstain  # noqa: E402  (its simulation of recall, features and judge)

TOKEN = re.compile(r"[A-Za-zÀ-ÿĄ-ž]+(?:'[a-z]+)?|\d+(?:[.,]\d+)?|[£$€%]")
NF = 7  # features a token


def tokens(text, limit):
    return TOKEN.findall(text)[:limit]


class Vocab:
    def __init__(self, glove):
        self.glove, self.stem = glove, abstain.bm25.stem
        self.matrix = np.vstack([np.zeros((2, 100), np.float32), glove.vectors])  # 0 pad, 1 unknown

    def encode(self, toks, other_stems, df, n):
        ids, feats = [], []
        for i, t in enumerate(toks):
            low = t.lower().replace("'", "")
            ids.append(self.glove.index[low] + 2 if low in self.glove.index else 1)
            s = self.stem(low)
            d = df.get(s, 0)
            feats.append([float(s in other_stems), float(t[0].isdigit() or t in "£$€%"), float(i > 0 and t[0].isupper()),
                          float(low in abstain.MONTHS), float(low in abstain.NUMBER_WORDS), math.log(1 + (n - d + 0.5) / (d + 0.5)) / 6,
                          float(low not in self.glove.index)])
        return ids, feats


class Reader(nn.Module):
    def __init__(self, matrix, h=64):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(torch.tensor(matrix), freeze=True, padding_idx=0)
        d = 100 + NF
        self.f = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.g = nn.Sequential(nn.Linear(3 * h, h), nn.ReLU())
        self.k = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU())
        self.out = nn.Sequential(nn.Linear(4 * h, h), nn.ReLU(), nn.Linear(h, 1))

    def forward(self, qi, qf, pi, pf):
        qm, pm = (qi > 0).float(), (pi > 0).float()
        a = self.f(torch.cat([self.emb(qi), qf], -1))
        b = self.f(torch.cat([self.emb(pi), pf], -1))
        e = a @ b.transpose(1, 2)  # B x Q x P
        beta = torch.softmax(e.masked_fill(pm[:, None, :] == 0, -1e9), -1) @ b
        alpha = torch.softmax(e.masked_fill(qm[:, :, None] == 0, -1e9), 1).transpose(1, 2) @ a
        v1 = self.g(torch.cat([a, beta, a * beta], -1)) * qm[..., None]
        v2 = self.k(torch.cat([b, alpha], -1)) * pm[..., None]
        w = qf[..., 5:6] * qm[..., None]  # question words weighted by rarity
        agg = torch.cat([(v1 * w).sum(1) / (w.sum(1) + 1e-6), v1.max(1).values,
                         v2.sum(1) / (pm.sum(1, keepdim=True) + 1e-6), v2.max(1).values], -1)
        return self.out(agg).squeeze(-1)


def pad(rows, width):
    n = max(1, max(len(r) for r in rows))
    if width:
        arr = np.zeros((len(rows), n, width), np.float32)
    else:
        arr = np.zeros((len(rows), n), np.int64)
    for i, r in enumerate(rows):
        if r:
            arr[i, :len(r)] = r
    return torch.tensor(arr)


def pairs(items, messages, vocab, stem, k=10):
    """Per item its top k passages (the message and the one before) encoded against the question,
    with whether each is among its evidence."""
    out = []
    for it in items:
        ms = messages[it["conversation"]]
        q = tokens(it["question"]["question"], 32)
        qstems = {stem(t.lower().replace("'", "")) for t in q}
        for i in it["top"][:k]:
            text = (ms[i - 1]["from"] + ": " + ms[i - 1]["text"] + " " if i > 0 else "") + ms[i]["from"] + ": " + ms[i]["text"]
            p = tokens(text, 160)
            pstems = {stem(t.lower().replace("'", "")) for t in p}
            qi, qf = vocab.encode(q, pstems, it["df"], it["n"])
            pi, pf = vocab.encode(p, qstems, it["df"], it["n"])
            out.append((qi, qf, pi, pf, float(i in it["answers"])))
    return out


def batches(data, size, order):
    for s in range(0, len(order), size):
        b = [data[j] for j in order[s:s + size]]
        yield (pad([x[0] for x in b], 0), pad([x[1] for x in b], NF), pad([x[2] for x in b], 0),
               pad([x[3] for x in b], NF), torch.tensor([x[4] for x in b]))


def train_reader(data, matrix, epochs=6, seed=7, log=None):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    model = Reader(matrix)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=2e-3, weight_decay=1e-5)
    for ep in range(epochs):
        model.train()
        order = rng.permutation(len(data))
        total = 0.0
        for qi, qf, pi, pf, y in batches(data, 64, order):
            loss = F.binary_cross_entropy_with_logits(model(qi, qf, pi, pf), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(y)
        if log:
            log(f"epoch {ep}: loss {total / len(data):.4f}")
    return model


def score(model, data):
    model.eval()
    out = []
    with torch.no_grad():
        for qi, qf, pi, pf, _ in batches(data, 256, np.arange(len(data))):
            out.append(torch.sigmoid(model(qi, qf, pi, pf)).numpy())
    return np.concatenate(out)


def main():
    ap = abstain.levers.arguments()
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--more-none", nargs="*", default=[], help="as abstain.py's")
    ap.add_argument("--epochs", type=int, default=6)
    a = ap.parse_args()
    from sklearn.linear_model import LogisticRegression
    train_convs, extra, dev_convs, vec, glove, head = abstain.prepare(a)
    train, dev = abstain.retrieve(train_convs, vec, head), abstain.retrieve(dev_convs, vec, head)
    vocab = Vocab(glove)
    messages = {c["id"]: c["messages"] for c in train_convs + dev_convs}
    for items in (train, dev):
        for it in items:
            ids = [m["id"] for m in it["messages"]]
            it["answers"] = [ids.index(x) for x in it["question"]["answers"]]
    model = train_reader(pairs(train, messages, vocab, abstain.bm25.stem), vocab.matrix, epochs=a.epochs,
                         log=lambda s: print(s, flush=True))
    p = score(model, pairs(dev, messages, vocab, abstain.bm25.stem)).reshape(-1, 10)
    none, auc, nn_, na = abstain.judge(-p.max(1), dev)
    print(f"the reader alone: abstains on {none:.3f} of {nn_} with no answer at 2 % of {na} answered lost; AUC {auc:.3f}")
    answered = [j for j, it in enumerate(dev) if it["answered"]]
    hit1 = np.mean([dev[j]["top"][int(np.argmax(p[j]))] in dev[j]["answers"] for j in answered])
    base1 = np.mean([dev[j]["top"][0] in dev[j]["answers"] for j in answered])
    print(f"its first of the ten holds the evidence for {hit1:.3f} of the answered, the fused order's for {base1:.3f}")
    x = np.array([abstain.features(it, glove) for it in train])
    g = abstain.gbm(x, np.array([it["none"] for it in train], dtype=int))
    pg = g.predict_proba(np.array([abstain.features(it, glove) for it in dev]))[:, 1]
    best = -np.sort(-p, 1)
    stacked_x = np.column_stack([np.log(pg / (1 - pg)), best[:, 0], best[:, 1], best[:, :3].sum(1), p[:, 0]])
    y = np.array([it["none"] for it in dev], dtype=int)
    conv = np.array([it["conversation"] for it in dev])
    for label, cols in (("abstain.py's classifier", slice(0, 1)), ("stacked with the reader", slice(None))):
        out = np.zeros(len(dev))
        for c in np.unique(conv):
            m = conv == c
            out[m] = LogisticRegression().fit(stacked_x[~m][:, cols], y[~m]).predict_proba(stacked_x[m][:, cols])[:, 1]
        none, auc, nn_, na = abstain.judge(out, dev)
        print(f"{label} (each development conversation by a fit on the other): abstains on {none:.3f} of {nn_} "
              f"at 2 % of {na} answered lost; AUC {auc:.3f}")


if __name__ == "__main__":
    main()
