#!/usr/bin/env bash
# Deep-queue benchmark (issue #27, docs/performance.md "Deep queues"): one tenant owning all
# 1,024 GPUs (128 nodes of 8) and a queue that grows to most of the jobs. Workloads
# (tools/deep_queue_trace.cpp, generated once into DATA, deterministic):
#   L1    1M jobs at offered load 1        L10   the same jobs at load 10
#   N50k, N100k, N200k                     50k / 100k / 200k jobs at load 10 (the sweep)
# and Tiresias' decision interval on Venus x1.5 (interval=60, 0.01, 0.001 s).
# Every registered policy (or those named) simulates each through the real CLI, pinned to
# one core, best of REPS; reported per case: the simulator's own time (summary.json
# `wall_seconds`: simulation + metrics), the whole process (/usr/bin/time, adds reading the
# trace and writing the outputs), its CPU time (user + system: on a machine shared with
# other work it stays near what the run takes alone, while wall times stretch) and its peak
# RSS; per policy the growth exponent over the sweep, log(t200k / t50k) / log(4) (1 =
# linear) of the simulation time, or of the CPU time with EXPONENT=cpu.
#
# Usage: bench/deep_queue.sh [POLICY...]
# Environment: CASES="L1 L10 N50k N100k N200k" (which workloads), EXPONENT=sim|cpu (what
#   the exponent is taken of), INTERVALS=1 (0: skip the Tiresias interval cases), REPS=1
#   (best of REPS), LIMIT=300 (seconds per run; a run over it shows as "> LIMIT"),
#   DATA=build/deep_queue (where the traces are kept), CORE=0 (the core to pin to),
#   BIN=build/bin/deepshare (the binary measured), SEED=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-build/bin/deepshare} gen=build/bin/deep_queue_trace
[ -x "$bin" ] && [ -x "$gen" ] || cmake --build --preset release --target deepshare deep_queue_trace
read -r -a cases <<< "${CASES:-L1 L10 N50k N100k N200k}"
intervals=${INTERVALS:-1} reps=${REPS:-1} limit=${LIMIT:-300} data=${DATA:-build/deep_queue}
core=${CORE:-0} seed=${SEED:-1} exponent=${EXPONENT:-sim}
policies=("$@")
[ ${#policies[@]} -gt 0 ] || mapfile -t policies < <("$bin" policies | awk '{print $1}')

# The workloads: name -> deep_queue_trace arguments.
declare -A gen_args=([L1]="--jobs 1000000 --load 1" [L10]="--jobs 1000000 --load 10"
  [N50k]="--jobs 50000 --load 10" [N100k]="--jobs 100000 --load 10"
  [N200k]="--jobs 200000 --load 10")
for c in "${cases[@]}"; do
  [ -n "${gen_args[$c]:-}" ] || { echo "deep_queue: unknown case '$c'"; exit 2; }
  dir="$data/$c-seed$seed"
  # shellcheck disable=SC2086
  [ -f "$dir/jobs.csv" ] || "$gen" ${gen_args[$c]} --seed "$seed" --out "$dir" >/dev/null
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run ARGS...: best of REPS (by simulation time); sets sim, whole, cpu, rss (or "> LIMIT").
run() {
  sim="" whole="" cpu="" rss=""
  for ((r = 0; r < reps; r++)); do
    if ! /usr/bin/time -f '%M %e %U %S' -o "$out/time" timeout "$limit" taskset -c "$core" \
      nice -n 10 "$bin" simulate --quiet "$@" --out "$out/run" >/dev/null 2>"$out/err"; then
      sim="> $limit" whole="> $limit" cpu="> $limit" rss=""
      return
    fi
    local w kb el us sy
    w=$(grep -o '"wall_seconds": [0-9.e-]*' "$out/run/summary.json" | awk '{print $2}')
    read -r kb el us sy < <(tail -1 "$out/time")
    if [ -z "$sim" ] || awk "BEGIN{exit !($w < $sim)}"; then
      sim=$w whole=$el cpu=$(awk "BEGIN{print $us + $sy}") rss=$((kb / 1024))
    fi
  done
}
fmt() { case $1 in ">"*) echo "$1" ;; *) printf '%.2f' "$1" ;; esac; }

header="| policy |" rule="|---|"
for c in "${cases[@]}"; do
  case $c in
    L1 | L10) header+=" $c sim s | $c whole s | $c CPU s | $c RSS MiB |"; rule+="---|---|---|---|" ;;
    *) header+=" $c sim s | $c CPU s |"; rule+="---|---|" ;;
  esac
done
header+=" exponent ($exponent) |"
rule+="---|"
echo "$header"
echo "$rule"
for p in "${policies[@]}"; do
  row="| $p |" t50="" t200=""
  for c in "${cases[@]}"; do
    dir="$data/$c-seed$seed"
    run --format native --trace "$dir/jobs.csv" --cluster "$dir/cluster.yaml" --policy "$p"
    case $c in
      L1 | L10) row+=" $(fmt "$sim") | $(fmt "$whole") | $(fmt "$cpu") | ${rss:-n/a} |" ;;
      *) row+=" $(fmt "$sim") | $(fmt "$cpu") |" ;;
    esac
    t=$sim
    [ "$exponent" = cpu ] && t=$cpu
    [ "$c" = N50k ] && t50=$t
    [ "$c" = N200k ] && t200=$t
  done
  exp="n/a"
  if [[ -n "$t50" && -n "$t200" && "$t50" != ">"* && "$t200" != ">"* ]]; then
    exp=$(awk "BEGIN{printf \"%.2f\", log($t200/$t50)/log(4)}")
  fi
  echo "$row $exp |"
done

venus=../shared/traces/venus-sept/venus_sept_23859_jobs.csv
if [ "$intervals" = 1 ] && [ -f "$venus" ]; then
  echo
  echo "| tiresias on Venus x1.5, interval | sim s | whole s | CPU s | RSS MiB |"
  echo "|---|---|---|---|---|"
  for iv in 60 0.01 0.001; do
    run --trace "$venus" --load-factor 1.5 --policy tiresias --set "interval=$iv"
    echo "| $iv s | $(fmt "$sim") | $(fmt "$whole") | $(fmt "$cpu") | ${rss:-n/a} |"
  done
fi
