#!/usr/bin/env python3
"""Validate the explain corpus (tests/data/explain/corpus_dev.jsonl and corpus_heldout.jsonl).

Checks: one JSON object a line with exactly the schema's fields; `cause` and `accept` from the explain
vocabulary in docs/DESIGN.md; `accept` contains `cause`; `domain` is gpu, host or null; `year` in
2016..2026; `split` matches the file and the fixed split rule (a hash of the source URL); no source URL in
both parts; no source already used by the older sets (explain_dev.jsonl, explain_more.jsonl); no
duplicate excerpt or id. Prints counts with --summary. Exit 0 when clean, 1 on a violation, 2 on bad usage.

Usage: tools/check_corpus.py [--summary] [--dir DIR] [--design PATH]
       tools/check_corpus.py --self-test   (checks that each kind of violation is caught)
"""
import argparse
import collections
import hashlib
import json
import os
import re
import sys

FIELDS = {"id", "framework", "source", "excerpt", "cause", "accept", "domain", "fix", "year", "split"}
HELDOUT_PERCENT = 33


def split_of(source):
    """The fixed split rule, decided before any labelling: a hash of the thread URL."""
    h = int(hashlib.sha256(source.strip().encode("utf-8")).hexdigest()[:8], 16)
    return "heldout" if h % 100 < HELDOUT_PERCENT else "dev"


def vocabulary(design_path):
    text = open(design_path, encoding="utf-8").read()
    m = re.search(r"CLASS is one of:(.*?)\.\s*\n", text, re.S)
    if not m:
        raise ValueError("no 'CLASS is one of:' list in " + design_path)
    return {w.strip() for w in m.group(1).replace("\n", " ").split(",") if w.strip()}


def norm(text):
    return " ".join(text.split())


