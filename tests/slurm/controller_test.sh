#!/usr/bin/env bash
# Integration test of `deepshare slurm run` against a REAL Slurm cluster started by
# scripts/slurm/start-cluster.sh (4 nodes x 4 fake GPUs, the submission gate, slurmdbd with
# accounts alpha/beta (GrpTRES=gres/gpu=8) and scav (0); no mocks): placement on the GPUs
# DeepShare chose (Slurm's GRES), borrowing, reclaim by preemption (requeue + restart), MPS
# sharing on one GPU (gpushare slots), kill -9 and restart of the controller (no job lost or
# started twice), slurmctld restart, node failure (jobs requeued and rescheduled), user
# cancellation. Jobs are submitted the way users do: `sbatch -A team --gres=gpu:N`.
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/controller_test.sh BUILD_BIN_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dst slurmctld slurmd munged sbatch
CTL_PID=""
cleanup() {
  [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null && wait "$CTL_PID" 2>/dev/null
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE/ctl.log" "$DS_TEST_LOG_DIR/ctl-$(basename "$BASE").log" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
NODES=4 GPUS=4 ACCOUNTING=1 ACCOUNTS=alpha:8,beta:8,scav:0 "$SRC/scripts/slurm/start-cluster.sh" ||
  { echo "FAIL: cluster did not start"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "PASS [${SECONDS}s] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL [${SECONDS}s] $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }
state() { squeue -h -j "$1" -o %T 2>/dev/null; }
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done; return 1; }
is_state() { [ "$(state "$1")" = "$2" ]; }
gone() { [ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] || [ "$(state "$1")" = COMPLETED ]; }
cat > "$O/job.sh" <<'JOB'
#!/bin/bash
echo "start node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES mps=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE restart=${SLURM_RESTART_COUNT:-0}"
sleep "$1"
JOB
chmod +x "$O/job.sh"
sub() { # account gpus seconds [mem]
  sbatch --parsable -A "$1" -o "$O/%j.out" --open-mode=append --gres=gpu:"$2" --comment="ds:u=40;mem=${4:-4000}" "$O/job.sh" "$3"
}
pin() { scontrol show job "$1" | sed -n 's/^ *AdminComment=\(ds:[^ ]*\).*/\1/p'; }
idx() { scontrol show job -d "$1" | sed -n 's/.* GRES=\([^ ]*\).*/\1/p'; }
alloc() { # node@i,j/... from Slurm's own allocation record (GRES IDX per node)
  scontrol show job -d "$1" | sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=\([^ ]*\).*/\1 \2/p' |
    while read -r n g; do echo "$n@$(echo "$g" | grep -o 'IDX:[0-9,-]*' | cut -d: -f2 | paste -sd,)"; done | paste -sd/
}
start_ctl() {
  "$BIN/deepshare" slurm run --config "$SRC/tests/slurm/ctl.yaml" --metrics 127.0.0.1:0 >>"$BASE/ctl.log" 2>&1 &
  CTL_PID=$!
}
start_ctl

# 1. placement: two alpha jobs run with disjoint pinned GPUs
a1=$(sub alpha 2 60); a2=$(sub alpha 2 60)
wait_for 50 is_state "$a1" RUNNING; wait_for 50 is_state "$a2" RUNNING
wait_for 25 grep -q start "$O/$a1.out"; wait_for 25 grep -q start "$O/$a2.out"
check "placement: jobs (submitted without --hold, parked by the gate) started by DeepShare" is_state "$a2" RUNNING
g1=$(grep -o 'node=[^ ]* gpus=[^ ]*' "$O/$a1.out"); g2=$(grep -o 'node=[^ ]* gpus=[^ ]*' "$O/$a2.out")
check "placement: CUDA_VISIBLE_DEVICES from Slurm's GRES, disjoint ($g1 | $g2)" test -n "$g1" -a "$g1" != "$g2"
pg=$(pin "$a1" | tr ';' '\n' | sed -n 's/^g=//p')
check "placement: Slurm holds exactly the GPUs DeepShare chose (pin $pg, Slurm $(alloc "$a1"))" \
  test -n "$pg" -a "$pg" = "$(alloc "$a1")" -a "${g1#*gpus=}" = "${pg#*@}"

# 2. borrowing: best-effort tenant (quota 0) runs on lent GPUs; fill the cluster. The
# borrowers declare 22000 of 24576 MiB per GPU: no job can share their GPUs, so an entitled
# job that finds no free GPU must reclaim them by preemption (step 4), deterministically.
s1=$(sub scav 4 120 22000); s2=$(sub scav 4 120 22000); s3=$(sub scav 4 120 22000)
wait_for 50 is_state "$s1" RUNNING; wait_for 50 is_state "$s2" RUNNING
# (s3 may wait: DeepShare keeps a reserve of the idle quota; steps 3-5 hold either way)
check "borrowing: best-effort jobs run borrowed (b=1)" sh -c "scontrol show job $s1 | grep -q 'AdminComment=ds:.*;b=1;'"

# 3. controller kill -9 mid-run, restart: rebuilt from Slurm, no job started twice
kill -9 "$CTL_PID"; wait "$CTL_PID" 2>/dev/null; CTL_PID=""
b1=$(sub beta 4 30)   # arrives while no controller runs: must stay held
sleep 1
check "no controller: new job stays parked (not run by Slurm)" sh -c "[ \"\$(squeue -h -j $b1 -o %T:%r)\" = PENDING:BeginTime ]"
start_ctl
wait_for 50 is_state "$b1" RUNNING
check "restart: job submitted meanwhile is placed" is_state "$b1" RUNNING
check "restart: running jobs adopted, not restarted" sh -c "[ \$(grep -c start $O/$a1.out) = 1 ] && [ \$(grep -c start $O/$s1.out) = 1 ]"
check "restart: adopted jobs logged" grep -q '"event":"adopt"' "$BASE/ctl.log"

# 4. reclaim: beta's entitled 4-GPU job (too much memory to share) preempts a borrower
b2=$(sub beta 4 20 22000)
wait_for 100 is_state "$b2" RUNNING
check "reclaim: entitled job runs" is_state "$b2" RUNNING
check "reclaim: a borrowed job was preempted" grep -q '"event":"preempt"' "$BASE/ctl.log"
victim=$(grep '"event":"preempt"' "$BASE/ctl.log" | head -1 | sed 's/.*"job":"\([0-9]*\)".*/\1/')
check "reclaim: victim requeued and waits for DeepShare" sh -c "scontrol show job $victim | grep -q 'Restarts=[1-9]'"

# 5. MPS sharing: with the cluster full (alpha 4 + beta 8 + a borrower 4) and nothing left
# to lend, DeepShare colocates a best-effort job with the running job of the same GPU count
# whose memory leaves room: b1 (4 GPUs, 4000 MiB each)
m=$(sub scav 4 20 2000)
wait_for 100 grep -q '"shared":true' "$BASE/ctl.log"
sj=$(grep '"event":"start"' "$BASE/ctl.log" | grep '"shared":true' | head -1 | sed 's/.*"job":"\([0-9]*\)".*/\1/')
check "sharing: a job was started shared (pin s=1)" test -n "$sj"
# (the start is logged when decided; Slurm shows the GRES once the job is released and runs)
[ -n "$sj" ] && wait_for 50 sh -c "scontrol show job -d $sj | grep -q 'GRES=gpushare:g'"
[ -n "$sj" ] && check "sharing: the shared job holds gpushare slots in Slurm ($(idx "$sj"))" sh -c "scontrol show job -d $sj | grep -q 'GRES=gpushare:g'"
if [ -n "$sj" ]; then
  wait_for 50 grep -q start "$O/$sj.out"
  sg=$(grep -o 'node=[^ ]* gpus=[0-9]*' "$O/$sj.out" | head -1)   # node and first GPU
  check "sharing: shared job $sj runs on a GPU another job uses ($sg)" \
    sh -c "grep -l 'start $sg' $O/*.out | grep -v '/$sj.out' | grep -q ."
fi

# 6. user cancels a pending and a running job: the controller forgets them
c1=$(sub scav 4 30); sleep 0.5; scancel "$c1"; scancel "$a2"
sleep 1
check "cancel: controller keeps running" kill -0 "$CTL_PID"

# 7. slurmctld restart: the controller rides through it
ctld=$(cat "$BASE/ctld/slurmctld.pid")
kill -TERM "$ctld"; wait_for 150 sh -c "! kill -0 $ctld 2>/dev/null"   # exited (port freed)
slurmctld -f "$SLURM_CONF"; wait_for 100 sh -c "squeue >/dev/null 2>&1"
n1=$(sub alpha 1 5)
wait_for 100 is_state "$n1" RUNNING
check "slurmctld restart: controller still places jobs" sh -c "grep -q start $O/$n1.out 2>/dev/null || [ \"\$(squeue -h -j $n1 -o %T)\" = RUNNING ]"

# 8. node failure: a node goes down (it stays down: ReturnToService=1 keeps an admin DOWN),
# its jobs are requeued by Slurm, and DeepShare reschedules the entitled one elsewhere
down=$(squeue -h -t R -o '%N %a' | awk '$2 != "scav" {print $1}' | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
onit=$(squeue -h -t R -w "$down" -o '%i %a' | awk '$2 != "scav" {print $1; exit}')
scontrol update NodeName="$down" State=DOWN Reason=test
on_other_node() { local n; n=$(squeue -h -j "$onit" -t R -o %N); [ -n "$n" ] && [ "$n" != "$down" ]; }
wait_for 150 on_other_node
check "node failure: job $onit requeued and rescheduled off $down" on_other_node
check "node failure: the controller saw Slurm's requeue" grep -q '"event":"requeued_by_slurm"' "$BASE/ctl.log"
scontrol update NodeName="$down" State=RESUME

curl -s "127.0.0.1:$(grep -o '"port":[0-9]*' "$BASE/ctl.log" | tail -1 | grep -o '[0-9]*')/metrics" > "$BASE/metrics.txt" 2>/dev/null || true
check "metrics: Prometheus text with per-tenant gauges" grep -q 'deepshare_tenant_assurance{tenant="alpha"}' "$BASE/metrics.txt"
check "no decision failed" sh -c "! grep -q '\"level\":\"error\"' $BASE/ctl.log"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] || { echo "--- controller log (tail)"; tail -n 80 "$BASE/ctl.log"; }
[ "$fail" = 0 ]
