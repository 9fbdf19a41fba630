#!/usr/bin/env python3
"""The learned last layer of `oomguard explain`: its study and its weights.

A binarised multinomial naive Bayes over normalised tokens reads a log the rule layers leave without any
finding and estimates whether it is about GPU memory, host memory or neither. Round 11 studied it with three
classes (gpu / host / none) and did not ship it: healthy lines that name memory got an estimate. Round 13
adds the development part of corpus_healthy.jsonl as a fourth class, `healthy` (a log in which nothing
failed), beside `none` (a failure that is not about memory); P(not memory) = P(none) + P(healthy). That
model is shipped: src/explain/learned_layer.cc embeds the file `train` writes
(data/explain_learned_layer.json) and computes the same posterior. Figures:
bench/results/explain_learned_layer_round13.txt (round 11's: bench/results/explain_learned_layer_cv.txt).

  explain_learned_layer.py cv    [--rules CACHE.json] [--healthy-rules CACHE.json] [--fresh-rules ANSWERS.json]
                                 [--new-rules CACHE.json] [--out FILE]
      10-fold cross-validation by thread (folds: sha256(source URL) % 10, as explain_score's --folds) on the
      development rows through --through (A: today's rules; B: the rows from corpus-1090 read by 371acb0's
      rules, fresh to them), the healthy development rows (H: each predicted by a model not trained on its
      fold), the healthy unit-test lines (U: the model trained on everything), and, with --new-rules, the
      development rows after --through (D: read by the rules before this layer, the model trained on the rows
      through --through only: fresh to both). Several models and thresholds.
  explain_learned_layer.py train [--through corpus-NNNN] [--out data/explain_learned_layer.json]
      trains the shipped model on the development rows through --through (default: the last one) and the
      healthy development rows, and writes the weights.
  explain_learned_layer.py check [--weights data/explain_learned_layer.json] [--self-test]
      retrains from the committed corpus with the weights file's own `through` and exits 1 when the result
      differs from the file (ctest explain_learned_layer_weights; --self-test also checks that a weight
      changed by 0.001 is told apart).

The rules' answers come from `OOMGUARD explain --json -` (one process per row; a finding of this layer,
whose summary starts with LEARNED_PREFIX, is dropped, so the figures are those of the rules alone). Only the
development rows of the corpora are read; the held-out rows never (rows with "split" other than "dev" are
skipped as the file is read).

Tokens (src/explain/learned_layer.cc does the same): ASCII letters are lower-cased and a maximal run of
letters is a token when it has 2 to 24 letters (digits, punctuation, paths' separators and hex are dropped,
so numbers, sizes and addresses are masked); every non-ASCII UTF-8 character is a token of its own (CJK text
has no spaces). A log counts each token once.
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
HEALTHY = os.path.join(ROOT, "tests/data/explain/corpus_healthy.jsonl")
WEIGHTS = os.path.join(ROOT, "data/explain_learned_layer.json")
OOMGUARD = os.path.join(ROOT, "build-explain/oomguard")
LEARNED_PREFIX = "Estimated from the log's words"
FOLDS = 10
MIN_THREADS = 3  # a token kept in the vocabulary appears in at least this many training threads
ALPHA = 0.5  # additive smoothing
THRESHOLD = 1e-5  # the shipped layer speaks when P(not memory) is below this (chosen by A's CV, below)
THRESHOLDS = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
# Round 11's failure-word gate (a generic list written before round 11's gated runs, not tuned): a variant
# below speaks only when the log holds one of these tokens or a token ending in FAILURE_SUFFIXES.
FAILURE_WORDS = frozenset({
    "error", "errors", "fail", "fails", "failed", "failing", "failure", "exception", "traceback", "fatal", "panic",
    "abort", "aborted", "aborting", "crash", "crashed", "crashes", "crashing", "kill", "killed", "kills", "killing",
    "die", "dies", "died", "dying", "dead", "terminate", "terminated", "segfault", "segmentation", "unable", "cannot",
    "couldn", "insufficient", "exceed", "exceeded", "exceeds", "oom", "problem", "stuck", "hang", "hangs", "freeze",
    "freezes", "froze", "broken", "breaks",
    "错", "败", "崩", "溃", "爆", "死"})
FAILURE_SUFFIXES = ("error", "exception", "failure")
SPAN = {"host_pinned_oom": "host", "host_ram_oom": "host", "shm_exhausted": "host",
        "driver_mismatch": "none", "cuda_library_mismatch": "none", "not_memory": "none"}
# Healthy lines of the unit tests that must get no memory finding (U): each alone gets no rule finding.
UNIT_HEALTHY_LINES = [
    "epoch 3: memory usage is 12 GB, loss 0.31\n",  # Families.MemoryThatReachesAnAmountIsNamedAsTheProblem
    "debug: alloc size : 4096 is less than total mem size : 29464985600\n",  # ...AnAllocationLargerThan...
    "try setting max_split_size_mb to avoid fragmentation.\n",  # ...OtherProcessesAndFragmentationInPeoplesWords
    "PyTorch suggests PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",  # the same test
]
# The models compared (round 11's is the first): classes, whether healthy rows are trained on, the
# failure-word gate, whether identifiers are masked.
MODELS = [
    ("R11: gpu/host/none", ("gpu", "host", "none"), False, False, False),
    ("healthy rows in none", ("gpu", "host", "none"), True, False, False),
    ("healthy 4th class", ("gpu", "host", "none", "healthy"), True, False, False),
    ("healthy 4th class, gate", ("gpu", "host", "none", "healthy"), True, True, False),
    ("4th class, ids masked (shipped)", ("gpu", "host", "none", "healthy"), True, False, True),
    ("4th class, ids masked, gate", ("gpu", "host", "none", "healthy"), True, True, True),
]
SHIPPED_CLASSES = ("gpu", "host", "none", "healthy")
LETTER_BYTE = [(0x41 <= b <= 0x5A) or (0x61 <= b <= 0x7A) for b in range(128)]
WORD_BYTE = [LETTER_BYTE[b] or (0x30 <= b <= 0x39) or b == 0x5F for b in range(128)]


def tokens(text, mask_identifiers=True):
    """The set of normalised tokens of a log (see the module comment)."""
    out = set()
    data = text.encode("utf-8", "replace")
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            if not WORD_BYTE[b]:
                i += 1
                continue
            j = i
            while j < n and data[j] < 0x80 and WORD_BYTE[data[j]]:
                j += 1
            run = data[i:j]
            i = j
            if mask_identifiers and b"_" in run:
                continue  # an identifier (snake_case name, setting key): code, not the log's words
            k, m = 0, len(run)
            while k < m:
                if not LETTER_BYTE[run[k]]:
                    k += 1
                    continue
                e = k
                while e < m and LETTER_BYTE[run[e]]:
                    e += 1
                if 2 <= e - k <= 24:
                    out.add(run[k:e].decode().lower())
                k = e
            continue
        length = 2 if 0xC0 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if b >= 0xF0 else 1
        out.add(data[i:i + length].decode("utf-8", "replace"))
        i += length
    return out


def number(row_id):
    return int(row_id.split("-")[1])


def read_dev(path=DEV):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    return [r for r in rows if r.get("split", "dev") == "dev"]


def read_healthy_dev(path=HEALTHY):
    out = []
    for l in open(path):
        if l.strip():
            r = json.loads(l)
            if r.get("split") == "dev":  # the held-out healthy rows are never kept
                out.append(r)
    return out


def label(row):
    return row["domain"] or "none"


def fold_of(row):
    return int(hashlib.sha256(row["source"].encode()).hexdigest()[:8], 16) % FOLDS


def train(rows, healthy, classes, mask=True):
    """Per-class log prior and per-token log likelihoods (binarised multinomial NB). `rows` are labelled by
    their domain; `healthy` rows are class `healthy` when it is one of `classes`, else `none`."""
    docs = [(r, label(r)) for r in rows] + [(r, "healthy" if "healthy" in classes else "none") for r in healthy]
    toks = [(tokens(r["excerpt"], mask), c, r["source"]) for r, c in docs]
    threads = {}
    for ts, _, source in toks:
        for t in ts:
            threads.setdefault(t, set()).add(source)
    vocab = sorted(t for t, s in threads.items() if len(s) >= MIN_THREADS)
    index = {t: i for i, t in enumerate(vocab)}
    counts = {c: [0] * len(vocab) for c in classes}
    ndocs = {c: 0 for c in classes}
    for ts, c, _ in toks:
        ndocs[c] += 1
        for t in ts:
            if t in index:
                counts[c][index[t]] += 1
    prior = {c: math.log(ndocs[c] / len(toks)) for c in classes}
    weights = {}
    for c in classes:
        total = sum(counts[c]) + ALPHA * len(vocab)
        weights[c] = [math.log((k + ALPHA) / total) for k in counts[c]]
    # A token outside the vocabulary is skipped: it says nothing about any class.
    return {"vocab": vocab, "index": index, "prior": prior, "weights": weights, "classes": classes, "mask": mask}


def posterior(model, text):
    """P(gpu), P(host), P(not memory) (= P(none) + P(healthy))."""
    score = dict(model["prior"])
    for t in tokens(text, model["mask"]):
        i = model["index"].get(t)
        if i is not None:
            for c in model["classes"]:
                score[c] += model["weights"][c][i]
    top = max(score.values())
    z = sum(math.exp(v - top) for v in score.values())
    p = {c: math.exp(score[c] - top) / z for c in model["classes"]}
    return {"gpu": p["gpu"], "host": p["host"], "none": p["none"] + p.get("healthy", 0.0)}


def reports_trouble(text):
    return any(t in FAILURE_WORDS or t.endswith(FAILURE_SUFFIXES) for t in tokens(text))


def estimate(model, text, threshold, gate):
    """The finding the layer adds to a log without one (as the rules' JSON has it), or None."""
    if gate and not reports_trouble(text):
        return None
    p = posterior(model, text)
    if not p["none"] < threshold:
        return None
    gpu = p["gpu"] >= p["host"]
    return {"cause": "gpu_device_oom" if gpu else "host_ram_oom", "domain": "gpu" if gpu else "host",
            "confidence": "low"}


def rules_answers(binary, rows, cache):
    """Per row, the rules' findings (cause, domain, confidence), from `cache` when it holds every row."""
    if cache and os.path.exists(cache):
        got = {a["id"]: a["findings"] for a in json.load(open(cache))}
        if all(r["id"] in got for r in rows):
            return [got[r["id"]] for r in rows]

    def run(row):
        p = subprocess.run([binary, "explain", "--json", "-"], input=row["excerpt"].encode(), capture_output=True,
                           check=True)
        return [{k: f[k] for k in ("cause", "domain", "confidence")} for f in json.loads(p.stdout)["findings"]
                if not f["summary"].startswith(LEARNED_PREFIX)]

    with ThreadPoolExecutor(2) as pool:
        found = list(pool.map(run, rows))
    if cache:
        with open(cache, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps({"id": r["id"], "findings": x}, separators=(",", ":"))
                                       for r, x in zip(rows, found)) + "\n]\n")
    return found


