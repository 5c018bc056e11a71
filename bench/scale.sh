#!/usr/bin/env bash
# Scale benchmark (issue #14, docs/performance.md "Scale"): Venus tiled K times side by side
# (K copies of the 15 tenants with their own nodes and users, each copy's arrivals shifted by
# a seeded jitter of 0-600 s; tools/tile_trace.cpp, src/trace/tile.hpp) for K = 1, 4, 15, 42,
# and the 3-month run (K = 15, the 26-day trace repeated 3 times, 30 days apart: 1.07 M jobs
# on 16,200 GPUs). Every registered policy (or those named) simulates each through the real
# CLI, pinned to one core; reported: the simulator's own wall time (summary.json
# `wall_seconds`: simulation + metrics), the process's peak RSS at K = 42, and the growth exponent
# from K = 4 to K = 42: log(t42 / t4) / log(jobs42 / jobs4) (1 = linear).
#
# Usage: bench/scale.sh [POLICY...]
# Environment: SCALES="1 4 15 42" (copies), MONTHS=1 (0: skip the 3-month run),
#   REPS=1 (best of REPS), LIMIT=600 (seconds per run; a run over it shows as "> LIMIT"),
#   JITTER=600 (seconds), SEED=1, DATA=build/scale (where the tiled traces are kept),
#   CORE=0 (the core to pin to), BIN=build/bin/deepshare (the binary measured).
set -euo pipefail
cd "$(dirname "$0")/.."
venus=../shared/traces/venus-sept/venus_sept_23859_jobs.csv
[ -f "$venus" ] || { echo "scale: $venus not found; nothing to measure"; exit 0; }
bin=${BIN:-build/bin/deepshare} tile=build/bin/tile_trace
[ -x "$bin" ] && [ -x "$tile" ] || cmake --build --preset release --target deepshare tile_trace
read -r -a scales <<< "${SCALES:-1 4 15 42}"
months=${MONTHS:-1} reps=${REPS:-1} limit=${LIMIT:-600} jitter=${JITTER:-600} seed=${SEED:-1}
data=${DATA:-build/scale} core=${CORE:-0}
policies=("$@")
[ ${#policies[@]} -gt 0 ] || mapfile -t policies < <("$bin" policies | awk '{print $1}')

# The workloads: name -> tile_trace arguments.
names=() args=()
for k in "${scales[@]}"; do names+=("K=$k"); args+=("--copies $k --jitter-s $jitter --seed $seed"); done
if [ "$months" = 1 ]; then
  names+=("K=15x3mo"); args+=("--copies 15 --repeats 3 --period-days 30 --jitter-s $jitter --seed $seed")
fi
declare -A jobs
for i in "${!names[@]}"; do
  dir="$data/$(echo "${args[$i]}" | tr -d ' -')"
  if [ ! -f "$dir/jobs.csv" ]; then
    # shellcheck disable=SC2086
    "$tile" --trace "$venus" ${args[$i]} --out "$dir" >/dev/null
  fi
  jobs[${names[$i]}]=$(($(wc -l < "$dir/jobs.csv") - 1))
  dirs[$i]=$dir
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
header="| policy |" rule="|---|"
for n in "${names[@]}"; do header+=" $n (${jobs[$n]} jobs) s |"; rule+="---|"; done
header+=" peak RSS MiB (K=42) | exponent K=4→42 |"
rule+="---|---|"
echo "$header"
echo "$rule"
for p in "${policies[@]}"; do
  row="| $p |" t4="" t42="" rss=""
  for i in "${!names[@]}"; do
    best="" brss=""
    for ((r = 0; r < reps; r++)); do
      if ! /usr/bin/time -f '%M' -o "$out/time" timeout "$limit" taskset -c "$core" \
        nice -n 10 "$bin" simulate --quiet --trace "${dirs[$i]}/jobs.csv" --policy "$p" \
        --out "$out/run" >/dev/null 2>"$out/err"; then
        best="> $limit"
        break
      fi
      wall=$(grep -o '"wall_seconds": [0-9.e-]*' "$out/run/summary.json" | awk '{print $2}')
      kb=$(tail -1 "$out/time")
      if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall brss=$kb; fi
    done
    case $best in
      ">"*) row+=" $best |" ;;
      *) row+=" $(printf '%.2f' "$best") |" ;;
    esac
    [ "${names[$i]}" = "K=4" ] && t4=$best
    [ "${names[$i]}" = "K=42" ] && t42=$best
    [ "${names[$i]}" = "K=42" ] && [ -n "$brss" ] && rss=$((brss / 1024))
  done
  exp="n/a"
  if [[ -n "$t4" && -n "$t42" && "$t4" != ">"* && "$t42" != ">"* ]]; then
    exp=$(awk "BEGIN{printf \"%.2f\", log($t42/$t4)/log(${jobs[K=42]}/${jobs[K=4]})}")
  fi
  echo "$row ${rss:-n/a} | $exp |"
done
