#!/usr/bin/python3
"""Inter-annotator agreement on items labelled twice: typed exact-span precision, recall and F1 of
one writer's marks against another's (F1 is symmetric), and Cohen's kappa over tokens split at
whitespace. It bounds what a model trained on either can reach.

usage: agreement.py FIRST_FILES... -- SECOND_FILES...   (items matched by id)
"""
import json
import re
import sys

MARK = re.compile(r"\[\[(PER|ORG|PROD|LOC|ID):([^\[\]]+?)\]\]")


def spans(text):
    plain, out, pos = "", set(), 0
    for m in MARK.finditer(text):
        plain += text[pos:m.start()]
        out.add((len(plain), len(plain) + len(m.group(2)), m.group(1)))
        plain += m.group(2)
        pos = m.end()
    return plain + text[pos:], out


def load(files):
    items = {}
    for f in files:
        for line in open(f, encoding="utf-8"):
            if line.strip():
                it = json.loads(line)
                items[it["id"]] = spans(it["text"])
    return items


def token_labels(plain, marks):
    labels = []
    for m in re.finditer(r"\S+", plain):
        t = next((ty for b, e, ty in marks if b <= m.start() < e), "O")
        labels.append(t)
    return labels


def main():
    cut = sys.argv.index("--")
    first, second = load(sys.argv[1:cut]), load(sys.argv[cut + 1:])
    shared = [i for i in first if i in second]
    tp = fp = fn = 0
    by_type = {}
    pairs = []
    for i in shared:
        (pa, a), (pb, b) = first[i], second[i]
        if pa != pb:
            print(f"{i}: the texts differ", file=sys.stderr)
            continue
        tp += len(a & b)
        fn += len(a - b)
        fp += len(b - a)
        for s in a | b:
            c = by_type.setdefault(s[2], [0, 0])
            c[0] += s in a and s in b
            c[1] += 1
        pairs += zip(token_labels(pa, a), token_labels(pb, b))
    p, r = tp / (tp + fp), tp / (tp + fn)
    agree = sum(x == y for x, y in pairs) / len(pairs)
    labels = {x for pair in pairs for x in pair}
    chance = sum((sum(x == l for x, _ in pairs) / len(pairs)) * (sum(y == l for _, y in pairs) / len(pairs))
                 for l in labels)
    kappa = (agree - chance) / (1 - chance)
    print(f"{len(shared)} items twice: typed exact spans, second against first: P {p:.3f} R {r:.3f} "
          f"F1 {2 * p * r / (p + r):.3f}; token kappa {kappa:.3f}")
    for t, (same, n) in sorted(by_type.items()):
        print(f"  {t:5s} {same}/{n} marks the same ({same / n:.2f})")


if __name__ == "__main__":
    main()
