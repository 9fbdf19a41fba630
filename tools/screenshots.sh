#!/bin/bash
# Screenshots of the pictures oomguard draws, for the README (not part of make test).
#
#   tools/screenshots.sh [--oomguard build/oomguard] [--out docs/img]
#
# Needs Debian's chromium (OOMGUARD_SCREENSHOTS=1 scripts/install-deps.sh). Draws the plan page for a step that
# fits and one that does not, the fit page, the split page and the watch plot of a short run that grows its host
# memory, then photographs each with headless chromium at a fixed window size. Look at every PNG after a change:
# a newcomer who sees only the picture should be able to tell whether it fits, what to change and when it dies.
set -euo pipefail

exe=build/oomguard
out=docs/img
while [ $# -gt 0 ]; do
  case "$1" in
    --oomguard) exe=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "screenshots.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "screenshots.sh: chromium not found; install it with OOMGUARD_SCREENSHOTS=1 scripts/install-deps.sh" >&2
  exit 2
fi
[ -x "$exe" ] || { echo "screenshots.sh: $exe is not built (cmake --build build --target oomguard)" >&2; exit 2; }
python=/usr/bin/python3
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shot NAME FILE WIDTH HEIGHT: FILE (html or svg) photographed into $out/NAME.png.
shot() {
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --user-data-dir="$work/profile" --window-size="$3,$4" --screenshot="$out/$1.png" "file://$(realpath "$2")" \
    >"$work/chromium.log" 2>&1 || { cat "$work/chromium.log" >&2; exit 1; }
  echo "$out/$1.png"
}

# A step that fits and one that does not (plan exits 1 for "does not fit").
"$exe" plan resnet50 --batch 128 --gpu rtx-3090 --html "$work/plan-fits.html" >/dev/null
"$exe" plan resnet50 --batch 384 --gpu rtx-3090 --html "$work/plan-does-not-fit.html" >/dev/null || [ $? = 1 ]
"$exe" fit resnet50 --gpu rtx-3090 --html "$work/fit.html" >/dev/null
"$exe" split resnet50 --global-batch 96 --gpu-memory 11GiB,11GiB,24GiB --html "$work/split.html" >/dev/null || [ $? = 1 ]
# A run that grows its memory by 4 MiB every 50 ms for 4 s, watched against a 4 GiB host limit.
grow='import time
keep = []
t0 = time.time()
while time.time() - t0 < 4:
    keep.append(bytearray(4 << 20)); time.sleep(0.05)'
"$exe" watch --interval 0.1 --host-limit 4GiB --plot "$work/watch.svg" -- "$python" -c "$grow" >/dev/null

shot plan-fits "$work/plan-fits.html" 1000 1900
shot plan-does-not-fit "$work/plan-does-not-fit.html" 1000 1900
shot fit "$work/fit.html" 1000 620
shot split "$work/split.html" 1000 620
shot watch "$work/watch.svg" 900 700
