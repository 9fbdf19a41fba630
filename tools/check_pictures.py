#!/usr/bin/python3
"""Structure checks of the pictures oomguard draws, with real parsers (a ctest test; no torch needed).

    check_pictures.py --oomguard build/oomguard [--keep DIR]

Makes the plan page (a step that fits and one that does not), the fit and split pages and a watch plot of a short run that grows its memory, parses the SVG with
xml.etree and the HTML with html.parser, and asserts what a reader needs: ticks on every axis, the capacity and
the largest batch marked, the verdict first, the what-ifs present, the watch prediction drawn inside its plot at
true scale, all-zero series left out. Exits 1 with one line per failed check.
"""
import argparse
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


class Page(html.parser.HTMLParser):
    """Collects the page's text, classes in order, the elements of <body> in order (tag, attributes), and its
    inline SVG documents."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.classes, self.svgs, self.body = [], [], [], []
        self._svg_depth, self._svg, self._in_body = 0, [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self._in_body = True
        elif self._in_body and not self._svg_depth:
            self.body.append((tag, a))
        if "class" in a:
            self.classes.append(a["class"])
        if tag == "svg":
            self._svg_depth += 1
        if self._svg_depth:
            attr = "".join(' %s="%s"' % (k, (v or "").replace("&", "&amp;").replace('"', "&quot;")
                                          .replace("<", "&lt;")) for k, v in attrs)
            self._svg.append("<%s%s>" % (tag, attr))

    def handle_endtag(self, tag):
        if self._svg_depth:
            self._svg.append("</%s>" % tag)
        if tag == "svg":
            self._svg_depth -= 1
            if self._svg_depth == 0:
                self.svgs.append(ET.fromstring("".join(self._svg)))
                self._svg = []

    def handle_data(self, data):
        self.text.append(data)
        if self._svg_depth:
            self._svg.append(data.replace("&", "&amp;").replace("<", "&lt;"))


def parse_page(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def by_class(root, cls):
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def make_page(exe, d, name, args, codes=(0,)):
    """Runs `oomguard ARGS --html d/NAME` and parses the page; None (a failure noted) when it was not written."""
    path = os.path.join(d, name)
    r = run([exe] + args + ["--html", path])
    if not check(r.returncode in codes and os.path.exists(path),
                 "%s --html %s: exit %d: %s" % (args[0], name, r.returncode, r.stderr.strip())):
        return None
    return parse_page(path)


def check_fit(exe, d):
    page = make_page(exe, d, "fit.html", ["fit", "resnet50", "--gpu", "rtx-3090"])
    if page is None:
        return
    check(len(page.svgs) == 1, "fit page: one chart")
    svg = page.svgs[0]
    check(len(by_class(svg, "xtick")) >= 3, "fit chart: x ticks")
    check(len(by_class(svg, "ytick")) >= 3, "fit chart: y ticks")
    check(len(by_class(svg, "capacity")) == 1, "fit chart: the capacity line")
    check(len(by_class(svg, "chosen")) == 1, "fit chart: the largest batch marked")


def classes_of(attrs):
    return (attrs.get("class") or "").split()


def check_plan(exe, d, name, batch, fits):
    """The plan page, answer first, for a step that fits (fits=True) or does not."""
    path = os.path.join(d, name)
    args = ["plan", "resnet50", "--batch", str(batch), "--gpu", "rtx-3090"]
    page = make_page(exe, d, name, args, (0 if fits else 1,))
    if page is None:
        return
    j = json.loads(run([exe] + args + ["--json"]).stdout)
    check(j["fits"] is fits, "plan --json: fits is %s for batch %d" % (fits, batch))
    what = "plan page (%s): " % name
    # The verdict is the first thing in the body and says red or green.
    if check(bool(page.body), what + "a body"):
        tag, attrs = page.body[0]
        cls = classes_of(attrs)
        check(attrs.get("id") == "verdict" and "verdict" in cls,
              what + "the verdict comes first (found <%s %s>)" % (tag, attrs))
        check(("fits" if fits else "does-not-fit") in cls, what + "the verdict's class is %s (%s)"
              % ("fits" if fits else "does-not-fit", cls))
        check(int(attrs.get("data-required-bytes", -1)) == j["required_bytes"],
              what + "the verdict's bytes are plan --json's required_bytes")
    text = " ".join(page.text)
    check(("to spare" in text) if fits else ("short by" in text), what + "the headroom or the shortfall is stated")
    check("%" in text, what + "the headroom or shortfall in %")
    if not fits:
        css = open(path, encoding="utf-8").read()
        m = re.search(r"\.does-not-fit\{([^}]*)\}", css)
        check(m is not None and re.search(r"background:#f[0-9a-f]{2}[0-9a-f]{3}", m.group(1)) is not None
              and re.search(r"border-color:#[c-f][0-9a-f]2", m.group(1)) is not None,
              what + "does-not-fit is drawn red (%s)" % (m.group(1) if m else "no rule"))
    # The what-ifs: rows, as many as plan --json's advice.
    rows = [a for t, a in page.body if t == "tr" and "whatif" in classes_of(a)]
    check(len(rows) >= 1 and len(rows) == len(j["advice"]),
          what + "a what-if row per advice item (%d rows, %d items)" % (len(rows), len(j["advice"])))
    check([a.get("data-action") for a in rows] == [a["action"] for a in j["advice"]],
          what + "the what-ifs in the ranked order of plan's advice")
    # The batch curve and the timeline, in that order after the verdict.
    if not check(len(page.svgs) == 2, what + "two pictures (curve, timeline), found %d" % len(page.svgs)):
        return
    curve, timeline = page.svgs
    check(len(by_class(curve, "xtick")) >= 3, what + "curve: x ticks")
    check(len(by_class(curve, "ytick")) >= 3, what + "curve: y ticks")
    check(len(by_class(curve, "capacity")) == 1, what + "curve: the capacity line")
    check(len(by_class(curve, "max-batch")) == 1, what + "curve: the largest batch marked (no margin)")
    check(len(by_class(curve, "max-batch-margin")) == 1, what + "curve: the largest batch with fit's margin marked")
    check("margin" in text and "oomguard fit" in text, what + "the margin is explained")
    fig = [a for t, a in page.body if t == "figure" and "timeline" in classes_of(a)]
    want = j["peak_allocated_bytes"]
    # On --target cuda the plan's peak adds the caching allocator's block rounding to the timeline's tensor
    # bytes: within 2 %, never above. On cpu they are equal.
    def agrees(v):
        return v == want if j.get("target") == "cpu" else 0.98 * want <= v <= want
    peak_bytes = None
    if check(len(fig) == 1, what + "one timeline figure"):
        peak_bytes = int(fig[0].get("data-peak-bytes", -1))
        check(agrees(peak_bytes), what + "timeline: its peak (%s) is plan --json's peak_allocated_bytes (%d)"
              % (peak_bytes, want))
        check(fig[0].get("data-peak-phase") == j["peak_phase"], what + "timeline: the peak's phase is plan's")
    marker = by_class(timeline, "peak-marker")
    if check(len(marker) == 1, what + "timeline: the peak marked"):
        title = marker[0].find(SVG + "title").text
        check(peak_bytes is not None and "(%d bytes)" % peak_bytes in title,
              what + "timeline: the peak's title has its bytes")
        check(" at layer " in title, what + "timeline: the peak names its layer")
    check(len(by_class(timeline, "layer")) >= 3, what + "timeline: stacked categories")
    check(len(by_class(timeline, "ytick")) >= 3, what + "timeline: y ticks")
    check(len(by_class(timeline, "oom-point")) == (0 if fits else 1),
          what + "timeline: where it runs out is marked only when it does not fit")


def check_plan_without_device(exe, d):
    """No --gpu/--memory: no verdict to colour, no what-ifs, no largest batch; the curve and timeline still drawn."""
    page = make_page(exe, d, "plan-no-device.html", ["plan", "resnet18", "--batch", "8"])
    if page is None:
        return
    what = "plan page without a device: "
    check(bool(page.body) and "unknown" in classes_of(page.body[0][1]), what + "the verdict says unknown")
    check(not [a for t, a in page.body if t == "tr" and "whatif" in classes_of(a)], what + "no what-ifs")
    if check(len(page.svgs) == 2, what + "the curve and the timeline"):
        check(not by_class(page.svgs[0], "capacity") and not by_class(page.svgs[0], "max-batch"),
              what + "no capacity line, no largest batch")
        check(len(by_class(page.svgs[1], "peak-marker")) == 1, what + "the timeline's peak")


def check_split(exe, d):
    path = os.path.join(d, "split.html")
    r = run([exe, "split", "resnet50", "--global-batch", "96", "--gpu-memory", "11GiB,11GiB,24GiB", "--html", path])
    if not check(r.returncode in (0, 1) and os.path.exists(path), "split --html failed: " + r.stderr.strip()):
        return
    svg = parse_page(path).svgs[0]
    check(len(by_class(svg, "part")) == 15, "split chart: 5 parts for each of 3 GPUs")
    check(len(by_class(svg, "budget")) == 3, "split chart: a budget per GPU")
    check(len(by_class(svg, "ytick")) >= 3, "split chart: y ticks")


def check_watch(exe, d):
    path = os.path.join(d, "watch.svg")
    grow = ("import time\nkeep = []\nt0 = time.time()\n"
            "while time.time() - t0 < 2.5:\n    keep.append(bytearray(4 << 20)); time.sleep(0.05)\n")
    r = run([exe, "watch", "--interval", "0.1", "--host-limit", "4GiB", "--json", "--plot", path, "--",
             sys.executable, "-c", grow])
    if not check(r.returncode == 0 and os.path.exists(path), "watch --plot failed: " + r.stderr.strip()[-300:]):
        return
    summary = json.loads(r.stdout)
    root = ET.parse(path).getroot()
    titles = [t.text for t in root.iter(SVG + "title")]
    check("gpu" not in titles, "watch plot: the all-zero GPU series is hidden")
    check(any(t and t.startswith("host") for t in titles), "watch plot: the host series is drawn")
    panels = [g for g in root.iter(SVG + "g") if g.get("class") == "panel"]
    predicted = summary.get("predicted_seconds_to_limit")
    if predicted is None:
        check(not panels, "watch plot: no projection panel without a prediction")
        return
    if not check(len(panels) == 2, "watch plot: a measured panel and a projection panel"):
        return
    proj = panels[1].find(SVG + "svg")
    area = by_class(proj, "plot-area")[0]
    x0, w = float(area.get("x")), float(area.get("width"))
    dot = by_class(proj, "prediction-end")
    if check(len(dot) == 1, "watch plot: the predicted crossing is marked"):
        cx = float(dot[0].get("cx"))
        check(x0 < cx <= x0 + w, "watch plot: the predicted crossing lies inside the plot box (cx %.1f)" % cx)
    ticks = [float(re.sub(r"[^0-9.]", "", t.text)) for t in by_class(proj, "xtick")]
    check(bool(ticks) and max(ticks) >= predicted * 0.99,
          "watch plot: the time axis reaches the predicted time (%s < %.1f)" % (max(ticks or [0]), predicted))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oomguard", required=True)
    ap.add_argument("--keep", help="write the pictures here instead of a temporary folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or tmp
        os.makedirs(d, exist_ok=True)
        checks = [lambda exe, d: check_plan(exe, d, "plan-fits.html", 128, True),
                  lambda exe, d: check_plan(exe, d, "plan-does-not-fit.html", 384, False),
                  check_plan_without_device,
                  check_fit, check_split, check_watch]
        for fn in checks:
            try:
                fn(args.oomguard, d)
            except Exception as e:  # noqa: BLE001 — a crash of one check is a failure, the others still run
                failures.append("%s raised %s: %s" % (getattr(fn, "__name__", "check"), type(e).__name__, e))
    for f in failures:
        print("FAIL " + f)
    print("%d failed" % len(failures) if failures else "pictures: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
