#!/usr/bin/env bash
# GPU models on a REAL Slurm cluster (scripts/slurm/start-cluster.sh: 4 nodes x 4 fake GPUs,
# node1-2 with Features=a100, node3-4 with Features=v100, the gate with gpu_model = a100,
# v100, h100; no slurmdbd: tenant_source: config). docs/slurm.md "GPU models".
#  1. the gate: --gres=gpu:t4:1 is refused naming the partitions' models; --gres=gpu:v100:4
#     and --constraint=a100 are accepted, the model recorded (gm=), the GRES untyped;
#  2. for each of POLICIES (default: deepshare kueue): three 4-GPU v100 jobs (12 GPUs for 8
#     v100 GPUs: one waits although an a100 node is idle) and two 2-GPU a100 jobs each run
#     on nodes of their model (scontrol show job: NodeList), and end;
#  3. h100 (listed by the gate, on no node): cancelled by the controller, the reason in the
#     AdminComment (x=) naming the nodes' models;
#  4. `deepshare slurm check` prints the GPUs per model and a listed model on no node.
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/gpu_models_test.sh BUILD_BIN_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
POLICIES=${POLICIES:-deepshare kueue}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsg slurmctld slurmd munged sbatch
CTL_PID=""
stop_ctl() { [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null && wait "$CTL_PID" 2>/dev/null; CTL_PID=""; }
cleanup() {
  stop_ctl
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE"/ctl-*.log "$DS_TEST_LOG_DIR/" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
NODES=4 GPUS=4 NODE_FEATURES="a100 a100 v100 v100" GPU_MODEL="a100, v100, h100" \
  "$SRC/scripts/slurm/start-cluster.sh" > "$BASE/start-cluster.log" 2>&1 ||
  { echo "FAIL: cluster did not start"; tail -20 "$BASE/start-cluster.log"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
mkdir -p "$O"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "PASS [${SECONDS}s] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL [${SECONDS}s] $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done; return 1; }
all_gone() { [ -z "$(squeue -h -p batch -o %i 2>/dev/null)" ]; }
field() { scontrol show job "$1" -o 2>/dev/null | grep -o " $2=[^ ]*" | cut -d= -f2-; }
cat > "$O/job.sh" <<'JOB'
#!/bin/bash
sleep "$1"
JOB
chmod +x "$O/job.sh"
sub() { # account seconds sbatch-options...
  local a=$1 s=$2; shift 2
  sbatch --parsable -A "$a" -o "$O/%j.out" "$@" "$O/job.sh" "$s"
}

# 1. the gate
out=$(sub alpha 1 --gres=gpu:t4:1 2>&1); rc=$?
check "gate: an unlisted model is refused naming the models ($out)" \
  sh -c "[ $rc != 0 ] && echo \"\$1\" | grep -q \"no 't4' GPUs (its GPU models: a100, v100, h100)\"" _ "$out"

cat > "$BASE/ctl.yaml" <<YAML
partition: batch
policy: POLICY
tenant_source: config
poll_ms: 100
start_margin_s: 10
gpu_memory_mib: 24576
gpu_models: {a100: 24576, v100: 16384}
tenants:
  - {name: alpha, account: alpha, quota_gpus: 8, slo_queue_s: 2}
  - {name: beta, account: beta, quota_gpus: 8, slo_queue_s: 2}
YAML
# `slurm check` finds the models on the nodes (no slurmdbd: no accounts, the models only)
sed "s/^policy: POLICY/policy: deepshare/" "$BASE/ctl.yaml" > "$BASE/check.yaml"
"$BIN/deepshare" slurm check --config "$BASE/check.yaml" > "$BASE/check.txt" 2>&1
check "slurm check: GPUs per model ($(grep -m1 'GPU models' "$BASE/check.txt"))" \
  grep -q 'GPU models (node Features in gpu_models): a100 8 GPUs v100 8 GPUs, untyped 0 GPUs' "$BASE/check.txt"
sed -i 's/^gpu_models: .*/gpu_models: {a100: 24576, v100: 16384, h100: 81920}/' "$BASE/check.yaml"
"$BIN/deepshare" slurm check --config "$BASE/check.yaml" > "$BASE/check2.txt" 2>&1; rc=$?
check "slurm check: a model on no node is a problem (rc $rc)" sh -c \
  "[ $rc != 0 ] && grep -q '^problem: no node of partition batch has Feature h100' '$BASE/check2.txt'"
ran_on() { # job model: it completed, on a node of that model (node1-2: a100, node3-4: v100)
  local nodes; nodes=$(field "$1" NodeList)
  [ "$(field "$1" JobState)" = COMPLETED ] || return 1
  case $2 in a100) [[ $nodes =~ ^node[12]$ ]] ;; v100) [[ $nodes =~ ^node[34]$ ]] ;; *) false ;; esac
}
for P in $POLICIES; do
  echo "== policy $P"
  LOG=$BASE/ctl-$P.log
  sed "s/^policy: POLICY/policy: $P/" "$BASE/ctl.yaml" > "$BASE/ctl-$P.yaml"
  "$BIN/deepshare" slurm run --config "$BASE/ctl-$P.yaml" >"$LOG" 2>&1 &
  CTL_PID=$!
  wait_for 50 grep -q '"event":"controller_ready"' "$LOG"
  v=(); for a in beta beta alpha; do v+=("$(sub "$a" 5 --gres=gpu:v100:4)"); done
  a1=$(sub alpha 5 --gres=gpu:a100:2); a2=$(sub alpha 5 --constraint=a100 --gres=gpu:2)
  check "$P: gate recorded the models, GRES untyped" sh -c \
    "scontrol show job ${v[0]} | grep -q 'AdminComment=ds:v=1;gpus=4;n=1;nr=0;gm=v100' && scontrol show job $a2 | grep -q 'gm=a100' && ! scontrol show job ${v[0]} | grep -q 'TresPerNode=.*v100'"
  wait_for 300 all_gone
  check "$P: every job ended" all_gone
  for j in "${v[@]}"; do check "$P: v100 job $j completed on a v100 node ($(field "$j" NodeList))" ran_on "$j" v100; done
  for j in "$a1" "$a2"; do check "$P: a100 job $j completed on an a100 node ($(field "$j" NodeList))" ran_on "$j" a100; done
  check "$P: no error logged" sh -c "! grep -q '\"level\":\"error\"' '$LOG'"
  if [ "$P" = "${POLICIES%% *}" ]; then
    # 3. a model the gate lists but no node has: refused by the controller
    h=$(sub alpha 1 --gres=gpu:h100:1)
    wait_for 50 sh -c "[ \"\$(scontrol show job $h -o | grep -o 'JobState=[A-Z]*')\" = JobState=CANCELLED ]"
    check "h100 job cancelled with the reason in its AdminComment" \
      sh -c "scontrol show job $h -o | grep -q \"x=no node has GPU model 'h100': partition 'batch' has GPU models: a100 (2 nodes), v100 (2 nodes)\""
  fi
  stop_ctl
  scancel -p batch 2>/dev/null; wait_for 100 all_gone
done
echo "$pass passed, $fail failed"
if [ "$fail" != 0 ]; then for P in $POLICIES; do echo "--- $P controller log (tail)"; tail -n 30 "$BASE/ctl-$P.log"; done; fi
[ "$fail" = 0 ]
