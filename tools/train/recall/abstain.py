#!/usr/bin/python3
"""Can recall tell a question the conversation never answers from one it does? A reader of the
question against the first ten results, learned on the training conversations and measured on
the development ones (docs/recall.md, "No answer").

The results are those of levers.py's simulation of recall's fusion (BM25 over the messages with
the words of the two before a reply, the query head's vectors, fused by reciprocal rank). For each
question the reader builds features of the question against its ten results: how close the
vectors are, how much of the question's words and meaning the results cover (word vectors align
each question word with its closest word in a result), the kind of answer the question asks for
(a time, an amount, a count, a name) and whether the results that cover the question hold one.
A gradient-boosted classifier (scikit-learn, fixed seed) learns "no answer" from them. It is
judged as recall would use it: the floor is set so that at most 2 % of the answered questions
(evidence among the ten) abstain, or so that the answerable questions' recall@10 is 0.02 lower,
and the share of questions with no answer that abstain at that floor is reported, with the area
under the curve, for growing numbers of training conversations.

usage: abstain.py --tool BIN --model ENCODER --head HEAD --glove WORDS.json
                  --train FILE... --dev FILE... [--more-none DIR...] [--heldout FILE... [--heldout-only]]
                  [--no-curve]
(tools/dev.sh train installs scikit-learn; the figures and the command line: docs/recall.md.)
"""
import collections
import json
import os
import pathlib
import re
import sys
import tempfile

import numpy as np

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here))
import levers  # noqa: E402  (its BM25, query head and fusion)

bm25 = levers.bm25

MONTHS = set("january february march april may june july august september october november december "
             "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
             "saturday sunday weekend tomorrow yesterday tonight week month year morning evening".split())
NUMBER_WORDS = set("one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty "
                   "forty fifty hundred thousand half dozen couple few".split())
KINDS = ["when", "how_much", "how_many", "how_old", "how_long", "where", "who", "which", "name", "what",
         "why", "how", "yes_no", "other"]


def asks(question):
    """The kind of answer a question asks for, from its first words."""
    q = question.lower()
    if re.search(r"\b(surname|last name|first name|called|name of|named|'s name|whats the name)\b", q):
        return "name"
    for pattern, kind in ((r"^\W*(when|what (date|day|time|month|year))\b", "when"),
                          (r"\bhow much\b|\bcost\b|\bprice\b|\bpaid?\b", "how_much"),
                          (r"\bhow many\b", "how_many"), (r"\bhow old\b|\bage\b", "how_old"),
                          (r"\bhow long\b", "how_long"), (r"^\W*where\b", "where"), (r"^\W*who\b", "who"),
                          (r"^\W*which\b", "which"), (r"^\W*what\b", "what"), (r"^\W*why\b", "why"),
                          (r"^\W*how\b", "how"),
                          (r"^\W*(did|does|do|is|was|were|has|have|had|will|would|could|can)\b", "yes_no")):
        if re.search(pattern, q):
            return kind
    return "other"


def holds(kind, text, question_words):
    """Whether a text holds something of the kind asked: a date or time word, a number, an amount,
    a capitalised word the question does not name."""
    words = re.findall(r"[A-Za-z0-9£$€¥%']+", text)
    lower = [w.lower() for w in words]
    number = any(re.search(r"\d", w) for w in words) or any(w in NUMBER_WORDS for w in lower)
    if kind == "when":
        return any(w in MONTHS for w in lower) or bool(re.search(r"\d", text))
    if kind in ("how_much",):
        return bool(re.search(r"[£$€¥]|\d", text)) or any(w in ("free", "grand", "quid", "bucks") for w in lower)
    if kind in ("how_many", "how_old", "how_long"):
        return number
    if kind in ("name", "who", "where", "which"):
        return any(w[:1].isupper() and w.lower() not in question_words and i > 0 for i, w in enumerate(words))
    return True


