#!/usr/bin/env python3
"""A learned last layer for `oomguard explain`: the study (round 11) and its weights.

A binarised multinomial naive Bayes over normalised tokens predicts the memory domain of a log
(gpu / host / none = not a memory problem) from its words. It would run only on logs the rule
layers leave without any finding, and give a low-confidence estimate there. The study found no net
gain (bench/results/explain_learned_layer_cv.txt), so oomguard does not ship it; the C++ prototype
that was measured is bench/results/explain_learned_layer_prototype.patch (it embeds the file `train`
writes).

  explain_learned_layer.py cv    [--rules CACHE.json] [--folds 10] [--out FILE]
      k-fold cross-validation on tests/data/explain/corpus_dev.jsonl, folds split by thread (source
      URL): rules alone against rules + the learned layer (top cause, domain, memory logs without a
      finding, not-memory logs given a memory finding), for several thresholds.
  explain_learned_layer.py train [--out data/explain_last_layer.json] [--threshold T]
      trains on every development row and writes the weights the C++ prototype embeds.

The rules' answers come from `build-explain/oomguard explain --json -` (one process per row; a
finding of the learned layer itself, whose summary starts with LEARNED_PREFIX, is dropped, so the
figures are those of the rules alone). Only the development corpus is read; the held-out part never.

Tokens (the prototype's src/explain/last_layer.cc does the same; on the 91 development logs without a
finding its answers equal this script's): ASCII letters are lower-cased and a maximal run of
letters is a token when it has 2 to 24 letters (digits, punctuation, paths' separators and hex are
dropped, so numbers, sizes and addresses are masked); every non-ASCII UTF-8 character is a token of
its own (CJK text has no spaces). A log counts each token once.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = os.path.join(ROOT, "tests/data/explain/corpus_dev.jsonl")
OOMGUARD = os.path.join(ROOT, "build-explain/oomguard")
LEARNED_PREFIX = "Estimated from the log's words"
CLASSES = ["gpu", "host", "none"]
MIN_THREADS = 3  # a token kept in the vocabulary appears in at least this many training threads
ALPHA = 0.5  # additive smoothing
# The layer speaks only on a log that reports trouble: one of these tokens, or a token that ends in one of
# FAILURE_SUFFIXES (RuntimeError, MemoryError, ...). A generic list written before the study, not tuned on it: the
# corpus holds only failure reports, so without it a healthy log that names memory ("epoch 3: memory usage is
# 12 GB") would get an estimate.
FAILURE_WORDS = sorted({
    "error", "errors", "fail", "fails", "failed", "failing", "failure", "exception", "traceback", "fatal", "panic",
    "abort", "aborted", "aborting", "crash", "crashed", "crashes", "crashing", "kill", "killed", "kills", "killing",
    "die", "dies", "died", "dying", "dead", "terminate", "terminated", "segfault", "segmentation", "unable", "cannot",
    "couldn", "insufficient", "exceed", "exceeded", "exceeds", "oom", "problem", "stuck", "hang", "hangs", "freeze",
    "freezes", "froze", "broken", "breaks",
    "错", "败", "崩", "溃", "爆", "死"})
FAILURE_SUFFIXES = ("error", "exception", "failure")
SPAN = {"host_pinned_oom": "host", "host_ram_oom": "host", "shm_exhausted": "host",
        "driver_mismatch": "none", "cuda_library_mismatch": "none", "not_memory": "none"}


def tokens(text):
    """The set of normalised tokens of a log (see the module comment)."""
    out = set()
    data = text.encode("utf-8", "replace")
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            if (0x41 <= b <= 0x5A) or (0x61 <= b <= 0x7A):
                j = i
                while j < n and data[j] < 0x80 and chr(data[j]).isalpha():
                    j += 1
                if 2 <= j - i <= 24:
                    out.add(data[i:j].decode().lower())
                i = j
            else:
                i += 1
            continue
        length = 2 if b >= 0xC0 and b < 0xE0 else 3 if b >= 0xE0 and b < 0xF0 else 4 if b >= 0xF0 else 1
        out.add(data[i:i + length].decode("utf-8", "replace"))
        i += length
    return out


def label_domain(row):
    return row["domain"] or "none"


def fold_of(row, folds):
    return int(hashlib.sha256(row["source"].encode()).hexdigest()[:8], 16) % folds


def train(rows):
    """Per-class log prior and per-token log likelihoods (binarised multinomial NB)."""
    return train_classes(rows, CLASSES)


def train_classes(rows, classes):
    threads = {}
    for r in rows:
        for t in tokens(r["excerpt"]):
            threads.setdefault(t, set()).add(r["source"])
    vocab = sorted(t for t, s in threads.items() if len(s) >= MIN_THREADS)
    index = {t: i for i, t in enumerate(vocab)}
    counts = {c: [0] * len(vocab) for c in classes}
    docs = {c: 0 for c in classes}
    for r in rows:
        c = label_domain(r)
        docs[c] += 1
        for t in tokens(r["excerpt"]):
            if t in index:
                counts[c][index[t]] += 1
    prior = {c: math.log(docs[c] / len(rows)) for c in classes}
    weights = {}
    for c in classes:
        total = sum(counts[c]) + ALPHA * len(vocab)
        weights[c] = [math.log((k + ALPHA) / total) for k in counts[c]]
    # An unseen token (outside the vocabulary) is skipped: it says nothing about any class.
    return {"vocab": vocab, "prior": prior, "weights": weights, "classes": classes}


def posterior(model, text):
    index = {t: i for i, t in enumerate(model["vocab"])} if "_index" not in model else model["_index"]
    model["_index"] = index
    score = dict(model["prior"])
    for t in tokens(text):
        i = index.get(t)
        if i is None:
            continue
        for c in model["classes"]:
            score[c] += model["weights"][c][i]
    top = max(score.values())
    z = sum(math.exp(v - top) for v in score.values())
    return {c: math.exp(score[c] - top) / z for c in model["classes"]}


def rules_answers(rows, cache):
    if cache and os.path.exists(cache):
        answers = json.load(open(cache))
        if [a["id"] for a in answers] == [r["id"] for r in rows]:
            return answers

    def run(row):
        p = subprocess.run([OOMGUARD, "explain", "--json", "-"], input=row["excerpt"].encode(), capture_output=True,
                           check=True)
        found = json.loads(p.stdout)["findings"]
        return [{k: f[k] for k in ("cause", "domain", "confidence")} for f in found
                if not f["summary"].startswith(LEARNED_PREFIX)]

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        found = list(pool.map(run, rows))
    answers = [{"id": r["id"], "findings": f} for r, f in zip(rows, found)]
    if cache:
        json.dump(answers, open(cache, "w"))
    return answers


def reports_trouble(text):
    return any(t in FAILURE_WORDS or t.endswith(FAILURE_SUFFIXES) for t in tokens(text))


def learned_finding(model, text, threshold, gate=True):
    """The finding the layer adds to a log without one: (cause, domain) or None."""
    if gate and not reports_trouble(text):
        return None
    p = posterior(model, text)
    if p["none"] >= threshold:
        return None
    domain = "gpu" if p["gpu"] >= p["host"] else "host"
    return ("gpu_device_oom" if domain == "gpu" else "host_ram_oom", domain)


def score(rows, findings):
    """The scorer's figures (src/explain/scoring.cc) plus not-memory rows given a memory finding."""
    s = {"logs": 0, "cause": 0, "domain": 0, "memory_logs": 0, "no_finding": 0, "not_memory_logs": 0,
         "fp_any": 0, "fp_top": 0}
    for r, f in zip(rows, findings):
        got_cause = f[0]["cause"] if f else "not_memory"
        got_domain = f[0]["domain"] if f else "none"
        ld = label_domain(r)
        spanned = {SPAN.get(a, "gpu") for a in r["accept"]}
        memory = any(x["domain"] != "none" for x in f)
        s["logs"] += 1
        s["cause"] += got_cause in r["accept"]
        s["domain"] += got_domain == ld or (r["domain"] is None and len(spanned) > 1)
        s["memory_logs"] += ld != "none"
        s["no_finding"] += ld != "none" and not memory
        s["not_memory_logs"] += ld == "none"
        s["fp_any"] += ld == "none" and memory
        s["fp_top"] += ld == "none" and got_domain != "none"
    return s


