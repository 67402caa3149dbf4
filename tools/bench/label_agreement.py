#!/usr/bin/env python3
"""How far two labellings of one extraction set agree, scored as `engram_bench extraction`
scores a reader: the first labelling is the gold, the second's entries are what was "read".

  tools/bench/label_agreement.py tests/data/extraction/heldout2.jsonl tests/data/extraction/second/heldout2.jsonl

Texts are compared as the bench compares them (lower-case, letters and digits, single spaces;
one contains the other), each labelled statement matched greedily to the first unused one of
the same type, else of any type. Prints typed recall and precision and due dates (a matched
statement's dueAt equal), and the confusion of types. The second labellings were written by
helper sessions given the messages without their labels and the seven definitions.
"""
import collections
import json
import sys


def norm(text):
    out, space = [], False
    for c in text.encode("utf-8"):
        if (c < 128 and chr(c).isalnum()) or c >= 0x80:
            if space and out:
                out.append(32)
            space = False
            out.append(ord(chr(c).lower()) if c < 128 else c)
        else:
            space = True
    return bytes(out).decode("utf-8", "replace")


def overlaps(a, b):
    return bool(a) and bool(b) and (a in b or b in a)


def main(gold_path, second_path):
    second = {}
    for line in open(second_path, encoding="utf-8"):
        r = json.loads(line)
        second[r["eventId"]] = r["labels"]["entries"]
    gold_n = read_n = typed = due = due_right = 0
    confusion = collections.Counter()
    for line in open(gold_path, encoding="utf-8"):
        g = json.loads(line)
        read = second.get(g["eventId"], [])
        read_norm = [norm(e["text"]) for e in read]
        used = [False] * len(read)
        read_n += len(read)
        for e in g["labels"]["entries"]:
            gold_n += 1
            gn = norm(e["text"])
            match = None
            for same_type in (True, False):
                for i, r in enumerate(read):
                    if not used[i] and overlaps(gn, read_norm[i]) and (not same_type or r["type"] == e["type"]):
                        match = i
                        break
                if match is not None:
                    break
            due += bool(e.get("dueAt"))
            if match is None:
                confusion[(e["type"], "not found")] += 1
                continue
            used[match] = True
            due_right += bool(e.get("dueAt")) and read[match].get("dueAt") == e["dueAt"]
            typed += read[match]["type"] == e["type"]
            confusion[(e["type"], read[match]["type"])] += 1
    print(f"{gold_path}: {gold_n} labelled, {read_n} in the second labelling; typed recall "
          f"{typed / gold_n:.3f}, precision {typed / max(read_n, 1):.3f}; due dates {due_right} of {due}")
    for (a, b), n in sorted(confusion.items(), key=lambda kv: -kv[1]):
        if a != b:
            print(f"  {a} -> {b}: {n}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
