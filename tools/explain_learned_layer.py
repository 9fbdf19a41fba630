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
  explain_learned_layer.py gates [--rules CACHE.json] [--healthy-rules CACHE.json] [--out FILE]
      round 16: the gates' thresholds (OOM_VOCABULARY, MEMORY_NOUNS) by 10-fold cross-validation by thread on all
      development rows (A), the fresh rows of rounds 13-15 as the engine before each round read them (F) and the
      healthy development rows (H) (bench/results/explain_learned_layer_round16.txt).
  explain_learned_layer.py prose [--rules CACHE.json] [--healthy-rules CACHE.json] [--zero M,P,T] [--out FILE]
      round 17: the prose gate (which PROSE_CANDIDATES it keeps, chosen per fold on the other folds' rows) and,
      with --zero, the zero-count lines and a looser vocabulary gate beside a failure word, by the same CV on A, F,
      H and the unit tests' negatives U (bench/results/explain_learned_layer_round17.txt).
  explain_learned_layer.py domain [--rules CACHE.json] [--healthy-rules CACHE.json] [--out FILE]
      round 20: whether the model should also arbitrate the memory of the rules' low findings, or speak after
      not-memory findings, by the same CV on A, F (rounds 13-15 and 18-20) and H
      (bench/results/explain_learned_layer_round20.txt; neither shipped).
  explain_learned_layer.py undecided [--rules CACHE.json] [--fresh-from N] [--out FILE]
      round 27: whether the model should choose the memory where the rules' low finding chose it without the line's
      words (the GPU default, the whole log's count, the lines around it), by the same CV on all development rows
      (bench/results/explain_learned_layer_round27.txt).
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
import re
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
# Round 16: gates. A log that holds a phrase of a gate's list is held to the gate's threshold (the largest of
# those it passes) instead of the strict THRESHOLD: one that plainly speaks of memory running out
# (OOM_VOCABULARY) to THRESHOLD_VOCABULARY, one that names memory at all (MEMORY_NOUNS) to THRESHOLD_MEMORY_NOUNS.
# The thresholds are chosen by cross-validation by thread (bench/results/explain_learned_layer_round16.txt). The
# lists are written from the wordings of frameworks, runtimes, kernels and schedulers (docs/explain.md's layer 2)
# and from the words for memory, not row by row. Matched on the phrase text: lower-cased, every run of ASCII
# characters that are not letters or digits ('_' included) made one space, padded with a space (so
# "CUDA_ERROR_OUT_OF_MEMORY" holds " out of memory ", "return code -9" " code 9 "); a phrase with a non-ASCII
# character is matched as it stands. learned_layer.cc reads the gates from the weights file.
OOM_VOCABULARY = [
    "out of memory", "outofmemory", "outofmemoryerror", "oom", "ooms", "oomed", "ooming", "oomkilled", "oom killer",
    "oom kill", "out of vram", "out of ram", "out of gpu memory", "out of device memory", "out of host memory",
    "resource exhausted", "memory exhausted", "exhausted memory",
    "failed to allocate", "failed to alloc", "fail to allocate", "cannot allocate", "can not allocate", "can t allocate",
    "could not allocate", "couldn t allocate", "unable to allocate", "allocation failed", "allocation failure",
    "failed allocation", "failed to reserve", "unable to mmap", "bad alloc", "enomem", "memoryerror", "memory error",
    "insufficient memory", "insufficient gpu memory", "insufficient vram", "not enough memory", "not enough vram",
    "not enough ram", "not enough gpu memory", "no enough memory", "enough memory resources", "than is available",
    "than available", "memory limit", "limit exceeded", "memory exceeded", "exceeded memory", "exceeds memory",
    "ran out of", "run out of", "runs out of", "running out of", "runs out", "ran out", "max out", "maxed out",
    "killed", "sigkill", "signal 9", "code 137", "status 137", "code 9", "oom score",
    "显存不足", "内存不足", "显存溢出", "内存溢出", "爆显存", "显存爆", "爆内存", "无法分配", "内存耗尽", "显存耗尽",
    "メモリ不足", "메모리 부족", "недостаточно памяти", "нехватка памяти",
]
MEMORY_NOUNS = [
    "memory", "vram", "ram", "gpu memory", "system memory", "swap", "shm", "dev shm", "rss", "pinned", "page locked",
    "显存", "内存", "メモリ", "메모리", "памяти", "память", "speicher", "mémoire",
]
# The memory a finding of this layer names: where the log's words name only the GPU's memory or only the host's,
# that one; else the model's larger of P(gpu) and P(host).
DOMAIN_NOUNS = {
    "gpu": ["vram", "gpu memory", "gpu ram", "cuda memory", "device memory", "video memory", "graphics memory", "显存"],
    "host": ["ram", "system memory", "system ram", "cpu memory", "cpu ram", "host memory", "swap", "shm", "rss", "内存"],
}
THRESHOLD_VOCABULARY = 1e-3
THRESHOLD_MEMORY_NOUNS = 1e-3
# Round 17: a third gate for prose cues, logs that tell of memory trouble without the words for running out
# (growth, memory not released, a leak, a kernel that restarts, a framework that takes all the memory, one GPU that
# holds more than the others). PROSE_CANDIDATES is a pool written from those kinds of wording before any row was
# read for it; which of them the gate keeps is CHOSEN FROM THE DATA (prose_phrases: a candidate is kept when, among
# the rows it is chosen on, at least PROSE_MIN_MEMORY memory rows hold it and at least PROSE_PRECISION of the rows
# that hold it (healthy rows included, as not memory) are memory rows), by cross-validation by thread
# (`prose` below: the phrases of each fold chosen on the other folds). The shipped gate is chosen on all
# development rows with the settings the CV picked (bench/results/explain_learned_layer_round17.txt).
PROSE_CANDIDATES = [
    # growth
    "keeps increasing", "keep increasing", "keeps growing", "keep growing", "continues to grow", "continue to grow",
    "continues to increase", "continuously increasing", "continuously increases", "constantly increasing",
    "steadily increasing", "gradually increasing", "gradually increases", "increasing memory", "increase in memory",
    "memory increases", "memory increasing", "memory increase", "memory grows", "memory growing", "memory growth",
    "memory keeps", "growing memory", "memory usage increases", "memory usage keeps", "usage keeps", "keeps going up",
    "goes up", "keeps rising", "memory creep", "over time", "every iteration", "each iteration", "every epoch",
    "each epoch", "after each", "accumulate", "accumulates", "accumulating",
    # not released
    "not released", "not being released", "never released", "isn t released", "not freed", "not being freed",
    "never freed", "not free", "not release", "doesn t release", "does not release", "don t release",
    "doesn t free", "does not free", "not returned", "not deallocated", "not cleared", "not removed",
    "not get released", "still occupied", "still occupies", "remains occupied", "still allocated", "release memory",
    "free memory", "free the memory", "release the memory", "empty cache", "clear memory", "memory is not",
    # leak
    "leak", "leaks", "leaking", "leaked", "leakage", "memory leak", "memory leaks",
    # a kernel or process that dies without a word
    "kernel is restarting", "kernel restarting", "kernel died", "kernel crashed", "kernel appears to have died",
    "dead kernel", "restarting kernel", "kernel dies", "session crashed", "crashes", "crashed", "freezes", "froze",
    "hangs", "unresponsive", "swapping", "thrashing",
    # preallocation, one GPU holding more
    "takes all the memory", "take all the memory", "takes all memory", "all the memory", "all the gpu memory",
    "all gpu memory", "entire gpu", "whole gpu", "full memory", "memory is full", "memory full", "preallocate",
    "preallocates", "preallocation", "pre allocate", "grabs", "occupies", "occupy", "uses more than", "more memory than",
    "more than the others", "other gpus", "gpu 0", "cuda 0", "device 0", "first gpu", "extra memory", "extra process",
    # usage
    "memory usage", "memory consumption", "high memory", "huge memory", "too much memory", "excessive memory",
    "much memory", "lot of memory", "lots of memory", "more memory", "memory spike", "peak memory", "memory footprint",
    "memory blow", "memory explodes", "memory explosion", "memory issue", "memory issues", "memory problem",
    "consumes", "consuming",
]
PROSE_MIN_MEMORY_GRID = [1, 2, 3, 5]
PROSE_PRECISION_GRID = [0.8, 0.9, 0.95]
THRESHOLDS_PROSE = [1.0001, 0.1, 1e-2, 1e-3, 1e-4]
PROSE_NEEDS_FAILURE = [False, True]
THRESHOLDS_VOCABULARY = [1.0001, 0.9, 0.5, 0.1, 1e-2, 1e-3]
THRESHOLDS_MEMORY_NOUNS = [0.1, 1e-2, 1e-3, 1e-4, 1e-5]


# Round 17's settings, chosen by `prose` (bench/results/explain_learned_layer_round17.txt): the prose gate keeps
# the candidates held by >= 5 memory rows at precision >= 0.8, threshold 1e-3; the OOM vocabulary beside a failure
# word gets a second, looser gate (< 0.9; alone, the vocabulary at such thresholds gave estimates to unit-test
# negatives: "I increased the memory limit to 16GB and the build passed").
PROSE_MIN_MEMORY = 5
PROSE_PRECISION = 0.8
THRESHOLD_PROSE = 1e-3
THRESHOLD_VOCABULARY_FAILURE = 0.9
GATE_NAMES = ("oom_vocabulary", "memory_nouns", "oom_vocabulary_failure_word", "prose_cues")


def gates(vocabulary=None, nouns=None, prose=None):
    """The (phrases, threshold, needs a failure word) gates. The memory nouns gate also needs one of round 11's
    FAILURE_WORDS (a log that names memory and that something failed; "内存增加到32G后就可以正常运行了", a fix that
    worked, names memory and nothing that failed). Given `prose` (the prose gate's phrases, from prose_phrases),
    round 17's two gates follow round 16's two."""
    vocabulary = THRESHOLD_VOCABULARY if vocabulary is None else vocabulary
    nouns = THRESHOLD_MEMORY_NOUNS if nouns is None else nouns
    out = [(OOM_VOCABULARY, vocabulary, False), (MEMORY_NOUNS, nouns, True)]
    if prose is not None:
        out += [(OOM_VOCABULARY, THRESHOLD_VOCABULARY_FAILURE, True), (prose, THRESHOLD_PROSE, False)]
    return out


def phrase_text(text):
    """The text the vocabulary is matched on (see OOM_VOCABULARY)."""
    out, space = [" "], True
    for ch in text.lower() if text.isascii() else "".join(c.lower() if c.isascii() else c for c in text):
        if ch.isascii() and not ch.isalnum():
            if not space:
                out.append(" ")
                space = True
            continue
        out.append(ch)
        space = False
    if not space:
        out.append(" ")
    return "".join(out)


# Round 17: a line that counts something at zero ("CUDA OOMs: 0 | cudaMalloc retries: 0 |",
# "num_out_of_memory_retries 0") says that it did not happen; the gates and the domain nouns do not read it. Such a
# line has at least one digit, every digit on it is a 0, and after its last digit only characters that are not
# ASCII letters or digits. learned_layer.cc does the same when the weights file says "drop_zero_count_lines".
DROP_ZERO_COUNT_LINES = True
TIER2 = []  # the study's second vocabulary gate (needs a failure word): its threshold


def zero_count_line(line):
    digits = [i for i, ch in enumerate(line) if "0" <= ch <= "9"]
    return bool(digits) and all(line[i] == "0" for i in digits) and \
        not any(ch.isascii() and ch.isalnum() for ch in line[digits[-1] + 1:])


# Round 31: an OOM named as what a setting is meant to avoid ("Auto-assiging --gpu-memory 11 for your GPU to try to
# prevent out-of-memory errors") reports no failure; the rules erase it (patterns.cc, EraseAvoidedOom), and so do the
# gates and the domain nouns when the weights file says "erase_avoided_oom" (learned_layer.cc, GateText), on lines
# without a '?' ("How to load checkpoint shards one by one to avoid OOM error?" asks about an OOM its writer has).
ERASE_AVOIDED_OOM = True
AVOIDED_OOM = re.compile(r"\b(?:in order )?to (?:avoid|prevent) (?:the |an? |any )?(?:CUDA |GPU )?"
                         r"(?:out[ -]of[ -]memory|OOM)(?: errors?| issues?)?", re.I)


def gate_text(text):
    """The phrase text the gates and the domain nouns are matched on (see DROP_ZERO_COUNT_LINES, ERASE_AVOIDED_OOM)."""
    if DROP_ZERO_COUNT_LINES:
        text = "\n".join(l for l in text.split("\n") if not zero_count_line(l))
    if ERASE_AVOIDED_OOM:
        text = "\n".join(l if "?" in l else AVOIDED_OOM.sub(" ", l) for l in text.split("\n"))
    return phrase_text(text)


def holds_phrase(text, phrases=OOM_VOCABULARY):
    """Whether the text holds one of `phrases` (see OOM_VOCABULARY), its zero-count lines dropped."""
    t = gate_text(text)
    return any((" " + v + " ") in t if v.isascii() else v in t for v in phrases)


SPAN = {"host_pinned_oom": "host", "host_ram_oom": "host", "shm_exhausted": "host",
        "driver_mismatch": "none", "cuda_library_mismatch": "none", "not_memory": "none"}
# Healthy lines of the unit tests that must get no memory finding (U): each alone gets no rule finding.
UNIT_HEALTHY_LINES = [
    "epoch 3: memory usage is 12 GB, loss 0.31\n",  # Families.MemoryThatReachesAnAmountIsNamedAsTheProblem
    "debug: alloc size : 4096 is less than total mem size : 29464985600\n",  # ...AnAllocationLargerThan...
    "try setting max_split_size_mb to avoid fragmentation.\n",  # ...OtherProcessesAndFragmentationInPeoplesWords
    "PyTorch suggests PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",  # the same test
]
# Round 17: other unit-test lines that get no rule finding and must get no estimate (src/explain/*_test.cc).
UNIT_SILENT_LINES = [
    "I increased the memory limit to 16GB and the build passed\n", "stats: num_out_of_memory_retries 0\n",
    "step 100 loss 0.3 gpu mem 10.2G\n", "Epoch 1/10\n6072/6072 - loss: 0.6284\n",
    "|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n",  # healthy_test.cc
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


def estimate(model, text, threshold, gate, phrase_gates=()):
    """The finding the layer adds to a log without one (as the rules' JSON has it), or None. A log that holds
    a phrase of one of `phrase_gates` (see gates()) is held to the largest such threshold."""
    if gate and not reports_trouble(text):
        return None
    p = posterior(model, text)
    for phrases, t, needs_failure in phrase_gates:
        if t > threshold and holds_phrase(text, phrases) and (not needs_failure or reports_trouble(text)):
            threshold = t
    if not p["none"] < threshold:
        return None
    gpu_words, host_words = holds_phrase(text, DOMAIN_NOUNS["gpu"]), holds_phrase(text, DOMAIN_NOUNS["host"])
    gpu = gpu_words if gpu_words != host_words else p["gpu"] >= p["host"]
    return {"cause": "gpu_device_oom" if gpu else "host_ram_oom", "domain": "gpu" if gpu else "host",
            "confidence": "low"}


def rules_answers(binary, rows, cache, why=False):
    """Per row, the rules' findings (cause, domain, confidence; with `why`, each finding's undecided_because as
    `why` too), from `cache` when it holds every row."""
    if cache and os.path.exists(cache):
        got = {a["id"]: a["findings"] for a in json.load(open(cache))}
        if all(r["id"] in got for r in rows):
            return [got[r["id"]] for r in rows]

    def answer(f):
        a = {k: f[k] for k in ("cause", "domain", "confidence")}
        if why:
            a["why"] = f.get("undecided_because")
        return a

    def run(row):
        p = subprocess.run([binary, "explain", "--json", "-"], input=row["excerpt"].encode(), capture_output=True,
                           check=True)
        return [answer(f) for f in json.loads(p.stdout)["findings"] if not f["summary"].startswith(LEARNED_PREFIX)]

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


FRESH_BATCHES = [("13", 1756, 1862), ("14", 1863, 1927), ("14b", 1928, 1957), ("14c", 1958, 1973), ("15", 1974, 2067)]


def fresh_answers(rows, today):
    """Round 16's F: the fresh development rows of rounds 13-15 as the engine before each round's rules read them.
    bench/results/explain_fresh_round<N>_dev.txt lists each batch's misses with the answer then ("got CAUSE/DOMAIN
    [CONFIDENCE]"; no confidence: no finding at all); a row it does not list was answered right then and keeps
    today's answer (`today`: id -> findings)."""
    old = {}
    for tag, _, _ in FRESH_BATCHES:
        for text in open(os.path.join(ROOT, f"bench/results/explain_fresh_round{tag}_dev.txt")):
            m = re.match(r"\s+miss (corpus-\d+) \([^)]*\): got (\w+)/(\w+)( \w+)?,", text)
            if m:
                rid, cause, domain, confidence = m.groups()
                old[rid] = [] if confidence is None else [{"cause": cause, "domain": domain,
                                                           "confidence": confidence.strip()}]
    fresh = [r for r in rows if any(lo <= number(r["id"]) <= hi for _, lo, hi in FRESH_BATCHES)]
    return fresh, [old.get(r["id"], today[r["id"]]) for r in fresh]


def study_rows(args):
    """The gates' studies' rows: development, healthy, the rules' answers on both, F (fresh_answers) and the model of
    each fold (trained on the other folds' development and healthy rows)."""
    dev = read_dev()
    healthy = read_healthy_dev()
    rules = rules_answers(args.oomguard, dev, args.rules)
    hrules = rules_answers(args.oomguard, healthy, args.healthy_rules)
    fresh, fresh_rules = fresh_answers(dev, {r["id"]: f for r, f in zip(dev, rules)})
    folds = {k: train([r for r in dev if fold_of(r) != k], [r for r in healthy if fold_of(r) != k], SHIPPED_CLASSES)
             for k in range(FOLDS)}
    return dev, healthy, rules, hrules, fresh, fresh_rules, folds


def study_gates(args):
    """Round 16: the gates' thresholds by cross-validation by thread (each row read by a model not trained on its
    thread's fold) on A (all development rows, today's rules), F (fresh_answers) and H (healthy development rows)."""
    dev, healthy, rules, hrules, fresh, fresh_rules, folds = study_rows(args)

    def layer(rows, answers, phrase_gates):
        return [f if f else [g for g in [estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, phrase_gates)]
                             if g] for r, f in zip(rows, answers)]

    def figures(name, phrase_gates):
        a = score(dev, layer(dev, rules, phrase_gates))
        f = score(fresh, layer(fresh, fresh_rules, phrase_gates))
        h = sum(1 for x in layer(healthy, hrules, phrase_gates) if any(y["domain"] != "none" for y in x))
        return (f"  {name:34s} A {a['cause']:4d} {a['domain']:4d} {a['no_finding']:3d} {a['fp']:3d}   "
                f"F {f['cause']:3d} {f['domain']:3d} {f['no_finding']:3d} {f['fp']:2d}   H {h}")

    a0, f0 = score(dev, rules), score(fresh, fresh_rules)
    out = [f"explain learned last layer, round 16: gates. {FOLDS}-fold cross-validation by thread (folds sha256(source) "
           f"% {FOLDS}); the model of each fold is trained on the other folds' development rows and healthy rows",
           f"A: {os.path.relpath(DEV, ROOT)}, all {len(dev)} development rows, read by today's rules "
           f"({a0['memory_logs']} memory logs, {a0['not_memory_logs']} not memory)",
           f"F: the {len(fresh)} fresh development rows of rounds 13-15 (corpus-1756..2067) as read by the engine "
           f"before each round's rules (bench/results/explain_fresh_round*_dev.txt; {f0['memory_logs']} memory logs, "
           f"{f0['not_memory_logs']} not memory)",
           f"H: the {len(healthy)} healthy development rows (corpus_healthy.jsonl, split dev)",
           "columns: top cause right, domain right, memory logs without a finding, not-memory logs given a memory "
           f"finding; H: healthy logs given a memory finding. Strict threshold P(not memory) < {THRESHOLD:g} always.",
           f"  {'rules alone':34s} A {a0['cause']:4d} {a0['domain']:4d} {a0['no_finding']:3d} {a0['fp']:3d}   "
           f"F {f0['cause']:3d} {f0['domain']:3d} {f0['no_finding']:3d} {f0['fp']:2d}",
           figures("no gates (strict threshold only)", ())]
    for v in THRESHOLDS_VOCABULARY:
        for m in THRESHOLDS_MEMORY_NOUNS:
            shipped = v == THRESHOLD_VOCABULARY and m == THRESHOLD_MEMORY_NOUNS
            out.append(figures(f"vocabulary < {v:g}, nouns < {m:g}" + (" SHIPPED" if shipped else ""), gates(v, m)))
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


def prose_phrases(rows, healthy, min_memory, precision):
    """The PROSE_CANDIDATES that `rows` (labelled) and `healthy` (not memory) support (see PROSE_CANDIDATES)."""
    texts = [(phrase_text(r["excerpt"]), label(r) != "none") for r in rows] + \
            [(phrase_text(r["excerpt"]), False) for r in healthy]
    out = []
    for c in PROSE_CANDIDATES:
        pad = " " + c + " "
        hits = [m for t, m in texts if pad in t]
        if sum(hits) >= min_memory and sum(hits) >= precision * len(hits):
            out.append(c)
    return out


def study_prose(args):
    """Round 17: the prose gate by cross-validation by thread: for each fold k, the phrases are chosen on the other
    folds' development and healthy rows (prose_phrases) and the model is trained on them; fold k's rows are read with
    those. A: all development rows (today's rules), F: the fresh rows of rounds 13-15 as first read, H: healthy."""
    dev, healthy, rules, hrules, fresh, fresh_rules, folds = study_rows(args)
    unit = UNIT_HEALTHY_LINES + UNIT_SILENT_LINES

    def figures(name, settings):
        chosen = {}
        if settings:
            m, p, t, needs = settings
            chosen = {k: prose_phrases([r for r in dev if fold_of(r) != k], [r for r in healthy if fold_of(r) != k], m, p)
                      for k in range(FOLDS)}

        def pg(r):
            extra = [(OOM_VOCABULARY, TIER2[0], True)] if TIER2 else []
            return gates() + extra + ([(chosen[fold_of(r)], settings[2], settings[3])] if settings else [])

        def layer(rows, answers):
            return [f if f else [g for g in [estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg(r))] if g]
                    for r, f in zip(rows, answers)]
        a = score(dev, layer(dev, rules))
        f = score(fresh, layer(fresh, fresh_rules))
        h = sum(1 for x in layer(healthy, hrules, ) if any(y["domain"] != "none" for y in x))
        whole = train(dev, healthy, SHIPPED_CLASSES)
        allp = prose_phrases(dev, healthy, settings[0], settings[1]) if settings else []
        g = gates() + ([(OOM_VOCABULARY, TIER2[0], True)] if TIER2 else []) + \
            ([(allp, settings[2], settings[3])] if settings else [])
        u = sum(1 for x in unit if estimate(whole, x, THRESHOLD, False, g))
        return (f"  {name:40s} A {a['cause']:4d} {a['domain']:4d} {a['no_finding']:3d} {a['fp']:3d}   "
                f"F {f['cause']:3d} {f['domain']:3d} {f['no_finding']:3d} {f['fp']:2d}   H {h}  U {u}  "
                f"phrases/fold {sum(len(v) for v in chosen.values()) / FOLDS if chosen else 0:.1f}")

    a0, f0 = score(dev, rules), score(fresh, fresh_rules)
    out = [f"explain learned last layer, round 17: the prose gate. {FOLDS}-fold cross-validation by thread (folds "
           f"sha256(source) % {FOLDS}); for each fold the model is trained and the prose phrases chosen on the other "
           "folds' development and healthy rows; round 16's gates as shipped",
           f"A: all {len(dev)} development rows, today's rules ({a0['memory_logs']} memory, {a0['not_memory_logs']} not)",
           f"F: the {len(fresh)} fresh rows of rounds 13-15 as first read ({f0['memory_logs']} memory, "
           f"{f0['not_memory_logs']} not); H: {len(healthy)} healthy development rows; U: the {len(unit)} unit-test "
           "lines that must stay silent, read by the model and phrases of all rows",
           "columns: top cause, domain, memory logs without a finding, not-memory logs given a memory finding",
           f"  {'rules alone':40s} A {a0['cause']:4d} {a0['domain']:4d} {a0['no_finding']:3d} {a0['fp']:3d}   "
           f"F {f0['cause']:3d} {f0['domain']:3d} {f0['no_finding']:3d} {f0['fp']:2d}",
           figures("round 16 (no prose gate)", None)]
    global DROP_ZERO_COUNT_LINES, THRESHOLD_VOCABULARY
    if args.zero:
        shipped_vocabulary = THRESHOLD_VOCABULARY
        out.append("zero-count lines dropped or not, the OOM vocabulary's threshold, with the prose gate "
                   f"{args.zero}:")
        m, p, t = args.zero.split(",")
        for drop in (False, True):
            for v in THRESHOLDS_VOCABULARY:
                DROP_ZERO_COUNT_LINES, THRESHOLD_VOCABULARY = drop, v
                out.append(figures(f"{'zero lines dropped' if drop else 'zero lines read'}, vocabulary < {v:g}",
                                   (int(m), float(p), float(t), False)))
                sys.stderr.write(out[-1] + "\n")
        DROP_ZERO_COUNT_LINES, THRESHOLD_VOCABULARY = True, shipped_vocabulary
        for drop in (False, True):
            for v in THRESHOLDS_VOCABULARY:
                DROP_ZERO_COUNT_LINES = drop
                TIER2[:] = [v]
                out.append(figures(f"{'dropped' if drop else 'read'}, vocabulary < 0.001, + with a failure word < {v:g}",
                                   (int(m), float(p), float(t), False)))
                sys.stderr.write(out[-1] + "\n")
        DROP_ZERO_COUNT_LINES = True
        TIER2[:] = []
        text = "\n".join(out) + "\n"
        if args.out:
            open(args.out, "w").write(text)
        sys.stdout.write(text)
        return
    for needs in PROSE_NEEDS_FAILURE:
        for m in PROSE_MIN_MEMORY_GRID:
            for p in PROSE_PRECISION_GRID:
                for t in THRESHOLDS_PROSE:
                    out.append(figures(f"min {m}, precision {p:g}, P < {t:g}{', failure word' if needs else ''}",
                                       (m, p, t, needs)))
                    sys.stderr.write(out[-1] + "\n")
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


# Round 20: F widened to every fresh batch scored blind since (rounds 18-20's development rows).
FRESH_BATCHES_R20 = FRESH_BATCHES + [("18", 2068, 2103), ("19", 2104, 2133), ("20", 2134, 2171)]
DOMAIN_SWAP = {"gpu_device_oom": "host_ram_oom", "host_ram_oom": "gpu_device_oom", "leak_growth": "leak_growth"}


def study_domain(args):
    """Round 20: two ways the model might speak beside the rules, by 10-fold cross-validation by thread (each row read
    by the model of the other folds). (1) Domain arbitration: where the rules' top finding is low (or low and medium)
    and a GPU/host OOM or leak, the model's P(other memory) / (P(gpu) + P(host)) above tau swaps its memory (optionally
    never against DOMAIN_NOUNS that name only the rules' memory). (2) A second finding: where the rules give only
    not-memory findings, the layer (shipped gates) adds its estimate after them. A: all development rows (today's
    rules), F: the fresh rows of rounds 13-15 and 18-20 as the engine before each round read them, H: healthy."""
    global FRESH_BATCHES
    saved, FRESH_BATCHES = FRESH_BATCHES, FRESH_BATCHES_R20
    try:
        dev, healthy, rules, hrules, fresh, fresh_rules, folds = study_rows(args)
    finally:
        FRESH_BATCHES = saved
    pg = gates()

    def arbitrate(rows, answers, tau, confidences, nouns):
        out = []
        for r, f in zip(rows, answers):
            f = [dict(x) for x in f]
            if f and f[0]["confidence"] in confidences and f[0]["cause"] in DOMAIN_SWAP and f[0]["domain"] in ("gpu", "host"):
                p = posterior(folds[fold_of(r)], r["excerpt"])
                now = f[0]["domain"]
                other = "host" if now == "gpu" else "gpu"
                named = {d: holds_phrase(r["excerpt"], DOMAIN_NOUNS[d]) for d in ("gpu", "host")}
                against_words = nouns and named[now] and not named[other]
                if not against_words and p[other] / (p["gpu"] + p["host"]) > tau:
                    f[0]["domain"], f[0]["cause"] = other, DOMAIN_SWAP[f[0]["cause"]]
            out.append(f)
        return out

    def second(rows, answers):
        out = []
        for r, f in zip(rows, answers):
            if f and all(x["domain"] == "none" for x in f):
                g = estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg)
                out.append(list(f) + ([g] if g else []))
            elif not f:
                g = estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg)
                out.append([g] if g else [])
            else:
                out.append(list(f))
        return out

    def row(name, a, f, h=None):
        return (f"  {name:40s} A {a['cause']:4d} {a['domain']:4d} {a['no_finding']:3d} {a['fp']:3d}   "
                f"F {f['cause']:3d} {f['domain']:3d} {f['no_finding']:3d} {f['fp']:2d}" + ("" if h is None else f"   H {h}"))

    a0, f0 = score(dev, rules), score(fresh, fresh_rules)
    out = [f"explain learned layer, round 20: domain arbitration and a second finding, {FOLDS}-fold cross-validation by "
           f"thread. A: {len(dev)} development rows read by today's rules ({a0['memory_logs']} memory logs, "
           f"{a0['not_memory_logs']} not memory); F: {len(fresh)} fresh development rows of rounds 13-15 and 18-20 as the "
           f"engine before each round read them ({f0['memory_logs']} memory, {f0['not_memory_logs']} not); H: "
           f"{len(healthy)} healthy development rows. Columns: top cause right, domain right, memory logs without a "
           "finding, not-memory logs given a memory finding (H: healthy logs given a memory finding).",
           row("rules alone", a0, f0), "", "(1) domain arbitration of the rules' top finding by the model"]
    for confidences in (("low",), ("low", "medium")):
        for nouns in (True, False):
            for tau in (0.5, 0.8, 0.9, 0.99, 0.999):
                name = f"{'+'.join(confidences)}, nouns {'kept' if nouns else 'ignored'}, tau {tau:g}"
                out.append(row(name, score(dev, arbitrate(dev, rules, tau, confidences, nouns)),
                               score(fresh, arbitrate(fresh, fresh_rules, tau, confidences, nouns))))
    out += ["", "(2) the layer (shipped gates) where the rules give no finding (shipped), and also after not-memory findings"]
    shipped = [f if f else [g for g in [estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg)] if g]
               for r, f in zip(dev, rules)]
    shipped_f = [f if f else [g for g in [estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg)] if g]
                 for r, f in zip(fresh, fresh_rules)]
    hs = [f if f else [g for g in [estimate(folds[fold_of(r)], r["excerpt"], THRESHOLD, False, pg)] if g]
          for r, f in zip(healthy, hrules)]
    out.append(row("no finding only (shipped)", score(dev, shipped), score(fresh, shipped_f),
                   sum(1 for x in hs if any(y["domain"] != "none" for y in x))))
    out.append(row("also after not-memory findings", score(dev, second(dev, rules)), score(fresh, second(fresh, fresh_rules)),
                   sum(1 for x in second(healthy, hrules) if any(y["domain"] != "none" for y in x))))
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


