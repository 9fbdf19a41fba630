#!/usr/bin/env python3
"""Round 32: should the learned last layer also speak after the rules' not-memory findings?

The learned layer (tools/explain_learned_layer.py, src/explain/learned_layer.cc) reads only the logs the rules leave
without ANY finding. Most development memory logs still without a memory finding are logs where a rule said
`not_memory` (an error that is not a shortage: an illegal address, a launch failure, a library error) although the
log also reports memory running out in words the model knows. This study asks, by K-fold cross-validation BY THREAD
on the development part, whether a low generic finding (gpu_device_oom / host_ram_oom, the memory from the log's
words or the model's odds) should be ADDED AFTER such findings when:
  - the rules' findings are all not-memory (domain none),
  - the log's gate text holds a phrase of the out-of-memory vocabulary (OOM_VOCABULARY), with or without one of
    the failure words (the variant's `needs_failure_word`),
  - P(not memory) under the model is below a threshold T.
Where it goes: `after` (the rules' finding stays first: top cause and domain unchanged, only the no-finding and
false-alarm counts move) or `first` (before a not-memory finding that is not `high`).

Per outer fold k (folds: sha256(source) % 10, as explain_learned_layer.py; a thread never in its own training
fold): the model is trained on the other folds' development rows and healthy development rows; the variant (gate,
T, place) is CHOSEN on the other folds alone, from their inner out-of-fold posteriors (a model trained on the folds
other than k and j predicts fold j), by the largest (memory logs given a finding - not-memory logs given one),
ties to fewer false alarms, and only among variants that give no healthy log a memory finding and do not lower
top cause; then it is applied to fold k with the outer model. The sum over the folds is the CV estimate. The same
choice made on all folds (inner 10-fold posteriors) is what ships; the in-sample figure uses the shipped weights
(data/explain_learned_layer.json, trained through its `through` row).

  explain_cv.py [--oomguard build/src/cli/oomguard] [--rules CACHE.json] [--healthy-rules CACHE.json] [--out FILE]

Only development rows are read (read_dev / read_healthy_dev skip every other split).
"""
import argparse
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explain_learned_layer as L  # noqa: E402

_TOKENS = L.tokens
_TOKEN_CACHE = {}


def _cached_tokens(text, mask_identifiers=True):
    key = (text, mask_identifiers)
    if key not in _TOKEN_CACHE:
        _TOKEN_CACHE[key] = _TOKENS(text, mask_identifiers)
    return _TOKEN_CACHE[key]


L.tokens = _cached_tokens  # the same tokens, each log tokenised once (100 models are trained)
_EMPTY = {}

THRESHOLDS_AFTER = [0.9, 0.5, 0.1, 1e-2, 1e-3, 1e-4, 1e-6]
NEEDS_FAILURE = [True, False]
PLACES = ["after", "first"]
# Second family: a looser threshold for logs without any rule finding that today's layer leaves silent, gated by a
# failure word or by a memory noun (MEMORY_NOUNS) alone.
THRESHOLDS_EMPTY = [0.5, 0.1, 0.05, 1e-2, 5e-3, 1e-3, 1e-4]
EMPTY_GATES = ["failure word", "memory noun"]
VARIANTS = [None] + [("after",) + v for v in itertools.product(NEEDS_FAILURE, THRESHOLDS_AFTER, PLACES)] + \
    [("empty", g, t, "alone") for g in EMPTY_GATES for t in THRESHOLDS_EMPTY]


def describe(v):
    if v is None:
        return "off (the rules and today's learned layer)"
    kind, needs, t, place = v
    if kind == "empty":
        return f"no rule finding: {needs}, P(not memory) < {t:g}"
    if kind == "cue":
        return f"cue: {needs}, after"
    return f"after not-memory: vocabulary{' + failure word' if needs else ''}, P < {t:g}, {place}"