class Glove:
    def __init__(self, path, n=80000):
        g = json.load(open(path))
        top = g["words"][:n]
        v = np.array([g["vectors"][w][:100] for w in top], dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True) + 1e-9
        self.index = {w: i for i, w in enumerate(top)}
        self.vectors = v

    def of(self, words):
        known = [w for w in words if w in self.index]
        return known, (self.vectors[[self.index[w] for w in known]] if known else np.zeros((0, 100), np.float32))


def plain(text):
    return [w for w in re.findall(r"[a-z]+", text.lower().replace("'", "")) if w not in bm25.STOP and len(w) > 2]


def retrieve(convs, vec, head):
    """Per conversation and question: the ten results of the simulated recall, best first, with the
    mapped cosines of every message to the question."""
    out = []
    for c in convs:
        ms, cid = c["messages"], c["id"]
        ids, raw, m_vec, _, index = levers.messages(c, vec, {})
        for q in c["questions"]:
            qv = vec[(cid, q["id"])].astype(np.float64)
            cos = m_vec @ head(qv)
            by_meaning = list(np.argsort(-cos)[:100])
            by_words = index.top(q["question"], 100)
            score = levers.fuse([(1.0, by_words), (1.5, by_meaning)], 15)
            top = sorted(score, key=lambda i: -score[i])[:10]
            answers = {ids.index(a) for a in q["answers"]}
            out.append({"conversation": cid, "question": q, "top": top, "cos": cos, "raw_cos": raw @ (qv / np.linalg.norm(qv)),
                        "answered": bool(answers & set(top)), "none": not q["answers"], "index": index,
                        "messages": ms, "df": index.df, "n": len(ms)})
    return out


HEAD_SKIP = set("is was are were did does do the a an of kind sort type exactly".split())


def head_noun(question):
    """The noun a what / which question asks for ("What colour is…" → colour), else None."""
    m = re.match(r"\W*(?:what|which)\s+(.*)", question.lower())
    if not m:
        return None
    for w in re.findall(r"[a-z]+", m.group(1)):
        if w in HEAD_SKIP:
            continue
        return None if w in bm25.STOP else w
    return None


def focus(question, speakers):
    """The names a question asks about: capitalised words past its first, not the speakers."""
    words = re.findall(r"[A-Za-zÀ-ÿĄ-ž]+", question)
    return {w.lower() for i, w in enumerate(words) if i > 0 and w[:1].isupper() and w.lower() not in speakers}


def around(item, want, also=None):
    """Messages that hold one of the words wanted (and, given `also`, one of those too), with the
    message before and after each."""
    ms = item["messages"]
    hits = set()
    for j, m in enumerate(ms):
        low = {bm25.stem(w) for w in re.findall(r"[a-zà-ÿą-ž0-9]+", m["text"].lower())}
        if want & low and (also is None or also & low):
            hits.update((j - 1, j, j + 1))
    return [ms[j]["text"] for j in sorted(hits) if 0 <= j < len(ms)]


def category(glove, head, texts, asked):
    """How near the closest word of the texts (not in the question) comes to the asked noun."""
    if head is None or head not in glove.index:
        return -1.0
    hv = glove.vectors[glove.index[head]]
    best = 0.0
    for t in texts:
        known, pv = glove.of([w for w in plain(t) if w not in asked])
        if len(known):
            best = max(best, float((pv @ hv).max()))
    return best


