#!/usr/bin/env bash
# Scenario benchmark: simulates the whole Venus trace with each policy through the
# real CLI, pinned to one core, and reports the simulator's own wall time (from
# summary.json), the process's total time and its peak memory.
# Usage: bench/scenario.sh [POLICY...]   (default: every registered policy)
set -euo pipefail
cd "$(dirname "$0")/.."
trace=../shared/traces/venus-sept/venus_sept_23859_jobs.csv
[ -f "$trace" ] || { echo "scenario: $trace not found; nothing to measure"; exit 0; }
bin=build/bin/deepshare
[ -x "$bin" ] || bash scripts/build.sh
policies=("$@")
[ ${#policies[@]} -gt 0 ] || mapfile -t policies < <("$bin" policies | awk '{print $1}')
out=$(mktemp -d)
printf '| policy | simulate+metrics wall (s) | process total (s) | peak RSS (MiB) |\n|---|---|---|---|\n'
for p in "${policies[@]}"; do
  best=""
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$out/time" taskset -c 0 "$bin" simulate --quiet --trace "$trace" \
      --format venus --policy "$p" --out "$out/$p" >/dev/null
    wall=$(grep -o '"wall_seconds": [0-9.e-]*' "$out/$p/summary.json" | awk '{print $2}')
    read -r total rss < "$out/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; btotal=$total; brss=$rss; fi
  done
  printf '| %s | %s | %s | %.0f |\n' "$p" "$best" "$btotal" "$(awk "BEGIN{print $brss/1024}")"
done
rm -rf "$out"