# Round 27: where the rules' domain was not read from the log's words but chosen by the whole log's count or by the
# GPU default, may the model choose it instead? The rules' JSON says how a low family or last-layer finding chose
# its memory (undecided_because); BASIS maps those phrases to four kinds.
BASIS = [("default", ("most such logs are the GPU's", "the GPU by default")),
         ("log", ("the log's other lines",)),
         ("around", ("the lines around it",)),
         ("wording", ("its wording is usually",))]


def basis_of(finding):
    why = finding.get("why") or ""
    for name, phrases in BASIS:
        if any(p in why for p in phrases):
            return name
    return "line" if finding.get("confidence") != "low" else "other"


def study_undecided(args):
    """Round 27: the model arbitrates GPU vs host only where the rules' top finding chose its memory without the
    line's words: by the GPU default (no line names a memory), by the whole log's count, or (wider) by the lines
    around it, or every low finding (round 20's variant). 10-fold CV by thread: each row is read by the model of the
    other folds. A: all development rows read by today's rules; R: the rows from --fresh-from on (this round's fresh
    rows: read blind by the rules when the binary is the round's start engine). Also the fixed alternative: host
    instead of the GPU default."""
    dev = read_dev()
    healthy = read_healthy_dev()
    rules = rules_answers(args.oomguard, dev, args.rules, why=True)
    folds = {k: train([r for r in dev if fold_of(r) != k], [r for r in healthy if fold_of(r) != k], SHIPPED_CLASSES)
             for k in range(FOLDS)}
    fresh_idx = [i for i, r in enumerate(dev) if number(r["id"]) >= args.fresh_from]

    def arbitrate(bases, tau, nouns, fixed=None):
        out = []
        for r, f in zip(dev, rules):
            f = [dict(x) for x in f]
            if (f and f[0]["cause"] in DOMAIN_SWAP and f[0]["domain"] in ("gpu", "host")
                    and basis_of(f[0]) in bases):
                now = f[0]["domain"]
                other = "host" if now == "gpu" else "gpu"
                if fixed is not None:
                    swap = fixed != now
                else:
                    p = posterior(folds[fold_of(r)], r["excerpt"])
                    named = {d: holds_phrase(r["excerpt"], DOMAIN_NOUNS[d]) for d in ("gpu", "host")}
                    against_words = nouns and named[now] and not named[other]
                    swap = not against_words and p[other] / (p["gpu"] + p["host"]) > tau
                if swap:
                    f[0]["domain"], f[0]["cause"] = other, DOMAIN_SWAP[f[0]["cause"]]
            out.append(f)
        return out

    def row(name, got):
        a = score(dev, got)
        fr = score([dev[i] for i in fresh_idx], [got[i] for i in fresh_idx])
        changed = [i for i in range(len(dev)) if (got[i][:1] or [None])[0] != (rules[i][:1] or [None])[0]]
        better = sum(1 for i in changed if score([dev[i]], [got[i]])["domain"] > score([dev[i]], [rules[i]])["domain"])
        worse = sum(1 for i in changed if score([dev[i]], [got[i]])["domain"] < score([dev[i]], [rules[i]])["domain"])
        return (f"  {name:44s} A {a['cause']:4d} {a['domain']:4d} {a['no_finding']:3d} {a['fp']:3d}   "
                f"R {fr['cause']:3d} {fr['domain']:3d}   changed {len(changed):3d}: domain +{better} -{worse}")

    counts = {}
    for r, f in zip(dev, rules):
        if f and f[0]["cause"] in DOMAIN_SWAP and f[0]["domain"] in ("gpu", "host"):
            b = basis_of(f[0])
            ok = score([r], [f])["domain"]
            counts.setdefault(b, [0, 0])
            counts[b][0] += 1
            counts[b][1] += ok
    a0 = score(dev, rules)
    out = [f"explain learned layer, round 27: the model's say where the rules' memory was not read from the line, "
           f"{FOLDS}-fold cross-validation by thread. A: {len(dev)} development rows read by {args.oomguard} "
           f"({a0['memory_logs']} memory logs, {a0['not_memory_logs']} not memory); R: the {len(fresh_idx)} rows from "
           f"corpus-{args.fresh_from:04d} on. Columns: top cause right, domain right, memory logs without a finding, "
           "not-memory logs given a memory finding; rows whose top finding changed, and how many of them gained or "
           "lost the right domain.",
           "top findings that are a GPU/host OOM or growth, by how their memory was chosen (rows, domain right):"]
    out += [f"  {b:8s} {n:4d} {k:4d}" for b, (n, k) in sorted(counts.items())]
    out += ["", row("rules alone", rules),
            row("host instead of the GPU default (fixed)", arbitrate({"default"}, 0, False, fixed="host"))]
    for bases in (("default",), ("default", "log"), ("default", "log", "wording"), ("default", "log", "around"),
                  ("default", "log", "around", "wording", "other")):
        for nouns in (True, False):
            for tau in (0.5, 0.7, 0.9, 0.99):
                name = f"{'+'.join(bases)}, nouns {'kept' if nouns else 'ignored'}, tau {tau:g}"
                out.append(row(name, arbitrate(set(bases), tau, nouns)))
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    sys.stdout.write(text)