def line(name, s):
    return (f"  {name:44s} top cause {s['cause']:4d}/{s['logs']} {100 * s['cause'] / s['logs']:5.1f} %   "
            f"domain {s['domain']:4d} {100 * s['domain'] / s['logs']:5.1f} %   "
            f"memory logs without a finding {s['no_finding']:2d}/{s['memory_logs']}   "
            f"not-memory logs with a memory finding {s['fp_any']:2d}/{s['not_memory_logs']} (top {s['fp_top']})")


THRESHOLDS = [0.01, 0.001, 0.0001, 0.00001]  # P(none) below which the layer speaks


def with_layer(rows, rules, subset, folds, threshold, gate, models):
    """Out-of-fold answers of rules + the learned layer on `subset` (indices into rows)."""
    out = []
    for i in subset:
        f = list(rules[i])
        if not f:  # only where the rules give no finding at all
            g = learned_finding(models[fold_of(rows[i], folds)], rows[i]["excerpt"], threshold, gate)
            if g:
                f = [{"cause": g[0], "domain": g[1], "confidence": "low"}]
        out.append(f)
    return out


def study(name, rows, rules, subset, folds, models, chosen):
    sub = [rows[i] for i in subset]
    out = [f"{name}: {len(subset)} rows",
           line("rules alone", score(sub, [rules[i] for i in subset]))]
    for gate in (False, True):
        for t in THRESHOLDS:
            mark = "  <- the C++ prototype" if not gate and t == chosen else ""
            label = f"+ learned, P(none) < {t:g}{', trouble gate' if gate else ''}"
            out.append(line(label, score(sub, with_layer(rows, rules, subset, folds, t, gate, models))) + mark)
    nf = [i for i in subset if not rules[i]]
    out.append(f"  the rules leave {len(nf)} of these logs without any finding, "
               f"{sum(label_domain(rows[i]) != 'none' for i in nf)} of them about memory")
    return out