def features(item, glove):
    q = item["question"]["question"]
    ms, top, cos = item["messages"], item["top"], item["cos"]
    speakers = {m["from"].lower() for m in ms}
    qwords = [w for w in plain(q) if w not in speakers]
    kind = asks(q)
    df, n = item["df"], item["n"]
    idf = {w: np.log(1 + (n - df.get(bm25.stem(w), 0) + 0.5) / (df.get(bm25.stem(w), 0) + 0.5)) for w in qwords}
    conv_words = set(item["df"])
    absent = [w for w in qwords if bm25.stem(w) not in conv_words]
    texts = [ms[i]["text"] + (" " + ms[i - 1]["text"] if i > 0 else "") for i in top]
    known, qv = glove.of(qwords)
    cover_best, cover_exact_best, type_hit, type_hit_cover = 0.0, 0.0, 0.0, 0.0
    per_word_best = np.zeros(len(known))
    rare = max(qwords, key=lambda w: idf[w]) if qwords else None
    rare_found = 0.0
    for t in texts:
        pw = plain(t)
        stems = {bm25.stem(w) for w in pw}
        exact = [bm25.stem(w) in stems for w in qwords]
        exact_share = float(np.mean(exact)) if exact else 0.0
        if rare is not None and bm25.stem(rare) in stems:
            rare_found = 1.0
        _, pv = glove.of(pw)
        if len(known) and len(pv):
            sim = (qv @ pv.T).max(axis=1)
            for k, w in enumerate(known):
                if bm25.stem(w) in stems:
                    sim[k] = 1.0
            per_word_best = np.maximum(per_word_best, sim)
            soft = float(sim.mean())
        else:
            soft = exact_share
        h = float(holds(kind, t, set(w.lower() for w in re.findall(r"[A-Za-z]+", q))))
        type_hit = max(type_hit, h)
        weighted = sum(idf[w] for w, e in zip(qwords, exact) if e) / max(1e-9, sum(idf.values()))
        if weighted >= 0.5:
            type_hit_cover = max(type_hit_cover, h)
        cover_best = max(cover_best, soft)
        cover_exact_best = max(cover_exact_best, weighted)
    top_cos = np.sort(cos[top])[::-1]
    all_sorted = np.sort(cos)[::-1]
    f = [top_cos[0], top_cos[1], top_cos[:10].mean(), all_sorted[0] - all_sorted[min(20, len(all_sorted) - 1)],
         float(np.max(item["raw_cos"])), len(qwords), len(absent) / max(1, len(qwords)),
         max((idf[w] for w in absent), default=0.0), cover_best, cover_exact_best,
         float(per_word_best.min()) if len(per_word_best) else 1.0,
         float(per_word_best.mean()) if len(per_word_best) else 1.0, type_hit, type_hit_cover, rare_found,
         idf[rare] if rare else 0.0]
    names = {bm25.stem(w) for w in focus(q, speakers)}
    want = names or ({bm25.stem(rare)} if rare else set())
    rest = {w for w in (bm25.stem(x) for x in qwords) if w not in want}
    near = around(item, want) if want else []
    both = around(item, want, rest) if want and rest else []
    asked = set(plain(q))
    head = head_noun(q)
    for texts_ in (near, both):
        f += [len(texts_), float(any(holds(kind, t, asked) for t in texts_)) if texts_ else -1.0,
              category(glove, head, texts_, asked)]
    f += [len(names), category(glove, head, texts, asked)]
    f += [float(kind == k) for k in KINDS]
    return f


def floor_at(p_none, items, share=0.02):
    """The floor above which `share` of the answered questions (evidence among the ten) abstain."""
    return float(np.quantile([p for p, it in zip(p_none, items) if it["answered"]], 1 - min(1.0, share)))


def judge(p_none, items):
    """The share of no-answer questions that abstain when at most 2 % of the answered ones do, and
    the area under the curve of no-answer against answered."""
    answered = np.array([p for p, it in zip(p_none, items) if it["answered"]])
    none = np.array([p for p, it in zip(p_none, items) if it["none"]])
    floor = floor_at(p_none, items)
    return float((none > floor).mean()), auc(none, answered), len(none), len(answered)


def auc(none, answered):
    """The area under the curve: P(a question with no answer scores above an answered one), ties half."""
    none, answered = np.asarray(none, dtype=float), np.asarray(answered, dtype=float)
    if not len(none) or not len(answered):
        return float("nan")
    return float((none[:, None] > answered[None, :]).mean() + 0.5 * (none[:, None] == answered[None, :]).mean())


