#!/usr/bin/env bash
# Controller memory on a real Slurm cluster over many jobs (issue #24, docs/slurm.md §10,
# "Cost per cycle and memory"): the project's test cluster (scripts/slurm/start-cluster.sh: 4 nodes x
# 4 fake GPUs, the gate, slurmdbd with accounts alpha and beta of 8 GPUs each) with `deepshare
# slurm run` (tests/slurm/ctl.yaml) scheduling JOBS short jobs (1-2 GPUs, 1 s each) submitted
# as users do, about PENDING at a time. Every STEP completed jobs (its log's job_end lines)
# the controller's resident memory (VmRSS) is sampled. Prints a table (jobs done, elapsed s, RSS MiB, growth since the previous row in
# KiB per job) and the growth per job over the second half of the run (after the warm-up).
# Slurm keeps a finished job in its job table for MinJobAge (the test cluster: 3600 s), and the
# controller reads that table: what it holds grows with the jobs finished in the last
# MinJobAge, which is retention, not a leak. The soak sets MinJobAge=MIN_JOB_AGE (30 s), so
# that the table reaches its size within the first minute; the controller's own job slots
# grow until 4,096 jobs were seen, then their ids are reused (docs/slurm.md §10, "Cost per
# cycle and memory").
# Needs root and the Slurm packages (scripts/setup-slurm.sh); takes a few minutes per 1,000 jobs
# on 2 cores.
# Usage: bench/slurm_soak.sh [OUT_DIR]     (OUT_DIR keeps the controller's log and samples)
# Environment: JOBS=1000, STEP=100, PENDING=24, MIN_JOB_AGE=30, BIN=build/bin,
#   WRAP="heaptrack -o FILE" (or another command the controller runs under: its child is
#   sampled; for a profile of what the controller allocates and never frees).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$SRC/build/bin}
JOBS=${JOBS:-1000} STEP=${STEP:-100} PENDING=${PENDING:-24}
OUT=${1:-}
[ "$(id -u)" = 0 ] || { echo "slurm_soak: needs root (the test cluster)"; exit 1; }
command -v slurmctld >/dev/null || { echo "slurm_soak: Slurm not installed (scripts/setup-slurm.sh)"; exit 1; }
[ -x "$BIN/deepshare" ] || cmake --build --preset release --target deepshare
export BASE
BASE=$(mktemp -d /tmp/dssoak.XXXX)
CTL_PID=
WRAP_PID=
cleanup() {
  [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null
  [ -n "$WRAP_PID" ] && wait "$WRAP_PID" 2>/dev/null
  [ -n "$CTL_PID" ] && [ -z "$WRAP_PID" ] && wait "$CTL_PID" 2>/dev/null
  if [ -n "$OUT" ]; then mkdir -p "$OUT" && cp "$BASE/ctl.log" "$BASE/samples.tsv" "$OUT/" 2>/dev/null; fi
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
echo "MinJobAge=${MIN_JOB_AGE:-30}" >"$BASE/extra.conf"
EXTRA_CONF=$BASE/extra.conf NODES=4 GPUS=4 ACCOUNTING=1 ACCOUNTS=alpha:8,beta:8 \
  "$SRC/scripts/slurm/start-cluster.sh" >/dev/null ||
  { echo "slurm_soak: the cluster did not start"; exit 1; }
source "$BASE/env.sh"
mkdir -p "$BASE/jobout"
cat >"$BASE/jobout/job.sh" <<'JOB'
#!/bin/bash
sleep "$1"
JOB
chmod +x "$BASE/jobout/job.sh"
# shellcheck disable=SC2086
${WRAP:-} "$BIN/deepshare" slurm run --config "$SRC/tests/slurm/ctl.yaml" >"$BASE/ctl.log" 2>&1 &
CTL_PID=$!
if [ -n "${WRAP:-}" ]; then  # the wrapper's child running `slurm run` is the controller
  c=
  for _ in $(seq 1 50); do
    c=$(pgrep -P "$CTL_PID" -f "slurm run" | head -1)
    [ -n "$c" ] && break
    sleep 0.2
  done
  # None: the wrapper runs it in its own process (valgrind).
  [ -n "$c" ] && WRAP_PID=$CTL_PID CTL_PID=$c
fi
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$CTL_PID/status"; }
done_jobs() { grep -c '"event":"job_end"' "$BASE/ctl.log"; }
queued() { squeue -h -o %i 2>/dev/null | wc -l; }

submitted=0 next=$STEP t0=$(date +%s) prev_rss= prev_done=0
printf 'done\tsec\trss_kib\n' >"$BASE/samples.tsv"
echo "| jobs done | elapsed s | controller RSS MiB | growth KiB/job since the row before |"
echo "|---|---|---|---|"
while :; do
  kill -0 "$CTL_PID" 2>/dev/null || { echo "slurm_soak: the controller exited: $(tail -3 "$BASE/ctl.log")"; exit 1; }
  q=$(queued)
  while [ "$submitted" -lt "$JOBS" ] && [ "$q" -lt "$PENDING" ]; do
    acct=alpha; [ $((submitted % 2)) = 1 ] && acct=beta
    sbatch --parsable -A "$acct" -o /dev/null --gres=gpu:$((1 + submitted % 2)) \
      "$BASE/jobout/job.sh" 1 >/dev/null || { echo "slurm_soak: sbatch failed"; exit 1; }
    submitted=$((submitted + 1)) q=$((q + 1))
  done
  d=$(done_jobs)
  if [ "$d" -ge "$next" ] || { [ "$submitted" -ge "$JOBS" ] && [ "$q" = 0 ]; }; then
    r=$(rss_kib) s=$(($(date +%s) - t0))
    printf '%s\t%s\t%s\n' "$d" "$s" "$r" >>"$BASE/samples.tsv"
    g="-"
    [ -n "$prev_rss" ] && [ "$d" -gt "$prev_done" ] && g=$(awk "BEGIN{printf \"%.1f\", ($r - $prev_rss) / ($d - $prev_done)}")
    echo "| $d | $s | $(awk "BEGIN{printf \"%.1f\", $r / 1024}") | $g |"
    prev_rss=$r prev_done=$d next=$((d - d % STEP + STEP))
    [ "$submitted" -ge "$JOBS" ] && [ "$q" = 0 ] && break
  fi
  sleep 0.5
done
awk -F'\t' 'NR > 1 {d[NR] = $1; r[NR] = $3; n = NR}
  END {h = int((n + 2) / 2); if (n > 2 && d[n] > d[h])
         printf "growth over the second half (jobs %d-%d): %.1f KiB per job\n", d[h], d[n], (r[n] - r[h]) / (d[n] - d[h])}' \
  "$BASE/samples.tsv"
echo "controller: $(grep -c '"event":"start"' "$BASE/ctl.log") starts, $(grep -c '"level":"error"' "$BASE/ctl.log") errors logged"