def domain_override(rows, rules, folds):
    """C. Breaking the rules' domain where they are unsure: a gpu/host model (trained on the memory rows of the
    other folds) replaces the domain of a low-confidence memory finding when it disagrees with P >= margin."""
    out = ["C. the model's domain (gpu against host, trained on memory rows) instead of the rules' on their "
           "low-confidence memory findings (today's rules):"]
    models = {}
    for k in range(folds):
        m = train_classes([r for r in rows if fold_of(r, folds) != k and r["domain"]], ["gpu", "host"])
        models[k] = m
    for margin in (0.5, 0.9, 0.99):
        changed = fixed = broke = 0
        for i, r in enumerate(rows):
            f = rules[i]
            if not f or f[0]["confidence"] != "low" or f[0]["domain"] == "none":
                continue
            p = posterior(models[fold_of(r, folds)], r["excerpt"])
            domain = "gpu" if p["gpu"] >= p["host"] else "host"
            if max(p.values()) < margin or domain == f[0]["domain"]:
                continue
            changed += 1
            fixed += label_domain(r) == domain
            broke += label_domain(r) == f[0]["domain"]
        out.append(f"  P >= {margin}: {changed} findings change domain, {fixed} become right, {broke} become wrong")
    return out


def cv(args):
    rows = [json.loads(l) for l in open(DEV) if l.strip()]
    rules = [a["findings"] for a in rules_answers(rows, args.rules)]
    models = {k: train([r for r in rows if fold_of(r, args.folds) != k]) for k in range(args.folds)}
    out = [f"explain learned last layer: {args.folds}-fold cross-validation on {os.path.relpath(DEV, ROOT)} "
           f"({len(rows)} rows, {len({r['source'] for r in rows})} threads), folds by sha256(source) % {args.folds}, "
           "so a thread is never in its own training fold",
           f"model: binarised multinomial naive Bayes over normalised tokens, classes {CLASSES}, vocabulary: tokens "
           f"in >= {MIN_THREADS} training threads, smoothing {ALPHA}; applied only to logs the rules leave without "
           "any finding; it adds gpu_device_oom (gpu) or host_ram_oom (host), low, when P(none) < threshold (and, "
           "with the trouble gate, the log holds a failure word)",
           "columns: top cause, domain, memory logs without a finding, not-memory logs (label domain null) given "
           "a memory finding (top: as their first finding)", ""]
    everything = list(range(len(rows)))
    out += study("A. today's rules (tuned on these rows)", rows, rules, everything, args.folds, models,
                 args.threshold)
    if args.fresh_rules:
        old = [a["findings"] for a in json.load(open(args.fresh_rules))]
        assert len(old) == len(rows)
        fresh = [i for i, r in enumerate(rows) if int(r["id"].split("-")[1]) >= args.fresh_from]
        out.append("")
        out += study(f"B. rows corpus-{args.fresh_from:04d} and later, with the rules of {args.fresh_engine} "
                     "(written before these rows were gathered: fresh rows, as the held-out part is to today's "
                     "rules)", rows, old, fresh, args.folds, models, args.threshold)
    out.append("")
    out += domain_override(rows, rules, args.folds)
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


def write_weights(args):
    rows = [json.loads(l) for l in open(DEV) if l.strip()]
    model = train(rows)
    data = {
        "what": "oomguard explain's learned last layer: binarised multinomial naive Bayes over normalised tokens "
                "(tools/explain_learned_layer.py); used only on logs the rules leave without any finding",
        "trained_on": os.path.relpath(DEV, ROOT) + f" ({len(rows)} rows, every development row)",
        "date": datetime.date.today().isoformat(),
        "classes": CLASSES,
        "threshold_none": args.threshold,
        "prior": [round(model["prior"][c], 4) for c in CLASSES],
        "tokens": {t: [round(model["weights"][c][i], 3) for c in CLASSES] for i, t in enumerate(model["vocab"])},
    }
    with open(args.out, "w") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
        f.write("\n")
    print(f"{args.out}: {len(model['vocab'])} tokens, {os.path.getsize(args.out)} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cv")
    c.add_argument("--rules", help="cache of the rules' answers (JSON), written when missing")
    c.add_argument("--folds", type=int, default=10)
    c.add_argument("--out")
    c.add_argument("--threshold", type=float, default=0.0001, help="the threshold of the C++ prototype (marked)")
    c.add_argument("--fresh-rules", help="per-row answers of an older engine (JSON list of {id, findings})")
    c.add_argument("--fresh-from", type=int, default=1090, help="first corpus id that engine never saw")
    c.add_argument("--fresh-engine", default="371acb0")
    c.set_defaults(func=cv)
    t = sub.add_parser("train")
    t.add_argument("--out", default=os.path.join(ROOT, "data/explain_last_layer.json"))
    t.add_argument("--threshold", type=float, default=0.2)
    t.set_defaults(func=write_weights)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