def floor_for(p_none, items, lost=0.02):
    """The floor at which the answerable questions' recall@10 drops by `lost` (absolute): the
    answered ones (evidence among the ten) abstain on lost × answerable / answered of them."""
    answered = sum(1 for it in items if it["answered"])
    answerable = sum(1 for it in items if not it["none"])
    return floor_at(p_none, items, lost * answerable / answered)


def abstained(p_none, items, floor):
    """The share of no-answer questions that abstain at a floor, and the recall@10 the answerable
    ones lose (absolute)."""
    none = np.mean([p > floor for p, it in zip(p_none, items) if it["none"]])
    answerable = sum(1 for it in items if not it["none"])
    lost = sum(1 for p, it in zip(p_none, items) if it["answered"] and p > floor) / answerable
    return float(none), float(lost)


def report(what, p, items):
    """Prints what the no-answer probabilities p give: the share abstained at 2 % of the answered
    questions lost and at recall@10 0.02 lower, and the area under the curve."""
    pn, area, nn, na = judge(p, items)
    pr, _ = abstained(p, items, floor_for(p, items))
    print(f"{what}: abstains on {pn:.3f} of {nn} with no answer at 2 % of {na} answered lost, on {pr:.3f} at "
          f"recall@10 0.02 lower; AUC {area:.3f}")
    sys.stdout.flush()


def prepare(a):
    """The training conversations (with the questions written apart when --more-none names
    them, and the set of their ids), the development ones, the encoder's vectors of every
    message and question (also of --heldout), the word vectors and the query head."""
    work = tempfile.mkdtemp(prefix="engram-abstain-")
    train_convs = [json.load(open(f)) for f in a.train]
    extra = set()
    for f, c in zip(a.train, train_convs):
        for folder in a.more_none:
            more = pathlib.Path(folder) / pathlib.Path(f).name
            if more.exists():
                added = json.load(open(more))["questions"]
                extra.update(q["id"] for q in added)
                c["questions"] = c["questions"] + added
    merged = []
    for c in train_convs:
        merged.append(os.path.join(work, c["id"] + ".json"))
        json.dump(c, open(merged[-1], "w"))
    dev_convs = [json.load(open(f)) for f in a.dev]
    rows, vectors = levers.trainer.embed(a.tool, a.model, merged + a.dev + getattr(a, "heldout", []),
                                         os.path.join(work, "vectors"))
    vec = {(r["conversation"], r["id"]): vectors[i] for i, r in enumerate(rows)}
    return train_convs, extra, dev_convs, vec, Glove(a.glove), levers.load_head(a.head)


def gbm(x, y):
    from sklearn.ensemble import GradientBoostingClassifier
    return GradientBoostingClassifier(n_estimators=200, max_depth=3, learning_rate=0.05, subsample=0.8,
                                      random_state=7).fit(x, y)


