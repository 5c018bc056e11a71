#!/usr/bin/env bash
# Scale invariance on Venus (docs/performance.md "Scale invariance"): Venus alone and Venus
# tiled K = 4 times in lockstep (no jitter; tools/tile_trace.cpp), every registered policy.
# For each tenant copy vcX#c of the tiled run, its row of tenants.csv is compared with vcX's
# row of the run alone: "identical" when every column matches. Also printed: the average
# queueing delay of both runs.
# Usage: bench/scale_invariance_venus.sh [POLICY...]   (K=4; COPIES=K to change it)
set -euo pipefail
cd "$(dirname "$0")/.."
venus=../shared/traces/venus-sept/venus_sept_23859_jobs.csv
[ -f "$venus" ] || { echo "scale_invariance_venus: $venus not found; nothing to check"; exit 0; }
bin=build/bin/deepshare tile=build/bin/tile_trace
[ -x "$bin" ] && [ -x "$tile" ] || cmake --build --preset release --target deepshare tile_trace
k=${COPIES:-4}
data=build/scale/copies${k}jitters0seed1
[ -f "$data/jobs.csv" ] || "$tile" --trace "$venus" --copies "$k" --jitter-s 0 --out "$data" >/dev/null
policies=("$@")
[ ${#policies[@]} -gt 0 ] || mapfile -t policies < <("$bin" policies | awk '{print $1}')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| policy | tenant copies identical to Venus alone | avg queue alone (s) | avg queue K=$k (s) |"
echo "|---|---|---|---|"
for p in "${policies[@]}"; do
  nice -n 10 "$bin" simulate --quiet --trace "$venus" --policy "$p" --out "$out/one" >/dev/null
  nice -n 10 "$bin" simulate --quiet --trace "$data/jobs.csv" --policy "$p" --out "$out/many" >/dev/null
  python3 - "$p" "$out/one" "$out/many" <<'EOF'
import csv, json, sys
policy, one, many = sys.argv[1:]
alone = {r["tenant"]: r for r in csv.DictReader(open(one + "/tenants.csv"))}
same = total = 0
for r in csv.DictReader(open(many + "/tenants.csv")):
    base = r["tenant"].split("#")[0]
    a = dict(alone[base]); b = dict(r)
    a.pop("tenant"); b.pop("tenant")
    total += 1
    same += a == b
q1 = json.load(open(one + "/summary.json"))["avg_queue_s"]
qk = json.load(open(many + "/summary.json"))["avg_queue_s"]
print(f"| {policy} | {same} / {total} | {q1:,.0f} | {qk:,.0f} |")
EOF
done
