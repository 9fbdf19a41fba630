#!/usr/bin/python3
"""Checks the relative links of the README and the docs pages.

Every Markdown link or image `[text](target)` in README.md and docs/*.md whose target is not a URL
(http:, https:, mailto:) must name a file or folder that exists, relative to the page it stands in.
With --anchors, a `#fragment` must also be a heading of the page it names (GitHub's heading ids:
lower case, punctuation but `-` and `_` dropped, spaces as `-`, repeats numbered `-1`, `-2`, ...).
Links inside fenced code blocks and `inline code` are not links and are passed over.

    /usr/bin/python3 tools/check_links.py [--anchors] [--root DIR] [FILE.md ...]
        FILEs default to README.md and docs/*.md under the root (default: this repository)
    /usr/bin/python3 tools/check_links.py --self-test [--anchors]
        the checker on a small tree of its own (each kind of broken link found, code and URLs passed over);
        with --anchors or FILEs, then the check itself (the ctest docs_links_resolve runs both)
Exit status: 0 when every link resolves; 1 when one does not (each printed as FILE:LINE: target);
2 on bad usage or a page that cannot be read.
"""
import argparse
import glob
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The target of [text](target) or ![alt](target), nested ones too ([![img](a)](b) has two).
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def lines_outside_code(text):
    """(line number, line with inline code blanked) for each line outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's id for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    """The heading ids of a Markdown page."""
    if path not in _anchor_cache:
        ids, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fenced = False
        for line in text.split("\n"):
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                ids.add(base if k == 0 else f"{base}-{k}")
        _anchor_cache[path] = ids
    return _anchor_cache[path]


def check(page, check_anchors):
    """[(line, target, why)] of the page's links that do not resolve."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    bad = []
    for n, line in lines_outside_code(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto: ...
                continue
            path, _, fragment = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(dest):
                bad.append((n, target, "no such file"))
            elif check_anchors and fragment and dest.endswith(".md") and os.path.isfile(dest):
                if fragment not in anchors(dest):
                    bad.append((n, target, "no such heading"))
    return bad


def self_test():
    """0 when the checker finds exactly the broken links of a small tree it writes."""
    readme = "\n".join([
        "# Title",
        "## A heading (with `code`, 3\u201314)",
        "## A heading (with `code`, 3\u201314)",
        "[ok](docs/page.md) [ok](docs/page.md#a-page) [ok](#a-heading-with-code-314-1) [ok](https://x.org/nope)",
        "[![ok](docs/img.png)](docs/page.md) [bad](docs/missing.md) [bad](docs/page.md#no-such)",
        "`[not a link](nope)` and [![bad](docs/missing.png)](docs/img.png)",
        "```",
        "[not a link](nope2)",
        "```",
        "[bad](#a-heading-with-code-314-2)",
    ])
    page = "# A page\n[ok](../README.md#title) [ok](../data/) [bad](../data/x.json)\n"
    want = {("README.md", 5, "docs/missing.md", "no such file"),
            ("README.md", 5, "docs/page.md#no-such", "no such heading"),
            ("README.md", 6, "docs/missing.png", "no such file"),
            ("README.md", 10, "#a-heading-with-code-314-2", "no such heading"),
            ("docs/page.md", 2, "../data/x.json", "no such file")}
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "data"))
        for name, text in (("README.md", readme), ("docs/page.md", page), ("docs/img.png", "")):
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        got = {(name, n, target, why)
               for name in ("README.md", "docs/page.md")
               for n, target, why in check(os.path.join(root, name), True)}
        without_anchors = {t for name in ("README.md", "docs/page.md")
                           for _, t, _ in check(os.path.join(root, name), False)}
    ok = got == want and without_anchors == {"docs/missing.md", "docs/missing.png", "../data/x.json"}
    if not ok:
        print(f"self-test FAILED: found {sorted(got)}, want {sorted(want)}; "
              f"without anchors {sorted(without_anchors)}", file=sys.stderr)
        return 1
    print(f"self-test passed: {len(want)} broken links found, none else")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="Markdown pages (default: README.md and docs/*.md)")
    ap.add_argument("--root", default=ROOT, help="the repository (default: this one)")
    ap.add_argument("--anchors", action="store_true", help="also check #fragments against headings")
    ap.add_argument("--self-test", action="store_true", help="check the checker on a tree of its own")
    args = ap.parse_args(argv)
    if args.self_test:
        rc = self_test()
        if rc or not (args.anchors or args.files):
            return rc
    pages = args.files or [os.path.join(args.root, "README.md")] + sorted(
        glob.glob(os.path.join(args.root, "docs", "*.md")))
    failures = 0
    for page in pages:
        try:
            bad = check(page, args.anchors)
        except OSError as e:
            print(f"check_links.py: cannot read {page}: {e.strerror}", file=sys.stderr)
            return 2
        for n, target, why in bad:
            print(f"{os.path.relpath(page, args.root)}:{n}: {target} ({why})")
        failures += len(bad)
    if failures:
        print(f"{failures} broken link(s) in {len(pages)} page(s)", file=sys.stderr)
        return 1
    print(f"all relative links resolve in {len(pages)} page(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
