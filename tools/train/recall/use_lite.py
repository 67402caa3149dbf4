#!/usr/bin/python3
"""The sentence encoder (Universal Sentence Encoder Lite) in PyTorch, from the converted model
file engramd reads (`.cache/models/use-lite-en.bin`), so that its weights can be trained here:
a query-side encoder or a reader of a question against a passage that starts from what the
encoder already knows, rather than from nothing.

The computation and the file are those of embedding/use_lite.cpp and use_lite_model.cpp:

  tokens  NFKC, ' ' -> U+2581 with one U+2581 in front, unigram Viterbi over the 8,000 pieces
          (ids 0..5 never matched; an unknown character is id 0, a run of them one 0); at most
          128 tokens are read.
  x0      2 * E[id] + [sin(t * inv) | cos(t * inv)]                                  [T, 256]
  layer   pre-norm: h = MHA(LN1(x)) + R(x); out = FFN(LN2(h)) + h, FFN = relu(.W1 + b1).W2 + b2;
          layer 0: 256 -> 512 (4 heads of 64, R dense 256 -> 512); layer 1: 512 (4 heads of 128,
          R the identity). No final layer norm.
  output  l2norm(tanh(mean_t(out) . Wt + bt))                                        [512]

usage: use_lite.py --model FILE --check tests/data/embedder/reference.jsonl
  compares the tokens and the vectors with the reference fixture (the original JavaScript's);
  exits 1 when a token differs or a vector is further than 1e-5 from its reference.
"""
import argparse
import json
import struct
import sys
import unicodedata

import torch

MAX_TOKENS = 128
HEADS = 4
MAX_PIECE = 16


class Tokenizer:
    """SentencePiece unigram, as use_lite_model.cpp's tokenize()."""

    def __init__(self, pieces):
        self.piece = {}  # text -> (score, id); a later duplicate wins
        for i, (score, text) in enumerate(pieces):
            if i >= 6 and text:
                self.piece[text] = (score, i)

    def __call__(self, text):
        return [t[0] for t in self.spans(text)]

    def spans(self, text):
        """(id, start, end) of each token, start and end indexing NFKC(text); a token that
        begins with the word mark starts at the space before its word (at -1 for the first)."""
        norm = unicodedata.normalize("NFKC", text)
        if not norm:
            return []
        c = "\u2581" + norm.replace(" ", "\u2581")
        n = len(c)
        best = [0.0] * (n + 1)
        ids = [0] * (n + 1)
        length = [0] * (n + 1)
        for e in range(1, n + 1):
            for st in range(max(0, e - MAX_PIECE), e):
                hit = self.piece.get(c[st:e])
                if hit is not None:
                    score, pid = hit
                elif e == st + 1:
                    score, pid = 0.0, 0
                else:
                    continue
                total = score + best[st]
                if best[e] == 0.0 or total >= best[e]:
                    best[e], ids[e], length[e] = total, pid, e - st
        out = []
        e = n
        while e > 0:
            out.append((ids[e], e - length[e] - 1, e - 1))
            e -= length[e]
        out.reverse()
        merged = []  # a run of unknown characters is one token
        for t in out:
            if t[0] == 0 and merged and merged[-1][0] == 0:
                merged[-1] = (0, merged[-1][1], t[2])
            else:
                merged.append(t)
        return merged


def read_model(path):
    """(vocabulary pieces [(score, text)], tensors {name: float32 tensor}) of the model file."""
    blob = open(path, "rb").read()
    if blob[:8] != b"EGUSE001":
        raise ValueError(f"{path}: not a converted USE Lite model (bad magic)")
    at = 8
    (count,) = struct.unpack_from("<I", blob, at)
    at += 4
    pieces = []
    for _ in range(count):
        score, n = struct.unpack_from("<dI", blob, at)
        at += 12
        pieces.append((score, blob[at:at + n].decode("utf-8")))
        at += n
    (tensors,) = struct.unpack_from("<I", blob, at)
    at += 4
    table = {}
    for _ in range(tensors):
        (n,) = struct.unpack_from("<I", blob, at)
        at += 4
        name = blob[at:at + n].decode()
        at += n
        (elements,) = struct.unpack_from("<I", blob, at)
        at += 4
        table[name] = torch.frombuffer(bytearray(blob[at:at + 4 * elements]), dtype=torch.float32)
        at += 4 * elements
    return pieces, table