def score(rows, findings):
    """The scorer's figures (src/explain/scoring.cc) plus not-memory rows given a memory finding."""
    s = {"logs": 0, "cause": 0, "domain": 0, "memory_logs": 0, "no_finding": 0, "not_memory_logs": 0, "fp": 0}
    for r, f in zip(rows, findings):
        got_cause = f[0]["cause"] if f else "not_memory"
        got_domain = f[0]["domain"] if f else "none"
        spanned = {SPAN.get(a, "gpu") for a in r["accept"]}
        memory = any(x["domain"] != "none" for x in f)
        s["logs"] += 1
        s["cause"] += got_cause in r["accept"]
        s["domain"] += got_domain == label(r) or (r["domain"] is None and len(spanned) > 1)
        s["memory_logs"] += label(r) != "none"
        s["no_finding"] += label(r) != "none" and not memory
        s["not_memory_logs"] += label(r) == "none"
        s["fp"] += label(r) == "none" and memory
    return s


def line(name, s):
    n = s["logs"]
    return (f"  {name:44s} top cause {s['cause']:4d}/{n} {100 * s['cause'] / n:5.1f} %  "
            f"domain {s['domain']:4d} {100 * s['domain'] / n:5.1f} %  "
            f"memory logs without a finding {s['no_finding']:2d}/{s['memory_logs']}  "
            f"not-memory logs with a memory finding {s['fp']:2d}/{s['not_memory_logs']}")


