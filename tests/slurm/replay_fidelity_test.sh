#!/usr/bin/env bash
# Short time-scaled replay on a REAL Slurm cluster (scripts/slurm/start-cluster.sh, 4 x 4
# fake GPUs) followed by `deepshare fidelity` against the simulator. About 2-3 minutes.
# Needs the Venus trace in ../shared/traces (skips, exit 77, without it, without root or
# without Slurm). Env: JOBS (default 40), TOLERANCE (default 0.10 for this short excerpt).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: Slurm not installed"; exit 77; }
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
export BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/dsr.XXXX")   # scripts/test.sh: stops leftovers
trap '"$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1' EXIT
NODES=4 GPUS=4 "$SRC/scripts/slurm/start-cluster.sh" || exit 1
source "$BASE/env.sh"
"$BIN/deepshare" slurm replay --config "$SRC/tests/slurm/venus3.yaml" --trace "$TRACE" \
  --excerpt "from=1000,jobs=${JOBS:-40},min=5,max=90" --time-scale 60 --out "$BASE/out" \
  --work-dir "$BASE/jobout/r" --timeout 600 --quiet || { echo "FAIL: replay"; exit 1; }
for f in summary.json jobs.csv tenants.csv observed.csv replay.json; do
  [ -s "$BASE/out/$f" ] || { echo "FAIL: replay wrote no $f"; exit 1; }
done
"$BIN/deepshare" fidelity --replay "$BASE/out" --tolerance "${TOLERANCE:-0.10}"