def fires(v, row_facts, p, text=""):
    """Whether variant v adds its finding to a row whose facts are (all_not_memory, vocabulary, failure, nouns)."""
    if v is None:
        return False
    kind, needs, t, _ = v
    all_none, vocab, failure, nouns = row_facts
    if kind == "cue":
        return cue_hit(needs, text)
    if kind == "empty":
        return (failure if needs == "failure word" else nouns) and p["none"] < t
    return all_none and vocab and (failure or not needs) and p["none"] < t


def answer(v, rules, facts, p, text):
    """The findings with variant v applied (rules' findings: the engine's minus today's learned finding, which is
    put back where today's layer speaks: no rule finding at all)."""
    if not rules:
        if text not in _EMPTY:
            g = L.estimate(MODEL_FOR_EMPTY, text, L.THRESHOLD, False, L.gates(prose=PROSE))
            _EMPTY[text] = [g] if g else []
        if _EMPTY[text] or v is None or v[0] == "after" or not fires(v, facts, p, text):
            return list(_EMPTY[text])
    elif v is None or v[0] == "empty" or (v[0] == "after" and not fires(v, facts, p)) or \
            (v[0] == "cue" and (any(x["domain"] != "none" for x in rules) or not fires(v, facts, p, text))):
        return list(rules)
    gpu_words, host_words = L.holds_phrase(text, L.DOMAIN_NOUNS["gpu"]), L.holds_phrase(text, L.DOMAIN_NOUNS["host"])
    gpu = gpu_words if gpu_words != host_words else p["gpu"] >= p["host"]
    g = {"cause": "gpu_device_oom" if gpu else "host_ram_oom", "domain": "gpu" if gpu else "host", "confidence": "low"}
    if not rules:
        return [g]
    if v[3] == "first" and all(x["confidence"] != "high" for x in rules):
        return [g] + list(rules)
    return list(rules) + [g]


def tally(rows, rules, facts, post, v, healthy_n):
    s = L.score(rows[:len(rows) - healthy_n], [answer(v, f, fa, p, r["excerpt"]) for r, f, fa, p in
                                               list(zip(rows, rules, facts, post))[:len(rows) - healthy_n]])
    s["healthy_fp"] = sum(1 for r, f, fa, p in list(zip(rows, rules, facts, post))[len(rows) - healthy_n:]
                          if any(x["domain"] != "none" for x in answer(v, f, fa, p, r["excerpt"])))
    return s


def choose(rows, rules, facts, post, healthy_n):
    """The variant chosen on these rows (see the module comment)."""
    base = tally(rows, rules, facts, post, None, healthy_n)
    best, key = None, (0, 0)
    for v in VARIANTS[1:]:
        s = tally(rows, rules, facts, post, v, healthy_n)
        if s["healthy_fp"] > base["healthy_fp"] or s["cause"] < base["cause"]:
            continue
        gain = (base["no_finding"] - s["no_finding"]) - (s["fp"] - base["fp"])
        k = (gain, -(s["fp"] - base["fp"]))
        if gain > 0 and k > key:
            best, key = v, k
    return best


MODEL_FOR_EMPTY = None
PROSE = None
# Step 1 of the round, the study: general cues of a memory failure (not rows' wordings), counted on the development
# logs (healthy ones included) that the rules and today's learned layer leave without a memory finding: how many
# are memory logs, how many not. A cue worth a generic finding would need more of the first than of the second.
CUES = [
    ("illegal memory access / address", r"illegal (?:memory access|address)|ILLEGAL_ADDRESS|IllegalAddress"),
    ("segmentation fault, -11, core dumped", r"segmentation fault|sigsegv|code -?11\b|core dumped|segfault"),
    ("device lost", r"device.?lost|DEVICE_LOST"),
    ("device-side assert", r"device-side assert"),
    # shipped in round 32 as patterns.cc's memory_object_error (the same regex)
    ("a memory object or buffer in an error",
     r"INVALID_MEM(?:ORY)?_OBJECT|\bMEM_OBJECT|\b(?:error|fail\w*) (?:while |when |in )?free(?:ing)? \w*buffer"),
    ("the word killed", r"\bkilled\b"),
    ("a memory noun", r"\bmemory\b|\bvram\b|\bram\b|显存|内存"),
    ("error/fail/fatal within 80 chars of memory/alloc",
     r"(?:fail|error|exception|fatal|abort)[^\n]{0,80}\b(?:memory|alloc\w*|vram|ram)\b|"
     r"\b(?:memory|alloc\w*|vram|ram)\b[^\n]{0,80}(?:fail|error|exception|fatal|abort)"),
    ("a number with a byte unit", r"\d(?:\.\d+)?\s*(?:[KMGT]i?B|bytes)\b"),
]