def layered(rows, rules, models, threshold, gate):
    """Rules + the layer: the layer's estimate only where the rules give no finding at all. `models` maps a
    row to the model that may predict it (one not trained on it)."""
    out = []
    for r, f in zip(rows, rules):
        g = None if f else estimate(models(r), r["excerpt"], threshold, gate)
        out.append([g] if g else list(f))
    return out


def cv(args):
    dev_all = read_dev()
    through = number(args.through) if args.through else max(number(r["id"]) for r in dev_all)
    dev = [r for r in dev_all if number(r["id"]) <= through]
    new = [r for r in dev_all if number(r["id"]) > through]
    healthy = read_healthy_dev()
    rules = rules_answers(args.oomguard, dev, args.rules)
    hrules = rules_answers(args.oomguard, healthy, args.healthy_rules)
    old = {a["id"]: a["findings"] for a in json.load(open(args.fresh_rules))} if args.fresh_rules else None
    fresh = [r for r in dev if number(r["id"]) >= args.fresh_from] if old else []
    out = [f"explain learned last layer, round 13: {FOLDS}-fold cross-validation by thread on {os.path.relpath(DEV, ROOT)} "
           f"through corpus-{through:04d} ({len(dev)} rows) and the development part of "
           f"{os.path.relpath(HEALTHY, ROOT)} ({len(healthy)} healthy logs); folds by sha256(source) % {FOLDS}, so a "
           "thread is never in its own training fold",
           f"model: binarised multinomial naive Bayes over normalised tokens (tokens in >= {MIN_THREADS} training "
           f"threads, smoothing {ALPHA}); applied only to logs the rules leave without any finding; it adds "
           "gpu_device_oom (gpu) or host_ram_oom (host), low, when P(not memory) < threshold",
           "columns: top cause, domain, memory logs without a finding, not-memory logs (label domain null) given a "
           "memory finding", ""]
    sections = {}
    for name, classes, with_healthy, gate, mask in MODELS:
        folds = {k: train([r for r in dev if fold_of(r) != k],
                          [r for r in healthy if fold_of(r) != k] if with_healthy else [], classes, mask)
                 for k in range(FOLDS)}
        whole = train(dev, healthy if with_healthy else [], classes, mask)
        by_fold = lambda r: folds[fold_of(r)]  # noqa: E731
        for t in THRESHOLDS:
            label_t = f"{name}, P<{t:g}"
            sections.setdefault("A", []).append(line(label_t, score(dev, layered(dev, rules, by_fold, t, gate))))
            if fresh:
                sections.setdefault("B", []).append(
                    line(label_t, score(fresh, layered(fresh, [old[r["id"]] for r in fresh], by_fold, t, gate))))
            given = sum(1 for r, f in zip(healthy, layered(healthy, hrules, by_fold, t, gate))
                        if any(x["domain"] != "none" for x in f))
            fired = [i for i, u in enumerate(UNIT_HEALTHY_LINES) if estimate(whole, u, t, gate)]
            sections.setdefault("H", []).append(
                f"  {label_t:44s} healthy logs given a memory finding {given}/{len(healthy)}   unit-test healthy lines "
                f"given an estimate {len(fired)}/{len(UNIT_HEALTHY_LINES)}" +
                (f" ({', '.join('U%d' % (i + 1) for i in fired)})" if fired else ""))
    out.append(f"A. today's rules (tuned on these rows), {len(dev)} rows")
    out.append(line("rules alone", score(dev, rules)))
    out += sections["A"]
    out.append(f"  the rules leave {sum(not f for f in rules)} of these logs without any finding, "
               f"{sum(1 for r, f in zip(dev, rules) if not f and label(r) != 'none')} of them about memory")
    if fresh:
        out += ["", f"B. rows corpus-{args.fresh_from:04d} to corpus-{through:04d}, read by the rules of "
                f"{args.fresh_engine} (written before these rows were gathered: fresh to the rules, not to the "
                f"layer's tuning), {len(fresh)} rows"]
        out.append(line("rules alone", score(fresh, [old[r["id"]] for r in fresh])))
        out += sections["B"]
    out += ["", f"H. healthy logs (development part of corpus_healthy.jsonl, {len(healthy)}; the rules give "
            f"{sum(1 for f in hrules if any(x['domain'] != 'none' for x in f))} a memory finding, "
            f"{sum(not f for f in hrules)} none at all, so the layer reads those), each predicted by a model not "
            "trained on its fold; and the unit tests' healthy lines (model trained on everything):"]
    out += [f"  U{i + 1}: {u.strip()}" for i, u in enumerate(UNIT_HEALTHY_LINES)]
    out += sections["H"]
    if args.new_rules and new:
        nrules = rules_answers(args.oomguard, new, args.new_rules)
        shipped = train(dev, healthy, SHIPPED_CLASSES)
        out += ["", f"D. the development rows added after corpus-{through:04d} ({len(new)} rows, "
                f"corpus-{number(new[0]['id']):04d} on), read by the rules before this layer; the layer trained on "
                f"the rows through corpus-{through:04d} and the healthy rows: fresh to both"]
        out.append(line("rules alone", score(new, nrules)))
        for t in THRESHOLDS:
            out.append(line(f"+ shipped model, P < {t:g}" + (" (shipped)" if t == THRESHOLD else ""),
                            score(new, layered(new, nrules, lambda r: shipped, t, False))))
        out.append(f"  the rules leave {sum(not f for f in nrules)} of these logs without any finding, "
                   f"{sum(1 for r, f in zip(new, nrules) if not f and label(r) != 'none')} of them about memory")
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