def self_test(design):
    """Writes small corpora with one violation each and checks the validator rejects them."""
    import subprocess
    import tempfile
    dev_src = next("https://github.com/example/repo/issues/%d" % i for i in range(1000)
                   if split_of("https://github.com/example/repo/issues/%d" % i) == "dev")
    held_src = next("https://github.com/example/repo/issues/%d" % i for i in range(1000)
                    if split_of("https://github.com/example/repo/issues/%d" % i) == "heldout")

    def row(i, src, split, **kw):
        r = {"id": "t-%d" % i, "framework": "pytorch", "source": src, "excerpt": "line %d" % i,
             "cause": "gpu_device_oom", "accept": ["gpu_device_oom"], "domain": "gpu",
             "fix": "smaller batch", "year": 2020, "split": split}
        r.update(kw)
        return r

    good = ([row(1, dev_src, "dev")], [row(2, held_src, "heldout")])
    cases = {
        "clean": (good, 0),
        "unknown cause": (([row(1, dev_src, "dev", cause="oom")], good[1]), 1),
        "accept without cause": (([row(1, dev_src, "dev", accept=["fragmentation"])], good[1]), 1),
        "bad domain": (([row(1, dev_src, "dev", domain="cpu")], good[1]), 1),
        "not_memory with a domain": (([row(1, dev_src, "dev", cause="not_memory", accept=["not_memory"])], good[1]), 1),
        "year out of range": (([row(1, dev_src, "dev", year=2015)], good[1]), 1),
        "missing field": (([{k: v for k, v in row(1, dev_src, "dev").items() if k != "fix"}], good[1]), 1),
        "wrong split rule": (([row(1, held_src, "dev")], good[1]), 1),
        "url in both parts": ((good[0] + [row(3, held_src, "dev")], good[1]), 1),
        "duplicate excerpt": ((good[0], good[1] + [row(4, held_src, "heldout", excerpt="line  1")]), 1),
        "duplicate id": ((good[0], [row(1, held_src, "heldout")]), 1),
    }
    failed = 0
    for name, ((dev, held), want) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for split, rows in (("dev", dev), ("heldout", held)):
                with open(os.path.join(d, "corpus_%s.jsonl" % split), "w", encoding="utf-8") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
            rc = subprocess.run([sys.executable, os.path.abspath(__file__), "--dir", d, "--design", design],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        ok = (rc == 0) == (want == 0)
        failed += not ok
        print("%s: %s (exit %d)" % ("ok" if ok else "FAIL", name, rc))
    return 1 if failed else 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--dir", default=os.path.join(root, "tests", "data", "explain"))
    ap.add_argument("--design", default=os.path.join(root, "docs", "DESIGN.md"))
    args = ap.parse_args()
    try:
        vocab = vocabulary(args.design)
    except (OSError, ValueError) as e:
        print("check_corpus: " + str(e), file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(args.design)

    errors = []
    older = set()
    for name in ("explain_dev.jsonl", "explain_more.jsonl"):
        path = os.path.join(args.dir, name)
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                if line.strip():
                    older.add(json.loads(line)["source"])

    rows = []
    for split in ("dev", "heldout"):
        path = os.path.join(args.dir, "corpus_%s.jsonl" % split)
        if not os.path.exists(path):
            errors.append("%s: missing" % path)
            continue
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            where = "%s:%d" % (os.path.basename(path), n)
            if not line.strip():
                errors.append(where + ": empty line")
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append("%s: not JSON (%s)" % (where, e))
                continue
            if not isinstance(r, dict) or set(r) != FIELDS:
                errors.append("%s: fields %s, want %s" % (where, sorted(r) if isinstance(r, dict) else type(r).__name__, sorted(FIELDS)))
                continue
            for k in ("id", "framework", "source", "excerpt", "cause", "fix", "split"):
                if not isinstance(r[k], str) or not r[k].strip():
                    errors.append("%s: %s must be a non-empty string" % (where, k))
            if errors and errors[-1].startswith(where):
                continue
            if r["cause"] not in vocab:
                errors.append("%s: cause %r not in the vocabulary" % (where, r["cause"]))
            if (not isinstance(r["accept"], list) or not r["accept"]
                    or any(a not in vocab for a in r["accept"]) or r["cause"] not in r["accept"]
                    or len(set(r["accept"])) != len(r["accept"])):
                errors.append("%s: accept %r must list distinct vocabulary classes including the cause" % (where, r["accept"]))
            if r["domain"] not in ("gpu", "host", None):
                errors.append("%s: domain %r not gpu, host or null" % (where, r["domain"]))
            elif r["cause"] == "not_memory" and r["domain"] is not None:
                errors.append("%s: a not_memory row has no memory domain (null), not %r" % (where, r["domain"]))
            if not isinstance(r["year"], int) or isinstance(r["year"], bool) or not 2016 <= r["year"] <= 2026:
                errors.append("%s: year %r not in 2016..2026" % (where, r["year"]))
            if not re.match(r"^https://\S+$", r["source"]):
                errors.append("%s: source %r is not a URL" % (where, r["source"]))
            if r["split"] != split:
                errors.append("%s: split %r in the %s file" % (where, r["split"], split))
            if split_of(r["source"]) != split:
                errors.append("%s: source %s belongs to %s by the split rule" % (where, r["source"], split_of(r["source"])))
            if r["source"] in older:
                errors.append("%s: source %s is already in explain_dev/explain_more" % (where, r["source"]))
            rows.append((where, r))

    by_id = collections.defaultdict(list)
    by_excerpt = collections.defaultdict(list)
    by_source = collections.defaultdict(set)
    for where, r in rows:
        by_id[r["id"]].append(where)
        by_excerpt[norm(r["excerpt"])].append(where)
        by_source[r["source"]].add(r["split"])
    for k, v in by_id.items():
        if len(v) > 1:
            errors.append("duplicate id %s: %s" % (k, ", ".join(v)))
    for k, v in by_excerpt.items():
        if len(v) > 1:
            errors.append("duplicate excerpt: %s" % ", ".join(v))
    for k, v in by_source.items():
        if len(v) > 1:
            errors.append("source in both parts: %s" % k)

    for e in errors:
        print("check_corpus: " + e, file=sys.stderr)
    if args.summary:
        for split in ("dev", "heldout"):
            part = [r for _, r in rows if r["split"] == split]
            print("%s: %d rows, %d threads" % (split, len(part), len({r["source"] for r in part})))
        for key in ("cause", "framework", "year", "domain"):
            c = collections.Counter()
            for _, r in rows:
                c[(r[key], r["split"])] += 1
            print("\nby %s (dev / heldout):" % key)
            for v in sorted({k[0] for k in c}, key=lambda x: (str(type(x)), str(x))):
                print("  %-28s %4d %4d" % (v, c[(v, "dev")], c[(v, "heldout")]))
    print("check_corpus: %d rows, %d violations" % (len(rows), len(errors)), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