# Third family: one cue of CUES, chosen on the other folds like any variant: a generic finding (its memory from the
# words or the model's odds) after the findings of a log with no memory finding that matches the cue.
VARIANTS += [("cue", name, None, "after") for name, _ in CUES]
_CUE_RX = {}


def cue_hit(name, text):
    import re
    if name not in _CUE_RX:
        _CUE_RX[name] = re.compile(dict(CUES)[name], re.I)
    return bool(_CUE_RX[name].search(text))


def cue_table(rows, answers, dev_n):
    import re
    out = []
    silent = [(i, r) for i, (r, f) in enumerate(zip(rows, answers)) if not any(x["domain"] != "none" for x in f)]
    out.append(f"  logs without a memory finding: {sum(1 for i, r in silent if L.label(r) != 'none')} memory, "
               f"{sum(1 for i, r in silent if L.label(r) == 'none')} not memory (healthy included)")
    for name, cue in CUES:
        rx = re.compile(cue, re.I)
        hit = [(i, r) for i, r in silent if rx.search(r["excerpt"])]
        mem = [r["id"] for i, r in hit if L.label(r) != "none"]
        out.append(f"  {name:50s} memory {len(mem):3d}  not memory {len(hit) - len(mem):3d}" +
                   (f"  ({', '.join(mem)})" if mem else ""))
    return out