def weights_text(through):
    dev = [r for r in read_dev() if number(r["id"]) <= through]
    healthy = read_healthy_dev()
    model = train(dev, healthy, SHIPPED_CLASSES)
    data = {
        "what": "oomguard explain's learned last layer: binarised multinomial naive Bayes over normalised tokens "
                "(tools/explain_learned_layer.py train); used only on logs the rules leave without any finding; "
                "P(not memory) = P(none) + P(healthy)",
        "trained_on": f"tests/data/explain/corpus_dev.jsonl through corpus-{through:04d} ({len(dev)} rows) and the "
                      f"development part of tests/data/explain/corpus_healthy.jsonl ({len(healthy)} rows)",
        "through": f"corpus-{through:04d}",
        "classes": list(SHIPPED_CLASSES),
        "threshold_not_memory": THRESHOLD,
        "prior": [round(model["prior"][c], 4) for c in SHIPPED_CLASSES],
        "tokens": {t: [round(model["weights"][c][i], 3) for c in SHIPPED_CLASSES]
                   for i, t in enumerate(model["vocab"])},
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", len(model["vocab"])


def write_weights(args):
    through = number(args.through) if args.through else max(number(r["id"]) for r in read_dev())
    text, n = weights_text(through)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{os.path.relpath(args.out, ROOT)}: {n} tokens, {len(text.encode())} bytes, trained through "
          f"corpus-{through:04d}")