def weights_text(through):
    dev = [r for r in read_dev() if number(r["id"]) <= through]
    healthy = read_healthy_dev()
    model = train(dev, healthy, SHIPPED_CLASSES)
    prose = prose_phrases(dev, healthy, PROSE_MIN_MEMORY, PROSE_PRECISION)
    data = {
        "what": "oomguard explain's learned last layer: binarised multinomial naive Bayes over normalised tokens "
                "(tools/explain_learned_layer.py train); used only on logs the rules leave without any finding; "
                "P(not memory) = P(none) + P(healthy)",
        "trained_on": f"tests/data/explain/corpus_dev.jsonl through corpus-{through:04d} ({len(dev)} rows) and the "
                      f"development part of tests/data/explain/corpus_healthy.jsonl ({len(healthy)} rows)",
        "through": f"corpus-{through:04d}",
        "classes": list(SHIPPED_CLASSES),
        "threshold_not_memory": THRESHOLD,
        "gates": [{"name": name, "threshold_not_memory": t, "needs_failure_word": needs, "phrases": phrases}
                  for name, (phrases, t, needs) in zip(GATE_NAMES, gates(prose=prose))],
        "drop_zero_count_lines": DROP_ZERO_COUNT_LINES,
        "erase_avoided_oom": ERASE_AVOIDED_OOM,
        "failure_words": sorted(FAILURE_WORDS),
        "failure_suffixes": list(FAILURE_SUFFIXES),
        "domain_nouns": DOMAIN_NOUNS,
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
    def study(name, func):
        g = sub.add_parser(name)
        g.add_argument("--oomguard", default=OOMGUARD, help="the binary whose rules are measured (before this layer)")
        g.add_argument("--rules", help="cache of the rules' answers on the development rows (JSON), written when missing")
        g.add_argument("--healthy-rules", help="the same for the healthy development rows")
        g.add_argument("--out")
        g.set_defaults(func=func)
        return g

    study("gates", study_gates)
    study("prose", study_prose).add_argument(
        "--zero", help="MIN,PRECISION,THRESHOLD: the prose gate's settings; then study the zero-count lines and the "
        "vocabulary's threshold instead")
    study("domain", study_domain)
    study("undecided", study_undecided).add_argument(
        "--fresh-from", type=int, default=2464, help="first development row of R (this round's fresh rows)")

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
