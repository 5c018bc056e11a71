#!/usr/bin/env bash
# Short time-scaled replay on a REAL Slurm cluster (scripts/slurm/start-cluster.sh, 4 x 4
# fake GPUs) followed by `deepshare fidelity` against the simulator. About 2.5 minutes.
# Needs the Venus trace in ../shared/traces (skips, exit 77, without it, without root or
# without Slurm).
#
# The excerpt (40 jobs of Venus vcEwI/vcWoR from the 1860th on) has borrowing, MPS sharing
# and one reclaim with preemption in the simulator, and it is one whose simulated means
# hardly move with start-latency noise (`deepshare excerpt`: +-0.4 % JCT, +-3 % queueing
# over 32 jittered simulations; the single simulation moves smoothly for measured start
# latencies of 0.3-0.9 s, and takes another path at 1 s), so a real run can be held to
# TOLERANCE (default 10 %).
# The other core is kept busy while it runs (`yes > /dev/null`, started and stopped by its
# PID here): on a busy machine the stand-ins' run overhang grows from ~0.07 s to ~0.55 s,
# which the fidelity check must model (the replay measures it; docs/slurm.md §12).
# Env: JOBS, FROM, TOLERANCE; LOAD=0: no extra load; DS_TEST_OUT=DIR: keep the replay's
# outputs in DIR/replay (replay.json, observed.csv, fidelity/) and its config in DIR/config.yaml.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT="from=${FROM:-1860},jobs=${JOBS:-40},min=5,max=90"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: Slurm not installed"; exit 77; }
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
echo "== what the simulator expects (no Slurm involved)"
"$BIN/deepshare" excerpt --config "$SRC/tests/slurm/venus3.yaml" --trace "$TRACE" \
  --excerpt "$EXCERPT" --time-scale 60 --ensemble 32 || { echo "FAIL: excerpt"; exit 1; }
export BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/dsr.XXXX")   # scripts/test.sh: stops leftovers
LOAD_PID=
cleanup() {
  [ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null
  if [ -n "${DS_TEST_OUT:-}" ] && [ -d "$BASE/out" ]; then
    local out
    out=$(mkdir -p "$DS_TEST_OUT" && cd "$DS_TEST_OUT" && pwd) && rm -rf "$out/replay" &&
      cp -r "$BASE/out" "$out/replay"
    # The config goes beside it (the replay folder holds only what its manifest lists), so
    # that `deepshare fidelity --replay DIR/replay --config DIR/config.yaml` runs again later.
    cp "$BASE/venus3.yaml" "$out/config.yaml"
  fi
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
if [ "${LOAD:-1}" != 0 ]; then
  # One busy process keeps the other core saturated for the whole test (at most 11 min).
  timeout 660 yes >/dev/null &
  LOAD_PID=$!
  echo "== load: yes > /dev/null (pid $LOAD_PID)"
fi
NODES=4 GPUS=4 "$SRC/scripts/slurm/start-cluster.sh" || exit 1
source "$BASE/env.sh"
echo "== replay on the real cluster"
# The config names a journal (as a copy of a production config would): the replay must
# leave that file alone (it journals into its output folder).
cp "$SRC/tests/slurm/venus3.yaml" "$BASE/venus3.yaml"
echo "journal: $BASE/production.journal" >> "$BASE/venus3.yaml"
echo "clock 1 1 1" > "$BASE/production.journal"
"$BIN/deepshare" slurm replay --config "$BASE/venus3.yaml" --trace "$TRACE" \
  --excerpt "$EXCERPT" --time-scale 60 --out "$BASE/out" \
  --work-dir "$BASE/jobout/r" --timeout 600 --quiet || { echo "FAIL: replay"; exit 1; }
[ "$(cat "$BASE/production.journal" 2>/dev/null)" = "clock 1 1 1" ] ||
  { echo "FAIL: the replay touched the journal named in its config"; exit 1; }
echo "PASS: the config's journal is untouched"
for f in summary.json jobs.csv tenants.csv timeseries.csv observed.csv replay.json journal.log; do
  [ -s "$BASE/out/$f" ] || { echo "FAIL: replay wrote no $f"; exit 1; }
done
echo "== fidelity"
"$BIN/deepshare" fidelity --replay "$BASE/out" --tolerance "${TOLERANCE:-0.10}" ||
  { echo "FAIL: fidelity"; exit 1; }
# The replay exercised what it is meant to: borrowing and MPS sharing on real Slurm.
for key in real_borrowed_runs real_shared_runs; do
  n=$(grep -o "\"$key\": *[0-9]*" "$BASE/out/fidelity/fidelity.json" | grep -o '[0-9]*$')
  [ "${n:-0}" -gt 0 ] || { echo "FAIL: $key is ${n:-missing}"; exit 1; }
done
echo "PASS"
