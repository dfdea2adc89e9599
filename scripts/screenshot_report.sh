#!/usr/bin/env bash
# Screenshots a run's report page in a real browser (headless Chromium), to
# check by eye that it renders without JavaScript or network access.
#
# Usage: scripts/screenshot_report.sh OUT_DIR [PNG]
#   OUT_DIR  output folder of `pipeline run` (holds report.html)
#   PNG      screenshot to write (default: OUT_DIR/report.png)
# Env: CHROMIUM (browser binary; default: the first of chromium,
#      chromium-headless-shell, chromium-browser, google-chrome on PATH),
#      WINDOW (default: 1400,3000).
#
# The browser gets a throw-away profile and every background network feature
# switched off, so the page is rendered exactly as an offline reader sees it.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 OUT_DIR [PNG]" >&2
  exit 2
fi
out_dir=$1
report="$out_dir/report.html"
if [[ ! -f "$report" ]]; then
  echo "error: $report not found; run \`pipeline run --out $out_dir\` or \`pipeline report --out $out_dir\` first" >&2
  exit 2
fi
png=$(realpath -m "${2:-$out_dir/report.png}")
page="file://$(realpath "$report")"
# Debian packages the browser as `chromium` and the headless one alone as
# `chromium-headless-shell`; other systems name it otherwise.
if [[ -n "${CHROMIUM:-}" ]]; then
  candidates=("$CHROMIUM")
else
  candidates=(chromium chromium-headless-shell chromium-browser google-chrome)
fi
browser=
for candidate in "${candidates[@]}"; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$(command -v "$candidate")
    break
  fi
done
if [[ -z "$browser" ]]; then
  echo "error: no browser found (looked for: ${candidates[*]}); install one, e.g. on Debian or Ubuntu" \
    "\`apt-get install chromium-headless-shell\` (or chromium), or give its path in CHROMIUM" >&2
  exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size="${WINDOW:-1400,3000}" \
  --hide-scrollbars --screenshot="$png" "$page" >/dev/null 2>&1

if [[ ! -s "$png" ]]; then
  echo "error: $browser wrote no screenshot to $png" >&2
  exit 1
fi
echo "$png"
