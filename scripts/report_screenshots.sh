#!/usr/bin/env bash
# PNG screenshots of the figures of a `kevo report --html` page, for the docs: each figure's inline
# SVG is put alone on a page of its size and shot with headless chromium (Debian's `chromium`).
# Usage: scripts/report_screenshots.sh REPORT.html OUTDIR
# Writes OUTDIR/<figure id>.png (fig-best-so-far-<task>, fig-generalisation, fig-verdict-mix,
# fig-repairs, fig-variance where it is drawn) and OUTDIR/page.png (the top of the whole page). Each chromium run is
# bounded (60 s) and runs in its own process group, which is killed afterwards.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 REPORT.html OUTDIR" >&2; exit 2; fi
REPORT="$(realpath "$1")"
OUT="$2"
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then echo "$0: chromium is not installed (Debian: apt-get install chromium)" >&2; exit 2; fi
mkdir -p "$OUT"
OUT="$(realpath "$OUT")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# shot PAGE PNG WIDTH HEIGHT
shot() {
    setsid timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$WORK/profile" --window-size="$3,$4" --screenshot="$2" "file://$1" \
        > "$WORK/chromium.log" 2>&1 &
    local pid=$!
    wait "$pid" || { echo "$0: chromium failed on $1 (log: $WORK/chromium.log)" >&2; cat "$WORK/chromium.log" >&2; }
    kill -KILL -- "-$pid" 2>/dev/null || true
}

# One page per figure: its <svg> alone, at the size the svg declares.
python3 - "$REPORT" "$WORK" > "$WORK/figures.txt" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
for m in re.finditer(r'<figure id="([A-Za-z0-9_.-]+)">\s*(<svg class="figure".*?</svg>)', page, re.S):
    fid, svg = m.group(1), m.group(2)
    size = re.search(r'width="([0-9.]+)" height="([0-9.]+)"', svg)
    w, h = int(float(size.group(1))), int(float(size.group(2)))
    with open(f"{sys.argv[2]}/{fid}.html", "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>'
                + svg + '</body></html>\n')
    print(fid, w, h)
PY
while read -r fid w h; do
    shot "$WORK/$fid.html" "$OUT/$fid.png" "$w" "$h"
    echo "$OUT/$fid.png"
done < "$WORK/figures.txt"
shot "$REPORT" "$OUT/page.png" 1200 1600
echo "$OUT/page.png"
