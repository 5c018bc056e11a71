#!/usr/bin/env bash
# The 64-GPU replay (issue #13, docs/slurm.md §12): a Venus excerpt of six VCs
# (bench/slurm/venus6_64.yaml) replayed on a real Slurm test cluster of 8 nodes x 8 fake
# GPUs (scripts/slurm/start-cluster.sh), then `deepshare fidelity` against the jittered
# ensemble (32 simulations with the start latency, jitter and run overhang the replay
# measured). Root, Slurm and the Venus trace are needed (exit 77 without them).
# Usage: bench/slurm_replay_64.sh OUT
# Env: EXCERPT (default from=3000,jobs=400,load=2,min=5,max=60), SCALE=60, BIN=build/bin,
#   TIMEOUT=600 (wall seconds the replay may take), DS_SLURM_TMP (where the cluster lives).
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BIN=${BIN:-$SRC/build/bin}
OUT=${1:?usage: bench/slurm_replay_64.sh OUT}
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT=${EXCERPT:-from=3000,jobs=400,load=2,min=5,max=60}
SCALE=${SCALE:-60}
CONFIG=$SRC/bench/slurm/venus6_64.yaml
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: Slurm not installed"; exit 77; }
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
echo "== what the simulator expects (8 x 8 GPUs, no Slurm)"
"$BIN/deepshare" excerpt --config "$CONFIG" --trace "$TRACE" --excerpt "$EXCERPT" \
  --time-scale "$SCALE" --nodes 8x8 | tee "$OUT/excerpt.txt" || exit 1
export BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/ds64.XXXX")
trap '"$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1' EXIT
NODES=8 GPUS=8 "$SRC/scripts/slurm/start-cluster.sh" || exit 1
source "$BASE/env.sh"
echo "== replay on the real cluster (8 x 8 GPUs)"
"$BIN/deepshare" slurm replay --config "$CONFIG" --trace "$TRACE" --excerpt "$EXCERPT" \
  --time-scale "$SCALE" --out "$OUT/replay" --work-dir "$BASE/jobout/r" \
  --timeout "${TIMEOUT:-600}" --quiet | tee "$OUT/replay.txt"
rc=${PIPESTATUS[0]}
echo "== fidelity against the jittered ensemble"
"$BIN/deepshare" fidelity --replay "$OUT/replay" | tee "$OUT/fidelity.txt"
echo "load during the replay: $(cat /proc/loadavg)" | tee -a "$OUT/fidelity.txt"
exit "$rc"