def check(args):
    have = open(args.weights, encoding="utf-8").read()
    through = number(json.loads(have)["through"])
    want, _ = weights_text(through)
    if args.self_test:
        # The check itself: one weight changed by 0.001 must be told apart.
        data = json.loads(want)
        token = sorted(data["tokens"])[0]
        data["tokens"][token][0] = round(data["tokens"][token][0] + 0.001, 3)
        tampered = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        if tampered == want:
            print("check --self-test: a changed weight was not told apart", file=sys.stderr)
            return 1
        print("check --self-test: a changed weight is told apart")
    if have != want:
        print(f"{args.weights} differs from what `tools/explain_learned_layer.py train --through corpus-{through:04d}` "
              "writes from the committed corpus: rerun it and rebuild", file=sys.stderr)
        return 1
    print(f"{args.weights}: equal to the weights trained through corpus-{through:04d}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cv")
    c.add_argument("--oomguard", default=OOMGUARD, help="the binary whose rules are measured (before this layer)")
    c.add_argument("--through", help="last development row of A (and of the model D is read with)")
    c.add_argument("--rules", help="cache of the rules' answers on the development rows (JSON), written when missing")
    c.add_argument("--healthy-rules", help="the same for the healthy development rows")
    c.add_argument("--fresh-rules", help="per-row answers of an older engine (JSON list of {id, findings})")
    c.add_argument("--fresh-from", type=int, default=1090, help="first corpus id that engine never saw")
    c.add_argument("--fresh-engine", default="371acb0")
    c.add_argument("--new-rules", help="cache of the rules' answers on the rows after --through (D)")
    c.add_argument("--out")
    c.set_defaults(func=cv)
    t = sub.add_parser("train")
    t.add_argument("--through", help="last development row trained on (default: the last one)")
    t.add_argument("--out", default=WEIGHTS)
    t.set_defaults(func=write_weights)
    k = sub.add_parser("check")
    k.add_argument("--weights", default=WEIGHTS)
    k.add_argument("--self-test", action="store_true", help="also check that a changed weight is told apart")
    k.set_defaults(func=check)
    args = ap.parse_args()
    sys.exit(args.func(args) or 0)


if __name__ == "__main__":
    main()
