#!/usr/bin/env bash
# Feasibility before placement on a REAL Slurm cluster (issue #24, src/slurm/feasible.hpp,
# docs/slurm.md "What Slurm must also find on a node"): 4 nodes x 4 fake GPUs, node1-2 with
# 8 CPUs, 16 GB and 50 GB of TmpDisk, node3-4 with 64 CPUs, 64 GB and 400 GB (start-cluster.sh
# NODE_CPUS, NODE_MEMORY, NODE_TMP);
# no slurmdbd (tenant_source: config); jobs submitted by an unprivileged user.
#  1. three 4-GPU jobs with --mem=32G (12 GPUs for the 8 of the big nodes: one waits although
#     node1-2 are idle), one with --cpus-per-task=32, one with --tmp=100G, two 2-GPU jobs
#     --exclude=node3,node4:
#     each completes on a node that holds it (scontrol show job: NodeList);
#     with node Features node1 fast, node2 slow, node3 fast+bigmem, node4 bigmem (NODE_FEATURES):
#     two --constraint=fast jobs complete on node1/node3, one 'fast&bigmem' on node3;
#  2. more memory than any node (--mem=128G), more --tmp (--tmp=1000G), every node excluded, --constraint='slow&bigmem'
#     (features no node has together: Slurm's BadConstraints, it would wait for good): never
#     started (refused by Slurm at submit, or cancelled by DeepShare with the reason in the
#     AdminComment); a constraint in a form DeepShare does not read ('[fast|bigmem]') likewise;
#  2b. what jobs on a node hold: two 2-GPU --mem=40G jobs and two 2-GPU --cpus-per-task=40
#     jobs (each pair fits a big node's 4 GPUs but not its 64 GB or 64 CPUs) each run side by
#     side, one on node3 and one on node4, started within 5 s;
#  2c. what jobs outside DeepShare's partition hold: a CPU-only job of partition `other` on
#     node3 with --mem=40G; two 2-GPU --mem=40G jobs then both complete on node4;
#  3. a maintenance reservation on node1-2 starting in a minute: jobs without a time limit
#     complete on node3-4 only, a job naming the reservation is refused by the gate;
#  4. the gate refuses --exclusive=user and --nodelist at submit, and the owner's later memory,
#     CPU, --tmp or constraint update (scontrol update MinMemoryNode=, NumCPUs=, MinTmpDiskNode=,
#     Features=): the node
#     mask is read once;
#  5. no start was rolled back (the controller logs no start_timeout: a start Slurm cannot
#     honour is rolled back after KillWait + start_margin_s), no error logged.
# Checked to fail: with the node mask left out of SlurmAdapter::spec_of, two --mem=32G jobs
# were pinned to node1/node2 and both --exclude jobs to node4; Slurm never started them and
# 5 checks failed (every job ended, NodeList). No start_timeout was logged in that run either:
# those starts stayed in flight for the whole minute (reported, issue #24). With the
# reservation's hold left out (SlurmAdapter::engine_nodes), two jobs of (3) were pinned to
# node1/node2 again and again: 16 start_timeout rollbacks in a minute, 3 checks failed.
# With the held-share check left out (headroom.hpp, SlurmAdapter::held_refusal_of), each pair
# of 2b ran one after the other on one node (node3 18:57:49 and node3 18:58:00) and two starts
# per policy were rolled back: 6 checks failed. With the share of jobs outside the model left
# out (SlurmAdapter::held_at), a --mem=40G job of 2c was pinned to node3 beside partition
# other's job, Slurm left it pending and it was rolled back (start_timeout: 1, 1 check failed;
# it then ran on node4, the node learned).
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/feasible_test.sh BUILD_BIN_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
POLICIES=${POLICIES:-deepshare kueue}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsf slurmctld slurmd munged sbatch useradd runuser
CTL_PID=""
USERS=""
stop_ctl() { [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null && wait "$CTL_PID" 2>/dev/null; CTL_PID=""; }
cleanup() {
  stop_ctl
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE"/ctl-*.log "$DS_TEST_LOG_DIR/" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
  for u in $USERS; do userdel "$u" 2>/dev/null; done
}
trap cleanup EXIT
NODES=4 GPUS=4 NODE_CPUS="8 8 64 64" NODE_MEMORY="16000 16000 64000 64000" OTHER_PARTITION=other \
  NODE_TMP="50000 50000 400000 400000" NODE_FEATURES="fast slow fast,bigmem bigmem" \
  "$SRC/scripts/slurm/start-cluster.sh" > "$BASE/start-cluster.log" 2>&1 ||
  { echo "FAIL: cluster did not start"; tail -20 "$BASE/start-cluster.log"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
mkdir -p "$O"
chmod 777 "$O"
alice=dsf$(printf '%04x' $((RANDOM)))
useradd -M -s /bin/bash "$alice" || { echo "FAIL: useradd $alice"; exit 1; }
USERS=$alice
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
chmod 755 "$O/job.sh"
sub() { # seconds sbatch-options... (as alice, account alpha)
  local s=$1; shift
  (cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
    sbatch --parsable -A alpha -o /dev/null "$@" "$O/job.sh" "$s")
}
ran_on() { # job regex: it completed, on a node matching it
  [ "$(field "$1" JobState)" = COMPLETED ] && [[ $(field "$1" NodeList) =~ ^($2)$ ]]
}
never_ran() { # job [reason]: refused at submit (no id) or cancelled by DeepShare, never started
  [ -z "$1" ] && return 0
  [ "$(field "$1" JobState)" = CANCELLED ] && [ "$(field "$1" RunTime)" = 00:00:00 ] &&
    scontrol show job "$1" -o | grep -q "AdminComment=[^ ]*x=${2:-Slurm can start this job}"
}
cat > "$BASE/ctl.yaml" <<YAML
partition: batch
policy: POLICY
tenant_source: config
poll_ms: 100
start_margin_s: 5
tenants:
  - {name: alpha, account: alpha, quota_gpus: 16, slo_queue_s: 2}
YAML
for P in $POLICIES; do
  echo "== policy $P"
  LOG=$BASE/ctl-$P.log
  sed "s/^policy: POLICY/policy: $P/" "$BASE/ctl.yaml" > "$BASE/ctl-$P.yaml"
  "$BIN/deepshare" slurm run --config "$BASE/ctl-$P.yaml" >"$LOG" 2>&1 &
  CTL_PID=$!
  wait_for 50 grep -q '"event":"controller_ready"' "$LOG"
  big=(); for _ in 1 2 3; do big+=("$(sub 4 --gres=gpu:4 --mem=32G)"); done
  cpu=$(sub 4 --gres=gpu:1 --cpus-per-task=32)
  tmp=$(sub 4 --gres=gpu:1 --tmp=100G)
  tmpx=$(sub 1 --gres=gpu:1 --tmp=1000G 2>/dev/null)
  exc=(); for _ in 1 2; do exc+=("$(sub 4 --gres=gpu:2 --exclude=node3,node4)"); done
  huge=$(sub 1 --gres=gpu:1 --mem=128G 2>/dev/null)
  none=$(sub 1 --gres=gpu:1 --exclude='node[1-4]' 2>/dev/null)
  fast=(); for _ in 1 2; do fast+=("$(sub 4 --gres=gpu:2 --constraint=fast)"); done
  both=$(sub 4 --gres=gpu:2 --constraint='fast&bigmem')
  apart=$(sub 1 --gres=gpu:1 --constraint='slow&bigmem' 2>/dev/null)
  form=$(sub 1 --gres=gpu:1 --constraint='[fast|bigmem]' 2>/dev/null)
  if [ "$P" = "${POLICIES%% *}" ]; then
    # The gate: --exclusive=user refused at submit; the owner's memory/CPU update refused
    # (the node mask is read once). A job held by its owner stays pending meanwhile.
    out=$(sub 1 --gres=gpu:1 --exclusive=user 2>&1); rc=$?
    check "gate: --exclusive=user refused ($out)" \
      sh -c "[ $rc != 0 ] && echo \"\$1\" | grep -q 'exclusive=user and --exclusive=mcs are not supported'" _ "$out"
    held=$(sub 1 --gres=gpu:1 --mem=8G --hold)
    out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
      scontrol update job="$held" MinMemoryNode=32000 2>&1); rc=$?
    check "gate: the owner's memory update refused ($out)" \
      sh -c "[ $rc != 0 ] && [ \"\$(scontrol show job $held -o | grep -o 'MinMemoryNode=[^ ]*')\" = MinMemoryNode=8G ]"
    out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
      scontrol update job="$held" NumCPUs=32 2>&1); rc=$?
    check "gate: the owner's CPU update refused ($out)" sh -c "[ $rc != 0 ]"
    out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
      scontrol update job="$held" MinTmpDiskNode=200000 2>&1); rc=$?
    check "gate: the owner's --tmp update refused ($out)" \
      sh -c "[ $rc != 0 ] && scontrol show job $held -o | grep -q 'MinTmpDiskNode=0 '"
    out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
      scontrol update job="$held" Features=bigmem 2>&1); rc=$?
    check "gate: the owner's --constraint update refused ($out)" \
      sh -c "[ $rc != 0 ] && ! scontrol show job $held -o | grep -q 'Features=bigmem'"
    scancel "$held"
  fi
  wait_for 300 all_gone
  check "$P: every job ended" all_gone
  for j in "${big[@]}"; do check "$P: --mem=32G job $j completed on node3/node4 ($(field "$j" NodeList))" ran_on "$j" 'node[34]'; done
  check "$P: --cpus-per-task=32 job $cpu completed on node3/node4 ($(field "$cpu" NodeList))" ran_on "$cpu" 'node[34]'
  check "$P: --tmp=100G job $tmp completed on node3/node4 ($(field "$tmp" NodeList))" ran_on "$tmp" 'node[34]'
  check "$P: --tmp=1000G never started (${tmpx:-refused by Slurm at submit})" never_ran "$tmpx"
  for j in "${exc[@]}"; do check "$P: --exclude job $j completed on node1/node2 ($(field "$j" NodeList))" ran_on "$j" 'node[12]'; done
  check "$P: --mem=128G never started (${huge:-refused by Slurm at submit})" never_ran "$huge"
  check "$P: every node excluded never started (${none:-refused by Slurm at submit})" never_ran "$none"
  for j in "${fast[@]}"; do check "$P: --constraint=fast job $j completed on node1/node3 ($(field "$j" NodeList))" ran_on "$j" 'node[13]'; done
  check "$P: --constraint='fast&bigmem' job $both completed on node3 ($(field "$both" NodeList))" ran_on "$both" node3
  check "$P: --constraint='slow&bigmem' (no node has both) never started (${apart:-refused by Slurm at submit})" never_ran "$apart"
  check "$P: --constraint='[fast|bigmem]' never started (${form:-refused by Slurm at submit}: $(field "$form" AdminComment | cut -c1-80))" \
    never_ran "$form" 'DeepShare reads a --constraint'
  # What the jobs on a node hold (headroom.hpp): two 2-GPU jobs of 40 GB fit node3's GPUs
  # together but not its 64 GB, two of 40 CPUs not its 64 CPUs. Each pair runs side by side,
  # one job per big node: a start packed beside its twin moves to the other node.
  mem=(); for _ in 1 2; do mem+=("$(sub 10 --gres=gpu:2 --mem=40G)"); done
  cpus=(); for _ in 1 2; do cpus+=("$(sub 10 --gres=gpu:2 --cpus-per-task=40)"); done
  wait_for 300 all_gone
  started() { date -d "$(field "$1" StartTime)" +%s 2>/dev/null || echo 0; }
  apart() { # job job: completed on node3 and node4, one each, started within 5 s
    ran_on "$1" 'node[34]' && ran_on "$2" 'node[34]' && [ "$(field "$1" NodeList)" != "$(field "$2" NodeList)" ] &&
      [ $(($(started "$1") - $(started "$2"))) -le 5 ] && [ $(($(started "$2") - $(started "$1"))) -le 5 ]
  }
  check "$P: two --mem=40G jobs ran side by side on node3 and node4 ($(field "${mem[0]}" NodeList) $(field "${mem[0]}" StartTime), $(field "${mem[1]}" NodeList) $(field "${mem[1]}" StartTime))" \
    apart "${mem[0]}" "${mem[1]}"
  check "$P: two --cpus-per-task=40 jobs ran side by side on node3 and node4 ($(field "${cpus[0]}" NodeList) $(field "${cpus[0]}" StartTime), $(field "${cpus[1]}" NodeList) $(field "${cpus[1]}" StartTime))" \
    apart "${cpus[0]}" "${cpus[1]}"
  # What jobs outside DeepShare's partition hold: a CPU-only job of partition `other` (the
  # same nodes) holds 40 GB of node3 while two 2-GPU --mem=40G jobs come: node3's GPUs are
  # free but its memory is not, so both run on node4, one after the other.
  outside=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" \
    sbatch --parsable -p other -A alpha -o /dev/null -w node3 --mem=40G "$O/job.sh" 25)
  running() { [ "$(field "$1" JobState)" = RUNNING ]; }
  wait_for 50 running "$outside"
  twin=(); for _ in 1 2; do twin+=("$(sub 4 --gres=gpu:2 --mem=40G)"); done
  wait_for 300 all_gone
  for j in "${twin[@]}"; do
    check "$P: --mem=40G job $j ran on node4, beside partition other's 40 GB job on node3 ($(field "$j" NodeList))" \
      ran_on "$j" node4
  done
  scancel "$outside" 2>/dev/null
  # A maintenance reservation on node1-2 from a minute from now: jobs without a time limit
  # (MaxTime=INFINITE) would reach it, so Slurm would not start them there; DeepShare keeps
  # them on node3-4. A job naming the reservation is refused by the gate.
  scontrol create reservation reservationname=maint$P starttime=now+60 duration=1 \
    nodes=node1,node2 flags=maint users=root > /dev/null
  # Nodes are read every 5th cycle: wait until the controller holds both (its node_down log).
  wait_for 50 sh -c "[ \$(grep -c '\"state\":\"RESERVED(maint$P)\"' '$LOG') -ge 2 ]"
  out=$(sub 1 --gres=gpu:1 --reservation=maint$P 2>&1); rc=$?
  check "$P: gate: --reservation refused ($out)" \
    sh -c "[ $rc != 0 ] && echo \"\$1\" | grep -q -- '--reservation is not supported'" _ "$out"
  out=$(sub 1 --gres=gpu:1 --nodelist=node3 2>&1); rc=$?
  check "$P: gate: --nodelist refused ($out)" \
    sh -c "[ $rc != 0 ] && echo \"\$1\" | grep -q -- '--nodelist (-w) is not supported'" _ "$out"
  resv=(); for _ in 1 2 3 4; do resv+=("$(sub 3 --gres=gpu:4)"); done
  wait_for 300 all_gone
  for j in "${resv[@]}"; do check "$P: job $j kept off the reserved nodes ($(field "$j" NodeList))" ran_on "$j" 'node[34]'; done
  scontrol delete reservationname=maint$P
  check "$P: no start rolled back (start_timeout: $(grep -c '"event":"start_timeout"' "$LOG"))" \
    sh -c "! grep -q '\"event\":\"start_timeout\"' '$LOG'"
  check "$P: no error logged" sh -c "! grep -q '\"level\":\"error\"' '$LOG'"
  stop_ctl
  scancel -p batch 2>/dev/null; wait_for 100 all_gone
done
echo "$pass passed, $fail failed"
if [ "$fail" != 0 ]; then for P in $POLICIES; do echo "--- $P controller log (tail)"; tail -n 30 "$BASE/ctl-$P.log"; done; fi
[ "$fail" = 0 ]
