#!/usr/bin/env bash
# Leader failover against a REAL Slurm cluster (scripts/slurm/start-cluster.sh, 2 nodes x 4
# fake GPUs, the submission gate): two `deepshare slurm run` with the same state_dir. One
# leads, the other waits as a hot standby; kill -9 of the leader mid-run: the standby takes
# over within seconds (lease epoch 2, written into every record it writes), no job is lost
# and none is started twice (each tenant stays within its quota: nothing is preempted, so
# every job runs exactly once). docs/slurm.md "High availability".
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/ha_test.sh BUILD_BIN_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsh slurmctld slurmd munged sbatch
A_PID=""; B_PID=""; C_PID=""
cleanup() {
  for p in $A_PID $B_PID $C_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE"/ctl-*.log "$DS_TEST_LOG_DIR/" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
NODES=2 GPUS=4 "$SRC/scripts/slurm/start-cluster.sh" || { echo "FAIL: cluster did not start"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
mkdir -p "$O"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "PASS [${SECONDS}s] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL [${SECONDS}s] $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }
state() { squeue -h -j "$1" -o %T 2>/dev/null; }
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done; return 1; }
is_state() { [ "$(state "$1")" = "$2" ]; }
cat > "$O/job.sh" <<'JOB'
#!/bin/bash
echo "start node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES restart=${SLURM_RESTART_COUNT:-0}"
sleep "$1"
echo end
JOB
chmod +x "$O/job.sh"
sub() { sbatch --parsable -A "$1" -o "$O/%j.out" --open-mode=append --gres=gpu:"$2" "$O/job.sh" "$3"; }
cat > "$BASE/ha.yaml" <<YAML
partition: batch
policy: deepshare
tenant_source: config
options: {min_runtime_s: "0", lend_backoff_s: "0"}
poll_ms: 100
start_margin_s: 10
state_dir: $BASE/state
tenants:
  - {name: alpha, account: alpha, quota_gpus: 4, slo_queue_s: 2}
  - {name: beta, account: beta, quota_gpus: 4, slo_queue_s: 2}
YAML
run_ctl() { "$BIN/deepshare" slurm run --config "$BASE/ha.yaml" >>"$BASE/ctl-$1.log" 2>&1 & }
leads() { grep -q '"event":"leader"' "$BASE/ctl-$1.log" 2>/dev/null; }
waits() { grep -q '"event":"standby"' "$BASE/ctl-$1.log" 2>/dev/null; }

run_ctl a; A_PID=$!
wait_for 50 leads a
run_ctl b; B_PID=$!
wait_for 50 waits b
check "lease: the first controller leads (epoch 1)" grep -q '"event":"leader".*"epoch":"\?1"\?[,}]' "$BASE/ctl-a.log"
check "lease: the second waits as a hot standby" sh -c "grep -q '\"event\":\"standby\"' $BASE/ctl-b.log && ! grep -q '\"event\":\"leader\"' $BASE/ctl-b.log"

# wave 1 fills the 8 GPUs (each tenant at its quota); wave 2 waits behind it
w1=""; for t in alpha alpha beta beta; do w1="$w1 $(sub $t 2 25)"; done
for j in $w1; do wait_for 100 is_state "$j" RUNNING; done
check "leader: wave 1 runs" sh -c "for j in $w1; do [ \"\$(squeue -h -j \$j -o %T)\" = RUNNING ] || exit 1; done"
w2=""; for t in alpha beta alpha beta; do w2="$w2 $(sub $t 2 8)"; done
sleep 1
check "standby: did nothing (no action in its log)" sh -c "! grep -qE '\"event\":\"(start|preempt|adopt)\"' $BASE/ctl-b.log"

kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null; A_PID=""
t0=$(date +%s.%N)
wait_for 100 leads b
t1=$(date +%s.%N)
took=$(echo "$t1 - $t0" | bc)
check "failover: the standby leads within 5 s (took ${took} s)" sh -c "grep -q '\"event\":\"leader\"' $BASE/ctl-b.log && [ \$(echo '$took < 5' | bc) = 1 ]"
check "failover: epoch 2" grep -q '"event":"leader".*"epoch":"\?2"\?[,}]' "$BASE/ctl-b.log"
check "failover: running jobs adopted" grep -q '"event":"adopt"' "$BASE/ctl-b.log"
run_ctl c; C_PID=$!
wait_for 50 waits c
check "failover: a third instance waits as the new standby" waits c

all="$w1 $w2"
for j in $all; do wait_for 300 sh -c "grep -q '^end' $O/$j.out 2>/dev/null"; done
for j in $all; do
  n=$(grep -c '^start' "$O/$j.out" 2>/dev/null || echo 0)
  e=$(grep -c '^end' "$O/$j.out" 2>/dev/null || echo 0)
  check "job $j: ran once and completed (starts $n, ends $e)" test "$n" = 1 -a "$e" = 1
done
e2=$(for j in $w2; do scontrol show job "$j" 2>/dev/null | grep -o 'AdminComment=ds:[^ ]*'; done | grep -c ';e=2')
check "fencing: jobs started by the new leader carry its epoch in their record ($e2 of 4)" test "$e2" -ge 1
check "no controller was deposed" sh -c "! grep -q '\"event\":\"deposed\"' $BASE/ctl-*.log"

echo "ha test: $pass passed, $fail failed"
[ "$fail" = 0 ]
