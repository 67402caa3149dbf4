#!/usr/bin/python3
"""A reader that starts from the sentence encoder: the question and a message read together by
the encoder's two layers (use_lite.py), its pooled output scored by one new unit ("does this
message answer the question?"), every weight trained on the training conversations.

Candidates are what the encoder alone ranks first: each message of a conversation and each
question embedded by the pretrained encoder, the ten messages closest to the question. Training
pairs: a question with each of its evidence messages (answers it), and with the four closest
messages that are not its evidence (do not); a question with no answer with its four closest.
On the development conversations the question's score is the best of its ten; "no answer" is
judged as abstain.py judges it (the questions with no answer against those answered: their
evidence among the ten): the share that abstain when 2 % of the answered do, and the area under
the curve.

usage: crossenc.py --model FILE --train FILE... --dev FILE... [--epochs N] [--pairs-per-question K]
"""
import argparse
import json
import pathlib
import random
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from abstain import auc  # noqa: E402
from use_lite import MAX_TOKENS, UseLite  # noqa: E402

SEP = 2  # </s>: between the question's tokens and the message's


def text_of(m):
    return f"{m['from']}: {m['text']}"


def embed_all(model, texts, batch=64):
    out = []
    with torch.no_grad():
        for i in range(0, len(texts), batch):
            out.append(model([model.tokenize(t) for t in texts[i:i + batch]]))
    return torch.cat(out) if out else torch.zeros(0, 512)


def candidates(model, conv, k):
    """Each question's k closest messages by the pretrained encoder: [(question, [message])]."""
    msgs = conv["messages"]
    mv = embed_all(model, [text_of(m) for m in msgs])
    qv = embed_all(model, [q["question"] for q in conv["questions"]])
    top = (qv @ mv.T).topk(min(k, len(msgs)), dim=1).indices.tolist()
    return [(q, [msgs[i] for i in row]) for q, row in zip(conv["questions"], top)]


class Reader(torch.nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.out = torch.nn.Linear(512, 1)

    def forward(self, pairs):
        """Logits of (question tokens, message tokens) pairs."""
        lists = [(q[:40] + [SEP] + m)[:MAX_TOKENS] for q, m in pairs]
        ids, mask = self.encoder.batch(lists)
        x = self.encoder.hidden(ids, mask)
        w = mask[..., None].float()
        pooled = (x * w).sum(1) / w.sum(1).clamp(min=1.0)
        y = torch.tanh(pooled @ self.encoder.tanh_w + self.encoder.tanh_b)
        return self.out(y).squeeze(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--pairs-per-question", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-5)
    a = ap.parse_args()
    torch.manual_seed(7)
    random.seed(7)
    torch.set_num_threads(2)
    encoder = UseLite(a.model)
    t0 = time.time()
    tok = encoder.tokenize
    pairs = []
    for f in a.train:
        conv = json.load(open(f))
        by_id = {m["id"]: m for m in conv["messages"]}
        for q, near in candidates(encoder, conv, 10):
            qt = tok(q["question"])
            evidence = set(q["answers"])
            for mid in q["answers"]:
                pairs.append((qt, tok(text_of(by_id[mid])), 1.0))
            others = [m for m in near if m["id"] not in evidence][:a.pairs_per_question]
            pairs += [(qt, tok(text_of(m)), 0.0) for m in others]
    dev = []
    for f in a.dev:
        conv = json.load(open(f))
        for q, near in candidates(encoder, conv, 10):
            answered = bool(set(q["answers"]) & {m["id"] for m in near})
            dev.append((q["kind"] == "none", answered, tok(q["question"]), [tok(text_of(m)) for m in near]))
    print(f"{len(pairs)} training pairs ({sum(p[2] for p in pairs):.0f} answer), {len(dev)} development questions; "
          f"candidates in {time.time() - t0:.0f} s", flush=True)
    reader = Reader(encoder)
    opt = torch.optim.Adam([{"params": encoder.parameters(), "lr": a.lr},
                            {"params": reader.out.parameters(), "lr": 1e-3}])
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def judge(label):
        reader.eval()
        none, answered = [], []
        with torch.no_grad():
            for is_none, ok, qt, near in dev:
                best = float(torch.sigmoid(reader([(qt, m) for m in near])).max())
                if is_none:
                    none.append(1 - best)
                elif ok:
                    answered.append(1 - best)
        answered.sort()
        floor = answered[int(len(answered) * 0.98)] if answered else 1.0  # 2 % of the answered above it
        share = sum(v > floor for v in none) / max(1, len(none))
        print(f"{label}: abstains on {share:.3f} of {len(none)} with no answer at 2 % of {len(answered)} answered "
              f"lost; AUC {auc(none, answered):.3f}", flush=True)
        reader.train()

    judge("before training (the new unit untrained)")
    for epoch in range(a.epochs):
        random.shuffle(pairs)
        t1, total = time.time(), 0.0
        for i in range(0, len(pairs), 32):
            chunk = pairs[i:i + 32]
            logits = reader([(q, m) for q, m, _ in chunk])
            loss = loss_fn(logits, torch.tensor([y for _, _, y in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(chunk)
            if (i // 32) % 100 == 0:
                print(f"  epoch {epoch + 1} batch {i // 32}: loss {float(loss):.3f} ({time.time() - t1:.0f} s)", flush=True)
        print(f"epoch {epoch + 1}: mean loss {total / len(pairs):.4f} in {time.time() - t1:.0f} s", flush=True)
        judge(f"after epoch {epoch + 1}")


if __name__ == "__main__":
    main()
