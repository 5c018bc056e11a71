#!/usr/bin/env bash
# Instruction counts (valgrind callgrind) of one simulation per policy: ds::simulate()
# inclusive, i.e. the simulator and the policy, without reading the trace, the metrics or
# writing outputs. Unlike wall time they do not depend on what else the machine runs, so
# they compare two builds on a shared machine (docs/performance.md).
# Usage: bench/instructions.sh TRACE [POLICY...]   (BIN=build/bin/deepshare, SETS="--set k=v")
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed"; exit 0; }
trace=${1:?usage: bench/instructions.sh TRACE [POLICY...]}
shift
bin=${BIN:-build/bin/deepshare}
policies=("$@")
[ ${#policies[@]} -gt 0 ] || mapfile -t policies < <("$bin" policies | awk '{print $1}')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in "${policies[@]}"; do
  # shellcheck disable=SC2086
  nice -n 10 valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" simulate --quiet \
    --trace "$trace" --policy "$p" ${SETS:-} --out "$out/run" >/dev/null 2>&1
  n=$(callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null |
    grep -E 'ds::simulate\(ds::Workload const&, ds::Policy&' | head -1 | awk '{print $1}')
  printf '%-14s %s\n' "$p" "$n"
done