def main():
    ap = levers.arguments()
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--heldout", nargs="*", default=[], help="measured only, at floors set on the development and training conversations")
    ap.add_argument("--heldout-only", action="store_true", help="measure the held-out conversations and stop")
    ap.add_argument("--more-none", nargs="*", default=[],
                    help="folders of questions written apart for the training conversations (DIR/<file name>: "
                    "none/, with no answer; restyled/, of both kinds in other styles), used to learn only, never judged")
    ap.add_argument("--no-curve", action="store_true",
                    help="after the held-out conversations, report the development set only (no curve over conversations)")
    a = ap.parse_args()
    train_convs, extra, dev_convs, vec, glove, head = prepare(a)
    dev = retrieve(dev_convs, vec, head)
    dev_x = np.array([features(it, glove) for it in dev])
    by_conv = collections.OrderedDict()
    for it in retrieve(train_convs, vec, head):
        it["extra"] = it["question"]["id"] in extra
        by_conv.setdefault(it["conversation"], []).append(it)
    train_x = {c: np.array([features(it, glove) for it in items]) for c, items in by_conv.items()}
    report("the best cosine alone (recall.answer_floor)", -dev_x[:, 0], dev)
    names = list(by_conv)
    kinds = len(KINDS)
    columns = {"every feature": slice(None), "without the kind of question": slice(0, dev_x.shape[1] - kinds),
               "the kind of question alone": slice(dev_x.shape[1] - kinds, None)}

    def fit(chosen, cols, with_extra):
        rows_ = [(x, it) for c in chosen for x, it in zip(train_x[c], by_conv[c]) if with_extra or not it["extra"]]
        x = np.array([r[0] for r in rows_])[:, cols]
        y = np.array([r[1]["none"] for r in rows_], dtype=int)
        return gbm(x, y), int(y.sum())

    judged = {}

    def by_others(count, label, with_extra):
        """Every training conversation's own questions judged by a model of `count` others (the
        development ones left out of all fits): the probabilities and their questions. Kept, as
        the held-out floors and the curve ask for the same ones."""
        key = (count, label, with_extra)
        if key not in judged:
            judged[key] = fit_others(count, columns[label], with_extra)
        return judged[key]

    def fit_others(count, cols, with_extra):
        p, items = [], []
        for k, c in enumerate(names):
            others = [names[(k + 1 + j) % len(names)] for j in range(count)]
            model, _ = fit(others, cols, with_extra)
            p += list(model.predict_proba(train_x[c][:, cols])[:, 1])
            items += by_conv[c]
        keep = [i for i, it in enumerate(items) if not it["extra"]]
        return np.array(p)[keep], [items[i] for i in keep]

    if a.heldout:
        # Learned on the training conversations, then applied to the held-out conversations at
        # floors set before: on the development conversations (at most 2 % of their answered
        # questions abstain, or their recall@10 0.02 lower), and on the training conversations
        # each judged by a model of all the others (thousands of answered questions where the
        # development set has a few hundred).
        held = retrieve([json.load(open(f)) for f in a.heldout], vec, head)
        held_x = np.array([features(it, glove) for it in held])
        for label, cols in columns.items():
            model, _ = fit(names, cols, True)
            p = model.predict_proba(held_x[:, cols])[:, 1]
            _, area, nn, na = judge(p, held)
            p_dev = model.predict_proba(dev_x[:, cols])[:, 1]
            p_cv, items_cv = by_others(len(names) - 1, label, True)
            for where, p_floor, items_floor in (("development", p_dev, dev), ("training, by the others", p_cv, items_cv)):
                floor = floor_at(p_floor, items_floor)
                none = np.mean([v > floor for v, it in zip(p, held) if it["none"]])
                lost = np.mean([v > floor for v, it in zip(p, held) if it["answered"]])
                none_r, lost_r = abstained(p, held, floor_for(p_floor, items_floor))
                print(f"held-out, {label}, floors of the {where} set: abstains on {none:.3f} of {nn} with no answer, "
                      f"{lost:.3f} of {na} answered lost; at the floor for recall@10 0.02 lower, abstains on "
                      f"{none_r:.3f} and recall@10 is {lost_r:.3f} lower; AUC {area:.3f}")
                sys.stdout.flush()
        if a.heldout_only:
            return
    for with_extra in ((False, True) if extra else (False,)):
        more = " + the questions written apart" if with_extra else ""
        for label, cols in columns.items():
            model, none = fit(names, cols, with_extra)
            report(f"development ({len(names)} training conversations{more}, {none} with no answer), {label}",
                   model.predict_proba(dev_x[:, cols])[:, 1], dev)
        for count in [] if a.no_curve else sorted({c for c in (2, 5, 11, 21, len(names) - 1) if c < len(names)}):
            for label, cols in columns.items():
                if label != "every feature" and count != len(names) - 1:
                    continue
                report(f"each training conversation by a model of {count:2d} others{more}, {label}",
                       *by_others(count, label, with_extra))

if __name__ == "__main__":
    main()
