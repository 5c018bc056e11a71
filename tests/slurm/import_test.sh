#!/usr/bin/env bash
# `deepshare import slurm` on the records of a REAL Slurm test cluster (issue #28), about
# 1.5 minutes: scripts/slurm/start-cluster.sh (4 nodes x 4 fake GPUs, slurmdbd, accounts
# alpha/beta with GrpTRES=gres/gpu=6 and scav with 0, a second partition `other`), then
#  1. a short replay (`deepshare slurm replay`, the DeepShare controller deciding) of a small
#     trace written here (10 jobs of three tenants; borrowing and reclaims, so that some jobs
#     are requeued and run twice);
#  2. jobs Slurm schedules itself in partition `other`: a 3-task array, a heterogeneous job
#     (1 + 2 GPUs), a job asking for a GPU model, a CPU-only job;
#  3. the dumps an operator would make (sacct --duplicates, sacctmgr show assoc/qos,
#     scontrol show nodes) and `deepshare import slurm` on them;
#  4. the check: the import holds exactly the jobs that ran (the replay's observed.csv for
#     its jobs, the ids sbatch printed for the others) with their tenants and GPUs, each
#     replay job's Slurm start and end within a second of what the replay saw, its runs, and
#     submit times within a second of the replay's (scaled) submission times; the CPU-only
#     job is skipped and counted; the cluster and the quotas are the test cluster's; and the
#     imported files replay in the simulator.
# Exit 77 (CTest: skipped) without root or the Slurm packages.
# Usage: tests/slurm/import_test.sh BUILD_BIN_DIR
# Env: DS_TEST_OUT=DIR keeps the dumps and the import there.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsi slurmctld slurmd munged sbatch sacct sacctmgr slurmdbd
cleanup() {
  [ -n "${DS_TEST_OUT:-}" ] && mkdir -p "$DS_TEST_OUT" && cp -r "$BASE/dump" "$BASE/site" \
    "$BASE/replay/observed.csv" "$DS_TEST_OUT/" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# The trace (venus format, times in trace seconds) and its tenants: written for this test.
W=$BASE/work
mkdir -p "$W/aux"
cat > "$W/trace.csv" <<'CSV'
job_id,user,vc,gpu_num,state,submit_time,duration,model,dataset,batchsize,amp,gpu_util,gmem
1,cat,vcC,4,COMPLETED,0,900,BERT,SQuAD,32,0,90,20000
2,cat,vcC,4,COMPLETED,10,900,BERT,SQuAD,32,0,90,20000
3,cat,vcC,4,COMPLETED,20,900,BERT,SQuAD,32,0,90,20000
4,ann,vcA,1,COMPLETED,30,300,ResNet18,CIFAR-10,64,1,30,3000
5,bob,vcB,1,COMPLETED,40,300,ResNet18,CIFAR-10,64,1,30,3000
6,ann,vcA,4,COMPLETED,120,600,BERT,SQuAD,32,0,90,20000
7,bob,vcB,4,FAILED,150,450,BERT,SQuAD,32,0,90,20000
8,ann,vcA,2,COMPLETED,180,300,ResNet18,CIFAR-10,64,1,30,3000
9,bob,vcB,1,COMPLETED,210,300,ResNet18,CIFAR-10,64,1,30,3000
10,cat,vcC,1,COMPLETED,240,300,ResNet18,CIFAR-10,64,1,30,3000
CSV
printf 'vc,nodes\nvcA,1\nvcB,1\nvcC,1\n' > "$W/aux/vc_config.csv"
cat > "$W/replay.yaml" <<'YAML'
partition: batch
policy: deepshare
tenant_source: config
options: {min_runtime_s: "60"}
poll_ms: 100
gpu_memory_mib: 24576
tenants:
  - {name: alpha, account: alpha, trace: vcA, quota_gpus: 6, slo_queue_s: 120, checkpoint_interval_s: 300}
  - {name: beta, account: beta, trace: vcB, quota_gpus: 6, slo_queue_s: 120, checkpoint_interval_s: 300}
  - {name: scav, account: scav, trace: vcC, quota_gpus: 0, slo_queue_s: 120, checkpoint_interval_s: 300, class: best-effort}
YAML
SCALE=60

NODES=4 GPUS=4 ACCOUNTING=1 ACCOUNTS=alpha:6,beta:6,scav:0 OTHER_PARTITION=other \
  "$SRC/scripts/slurm/start-cluster.sh" > "$BASE/start-cluster.log" 2>&1 ||
  { echo "FAIL: cluster did not start"; tail -20 "$BASE/start-cluster.log"; exit 1; }
source "$BASE/env.sh"

echo "== 1. replay (the DeepShare controller decides)"
"$BIN/deepshare" slurm replay --config "$W/replay.yaml" --trace "$W/trace.csv" \
  --excerpt from=0,jobs=10,min=3,max=15 --time-scale $SCALE --out "$BASE/replay" \
  --work-dir "$BASE/jobout/r" --timeout 300 --quiet || { echo "FAIL: replay"; exit 1; }

echo "== 2. jobs Slurm schedules itself (partition other)"
O=$BASE/jobout
printf '#!/bin/bash\nsleep "$1"\n' > "$O/j.sh"
chmod +x "$O/j.sh"
sub() { sbatch --parsable -p other -o /dev/null "$@"; }
ARRAY=$(sub -A alpha --array=0-2 --gres=gpu:1 "$O/j.sh" 3) &&
  HET=$(sub -A beta --gres=gpu:1 : -p other --gres=gpu:2 "$O/j.sh" 3) &&
  MODEL=$(sub -A beta --gres=gpu:a100:2 "$O/j.sh" 3) &&
  CPU=$(sub -A scav "$O/j.sh" 3) || { echo "FAIL: sbatch"; exit 1; }
for _ in $(seq 1 600); do [ -z "$(squeue -h -p other -o %i)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -p other -o %i)" ] || { echo "FAIL: partition other did not drain"; exit 1; }
# slurmdbd records a job's end shortly after it ends: wait until every job has an End.
dump() {
  TZ=UTC sacct --parsable2 --allusers --duplicates --starttime 2000-01-01 --endtime now \
    --format JobID,JobIDRaw,Account,User,Partition,QOS,Submit,Start,End,Elapsed,State,AllocTRES,ReqTRES,NNodes,Timelimit
}
# Under load slurmdbd may not have a job's record at all yet: wait for every job submitted
# above to be there too (its JobIDRaw), not only for the recorded ones to end.
recorded() {
  dump | awk -F'|' -v want="$ARRAY $HET $MODEL $CPU" '
    NR > 1 && $1 !~ /\./ { if ($9 == "Unknown" || $11 == "RUNNING") busy++; split($1, id, /[_+]/); seen[id[1]] = 1 }
    END { n = split(want, w, " "); for (k = 1; k <= n; k++) if (!(w[k] in seen)) busy++; exit (busy > 0 ? 1 : 0) }'
}
for _ in $(seq 1 600); do
  recorded && break
  sleep 0.1
done

echo "== 3. dumps and import"
D=$BASE/dump
mkdir -p "$D"
dump > "$D/sacct.txt"
sacctmgr show assoc --parsable2 format=Cluster,Account,User,Partition,ParentName,Share,GrpTRES,QOS,DefaultQOS > "$D/assoc.txt"
sacctmgr show qos --parsable2 format=Name,GrpTRES > "$D/qos.txt"
scontrol show nodes > "$D/nodes.txt"
"$BIN/deepshare" import slurm --sacct "$D/sacct.txt" --assoc "$D/assoc.txt" --qos "$D/qos.txt" \
  --nodes "$D/nodes.txt" --out "$BASE/site" > "$BASE/import.out" 2> "$BASE/import.err" ||
  { echo "FAIL: import"; cat "$BASE/import.err"; exit 1; }
cat "$BASE/import.out"
T=$BASE/site/trace.csv

echo "== 4. checks"
# The jobs that ran: the replay's, the array's three tasks, the heterogeneous job (one job,
# 1 + 2 GPUs), the model request (the gate turns gpu:a100:2 into gpu:2 outside DeepShare's
# partition); the CPU-only job is skipped.
{
  awk -F, 'NR > 1 { print $2 "," $3 "," $4 }' "$BASE/replay/observed.csv"
  for k in 0 1 2; do echo "${ARRAY}_$k,alpha,1"; done
  echo "$HET,beta,3"
  echo "$MODEL,beta,2"
} | sort > "$BASE/expected.txt"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { print $c["job_id"] "," $c["tenant"] "," $c["gpus"] }' "$T" | sort > "$BASE/imported.txt"
if diff "$BASE/expected.txt" "$BASE/imported.txt" > "$BASE/diff.txt"; then
  ok "the import holds exactly the $(wc -l < "$BASE/expected.txt") jobs that ran (ids, tenants, GPUs)"
else
  bad "jobs differ (< expected, > imported):"; cat "$BASE/diff.txt"
fi
# Each replay job: Slurm's start and end (of its last run) and its runs as the replay saw
# them; its submit time relative to the first job's as the replay submitted it (trace ms
# / time scale), all within a second.
awk -F, -v scale=$SCALE '
  function abs(x) { return x < 0 ? -x : x }
  FNR == 1 { for (i = 1; i <= NF; i++) c[FILENAME, $i] = i; next }
  FILENAME ~ /observed/ {
    id = $c[FILENAME, "slurm_id"]; seen[id] = 1
    start[id] = $c[FILENAME, "slurm_start_s"]; end[id] = $c[FILENAME, "slurm_end_s"]
    runs[id] = $c[FILENAME, "runs"]; sub_s[id] = $c[FILENAME, "submit_ms"] / 1000 / scale
    m++
    next
  }
  ($c[FILENAME, "job_id"] in seen) {
    id = $c[FILENAME, "job_id"]; n++
    if (abs($c[FILENAME, "slurm_start_s"] - start[id]) > 1) { print "start of " id ": " $c[FILENAME, "slurm_start_s"] " vs " start[id]; bad++ }
    if (abs($c[FILENAME, "slurm_end_s"] - end[id]) > 1) { print "end of " id ": " $c[FILENAME, "slurm_end_s"] " vs " end[id]; bad++ }
    if ($c[FILENAME, "slurm_runs"] != runs[id]) { print "runs of " id ": " $c[FILENAME, "slurm_runs"] " vs " runs[id]; bad++ }
    if ($c[FILENAME, "duration_s"] != $c[FILENAME, "slurm_end_s"] - $c[FILENAME, "slurm_start_s"]) { print "work of " id; bad++ }
    imp[id] = $c[FILENAME, "submit_s"]
  }
  END {
    first = ""
    for (id in imp) if (first == "" || imp[id] < imp[first]) first = id
    for (id in imp) {
      d = (imp[id] - imp[first]) - (sub_s[id] - sub_s[first])
      if (abs(d) > 1) { print "submit of " id " off by " d " s"; bad++ }
    }
    if (n != m) { print n " of " m " replay jobs compared"; bad++ }
    exit (bad > 0 ? 1 : 0)
  }' "$BASE/replay/observed.csv" "$T" > "$BASE/times.txt" &&
  ok "replay jobs: start, end, runs and submit times within a second of the replay's" ||
  { bad "times differ:"; cat "$BASE/times.txt"; }
requeued=$(awk -F, 'NR > 1 && $9 > 1' "$BASE/replay/observed.csv" | wc -l)
[ "$requeued" -gt 0 ] && grep -q "$requeued jobs ran more than once" "$BASE/import.err" &&
  ok "$requeued requeued jobs folded, their first submit kept" ||
  bad "requeued jobs: $requeued in the replay; import notes: $(grep -o '[0-9]* jobs ran more than once' "$BASE/import.err")"
grep -q "skipped jobs: 1 no GPUs (CPU-only)" "$BASE/import.err" &&
  ok "the CPU-only job $CPU is skipped and counted" || bad "CPU-only job not counted: $(cat "$BASE/import.err")"
grep -q "1 heterogeneous jobs: components folded" "$BASE/import.err" &&
  ok "the heterogeneous job's components are one job" || bad "heterogeneous job not folded"
C=$BASE/site/cluster.yaml
grep -q '{count: 4, gpus: 4, gpu_memory_gib: 24}' "$C" &&
  grep -q '{name: "alpha", quota_gpus: 6, class: guaranteed' "$C" &&
  grep -q '{name: "beta", quota_gpus: 6, class: guaranteed' "$C" &&
  grep -q '{name: "scav", quota_gpus: 0, class: best-effort' "$C" &&
  ok "cluster: 4 x 4 GPUs (DeepShare's per-index GPU types are no model); quotas from GrpTRES" ||
  { bad "cluster file:"; cat "$C"; }
"$BIN/deepshare" simulate --format native --trace "$T" --cluster "$C" --policy deepshare \
  --quiet --out "$BASE/sim" > "$BASE/sim.out" 2>&1 &&
  ok "the import replays in the simulator: $(head -c 120 "$BASE/sim.out")" ||
  { bad "simulate on the import"; cat "$BASE/sim.out"; }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
