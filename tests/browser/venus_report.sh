#!/usr/bin/env bash
# The Venus comparison's report in the browser: runs `deepshare compare` with the main
# policies on the Venus trace (skips, exit 77, when the trace or chromium is absent),
# then report_test.mjs on OUT/report.html with every chart required.
# Usage: venus_report.sh DEEPSHARE_BIN TRACE OUT SCREENSHOT
set -euo pipefail
bin=$1 trace=$2 out=$3 shot=$4
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -f "$trace" ]; then
  echo "SKIP: $trace not found (../shared/traces is research data beside the project)"
  exit 77
fi
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "SKIP: chromium not found (install it with bash scripts/setup.sh)"
  exit 77
fi
rm -rf "$out"
"$bin" compare --trace "$trace" --out "$out" --quiet | tail -n 1
test -f "$out/report.html"
exec node "$here/report_test.mjs" "$out/report.html" "$shot"