def main():
    global MODEL_FOR_EMPTY, PROSE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oomguard", default=os.path.join(L.ROOT, "build/src/cli/oomguard"))
    ap.add_argument("--rules")
    ap.add_argument("--healthy-rules")
    ap.add_argument("--out")
    args = ap.parse_args()
    dev, healthy = L.read_dev(), L.read_healthy_dev()
    rules = L.rules_answers(args.oomguard, dev, args.rules) + L.rules_answers(args.oomguard, healthy,
                                                                                args.healthy_rules)
    rows = dev + healthy
    hn = len(healthy)
    weights = json.load(open(L.WEIGHTS))
    PROSE = next(g["phrases"] for g in weights["gates"] if g["name"] == "prose_cues")
    through = L.number(weights["through"])
    facts = [(bool(f) and all(x["domain"] == "none" for x in f), L.holds_phrase(r["excerpt"]),
              L.reports_trouble(r["excerpt"]), L.holds_phrase(r["excerpt"], L.MEMORY_NOUNS)) for r, f in zip(rows, rules)]
    needs_p = [facts[i][0] or not rules[i] for i in range(len(rows))]
    fold = [L.fold_of(r) for r in rows]
    is_dev = [i < len(dev) for i in range(len(rows))]

    def fit(exclude):
        return L.train([r for r, k, d in zip(rows, fold, is_dev) if d and k not in exclude],
                       [r for r, k, d in zip(rows, fold, is_dev) if not d and k not in exclude], L.SHIPPED_CLASSES)

    def sub(idx, post):
        # the rows of `idx`, dev rows first then healthy (tally counts the last `n` as healthy)
        d = [i for i in idx if is_dev[i]]
        h = [i for i in idx if not is_dev[i]]
        order = d + h
        return [rows[i] for i in order], [rules[i] for i in order], [facts[i] for i in order], \
            [post[i] for i in order], len(h)

    # Today's layer on logs without any rule finding: the shipped weights (as the engine).
    shipped = L.train([r for r in dev if L.number(r["id"]) <= through], healthy, L.SHIPPED_CLASSES)
    MODEL_FOR_EMPTY = shipped
    outer = {k: fit({k}) for k in range(L.FOLDS)}
    post_outer = [L.posterior(outer[fold[i]], rows[i]["excerpt"]) if needs_p[i] else {"none": 1.0}
                  for i in range(len(rows))]
    inner = {}
    for k in range(L.FOLDS):
        for j in range(L.FOLDS):
            if j != k:
                inner[(k, j)] = fit({k, j})
    # whole-data choice: inner out-of-fold posteriors over all folds (a model not trained on the row's fold)
    chosen = {}
    for k in range(L.FOLDS):
        post_k = [L.posterior(inner[(k, fold[i])], rows[i]["excerpt"]) if needs_p[i] and fold[i] != k
                  else {"none": 1.0} for i in range(len(rows))]
        idx = [i for i in range(len(rows)) if fold[i] != k]
        chosen[k] = choose(*sub(idx, post_k))
    ship = choose(*sub(range(len(rows)), post_outer))
    # CV estimate: fold k scored with its own choice and the outer model
    cv = {"logs": 0, "cause": 0, "domain": 0, "memory_logs": 0, "no_finding": 0, "not_memory_logs": 0, "fp": 0,
          "healthy_fp": 0}
    base = dict(cv)
    for k in range(L.FOLDS):
        idx = [i for i in range(len(rows)) if fold[i] == k]
        for acc, v in ((cv, chosen[k]), (base, None)):
            s = tally(*sub(idx, post_outer)[:4], v, sub(idx, post_outer)[4])
            for key in acc:
                acc[key] += s[key]
    out = [f"explain round 32: the learned layer after the rules' not-memory findings, {L.FOLDS}-fold cross-validation "
           f"by thread on {os.path.relpath(L.DEV, L.ROOT)} (development part, {len(dev)} rows) and the development "
           f"part of {os.path.relpath(L.HEALTHY, L.ROOT)} ({hn} healthy logs)",
           f"rules: {args.oomguard} explain --json (today's learned finding dropped, then put back as the engine "
           f"does with the shipped weights, through {weights['through']}); variants: {len(VARIANTS) - 1} "
           "(after not-memory findings: failure word needed or not x threshold x place; no rule finding: gate x threshold; one cue of the study)",
           "columns: top cause, domain, memory logs without a finding, not-memory logs given a memory finding", ""]
    today = [answer(None, f, fa, p, r["excerpt"]) for r, f, fa, p in zip(rows, rules, facts, post_outer)]
    out.append("study: general cues on the logs the rules and today's learned layer leave without a memory finding")
    out += cue_table(rows, today, len(dev)) + [""]
    out.append("per fold, the variant chosen on the other nine folds:")
    for k in range(L.FOLDS):
        out.append(f"  fold {k}: {describe(chosen[k])}")
    out += ["", "CV estimate (each fold scored with the variant chosen without it, the model trained without it):"]
    out.append(L.line("off", base) + f"  healthy {base['healthy_fp']}/{hn}")
    out.append(L.line("chosen per fold", cv) + f"  healthy {cv['healthy_fp']}/{hn}")
    out.append(f"  => memory logs without a finding {base['no_finding']} -> {cv['no_finding']} "
               f"({base['no_finding'] - cv['no_finding']} fewer), false alarms {base['fp']} -> {cv['fp']} "
               f"({cv['fp'] - base['fp']:+d})")
    out += ["", "every variant, out-of-fold posteriors (each row predicted by the model not trained on its fold; the "
            "threshold is NOT chosen here, so these lines are for reading the trade-off, not an estimate):"]
    for v in VARIANTS:
        s = tally(*sub(range(len(rows)), post_outer)[:4], v, hn)
        out.append(L.line(describe(v), s) + f"  healthy {s['healthy_fp']}/{hn}")
    out += ["", f"chosen on all development folds (what ships): {describe(ship)}"]
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