class Layer(torch.nn.Module):
    def __init__(self, t, prefix, width):
        super().__init__()
        p = lambda name: torch.nn.Parameter(t[prefix + name].clone())  # noqa: E731
        self.width = width
        self.ln1_scale, self.ln1_bias = p("ln1_scale"), p("ln1_bias")
        self.qkv_w = torch.nn.Parameter(t[prefix + "qkv_w"].clone().view(width, 3 * width))
        self.qkv_b = p("qkv_b")
        self.out_w = torch.nn.Parameter(t[prefix + "out_w"].clone().view(width, 512))
        self.out_b = p("out_b")
        self.res_w = torch.nn.Parameter(t[prefix + "res_w"].clone().view(256, 512)) if prefix + "res_w" in t else None
        self.res_b = p("res_b") if prefix + "res_b" in t else None
        self.ln2_scale, self.ln2_bias = p("ln2_scale"), p("ln2_bias")
        self.ffn1_w = torch.nn.Parameter(t[prefix + "ffn1_w"].clone().view(512, 1536))
        self.ffn1_b = p("ffn1_b")
        self.ffn2_w = torch.nn.Parameter(t[prefix + "ffn2_w"].clone().view(1536, 512))
        self.ffn2_b = p("ffn2_b")
        self.q_scale = float(t[prefix + "q_scale"][0])

    def forward(self, x, mask, eps):
        """x [B, T, in], mask [B, T] (True: a token)."""
        n = layer_norm(x, self.ln1_scale, self.ln1_bias, eps)
        qkv = n @ self.qkv_w + self.qkv_b
        b, t, _ = x.shape
        dh = self.width // HEADS
        q, k, v = (qkv[..., i * self.width:(i + 1) * self.width].view(b, t, HEADS, dh).transpose(1, 2)
                   for i in range(3))
        w = (q * self.q_scale) @ k.transpose(-1, -2)  # [B, H, T, T]
        w = w.masked_fill(~mask[:, None, None, :], float("-inf")).softmax(-1)
        o = (w @ v).transpose(1, 2).reshape(b, t, self.width)
        attn = o @ self.out_w + self.out_b
        h = attn + (x @ self.res_w + self.res_b if self.res_w is not None else x)
        f = torch.relu(layer_norm(h, self.ln2_scale, self.ln2_bias, eps) @ self.ffn1_w + self.ffn1_b)
        return f @ self.ffn2_w + self.ffn2_b + h


def layer_norm(x, scale, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (scale * torch.rsqrt(var + eps)) * (x - mean) + bias


class UseLite(torch.nn.Module):
    """The encoder with every weight a parameter (trainable)."""

    def __init__(self, path):
        super().__init__()
        pieces, t = read_model(path)
        self.tokenize = Tokenizer(pieces)
        self.embeddings = torch.nn.Parameter(t["embeddings"].clone().view(8002, 256))
        self.register_buffer("timing_inv", t["timing_inv"].clone())
        self.tanh_w = torch.nn.Parameter(t["tanh_w"].clone().view(512, 512))
        self.tanh_b = torch.nn.Parameter(t["tanh_b"].clone())
        self.ln_eps = float(t["ln_eps"][0])
        self.l2_eps = float(t["l2_eps"][0])
        self.layers = torch.nn.ModuleList([Layer(t, "l0.", 256), Layer(t, "l1.", 512)])

    def batch(self, token_lists):
        """Token ids [B, T] (0 below each list's end) and the mask of real tokens."""
        lists = [ids[:MAX_TOKENS] for ids in token_lists]
        t = max(1, max(len(ids) for ids in lists))
        ids = torch.zeros(len(lists), t, dtype=torch.long)
        mask = torch.zeros(len(lists), t, dtype=torch.bool)
        for i, toks in enumerate(lists):
            ids[i, :len(toks)] = torch.tensor(toks, dtype=torch.long)
            mask[i, :len(toks)] = True
        return ids, mask

    def hidden(self, ids, mask):
        """The last layer's rows [B, T, 512]."""
        t = torch.arange(ids.shape[1], dtype=torch.float32)[:, None] * self.timing_inv[None, :]
        e = self.embeddings[ids]
        x = e + (e + torch.cat([t.sin(), t.cos()], -1)[None])
        for layer in self.layers:
            x = layer(x, mask, self.ln_eps)
        return x

    def forward(self, token_lists):
        """The sentence vectors [B, 512] (unit length), as engramd's float encoder gives them."""
        ids, mask = self.batch(token_lists)
        x = self.hidden(ids, mask)
        m = mask[..., None].float()
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        y = torch.tanh(pooled @ self.tanh_w + self.tanh_b)
        return y * torch.rsqrt((y * y).sum(-1, keepdim=True).clamp(min=self.l2_eps))


def check(model, reference):
    """Tokens equal and vectors within 1e-5 of the reference fixture; the worst difference."""
    worst, bad = 0.0, 0
    rows = [json.loads(line) for line in open(reference)]
    with torch.no_grad():
        vectors = model([r["tokens"] for r in rows])
    for r, v in zip(rows, vectors):
        if model.tokenize(r["text"]) != r["tokens"]:
            bad += 1
            print(f"tokens differ: {r['text']!r}", file=sys.stderr)
        d = float((v - torch.tensor(r["vector"])).abs().max())
        worst = max(worst, d)
    print(f"{len(rows)} sentences: tokens differ for {bad}; largest difference of a vector component {worst:.2e}")
    return bad == 0 and worst <= 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--check", required=True, help="tests/data/embedder/reference.jsonl")
    a = ap.parse_args()
    torch.set_num_threads(1)
    sys.exit(0 if check(UseLite(a.model), a.check) else 1)


if __name__ == "__main__":
    main()
