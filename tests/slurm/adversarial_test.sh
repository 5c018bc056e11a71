#!/usr/bin/env bash
# Adversarial suite: hostile and careless users against DeepShare on a REAL Slurm cluster
# (scripts/slurm/start-cluster.sh: 4 nodes x 4 fake GPUs, the submission gate, slurmdbd +
# MariaDB with accounts alpha/beta (GrpTRES=gres/gpu=8) and scav (0), a second partition
# `other` on node3-4, KillWait 10 s). The users are unprivileged local accounts created
# (and removed) by this test. Cases: refusals at submit (forged pins, AdminComment,
# impossible shapes, unknown accounts, users without an association, the sharing GRES);
# a job without --hold; forged updates (pin in the Comment, AdminComment, StartTime, GRES,
# node count, partition) on pending and running jobs, across a controller kill -9;
# --gres=gpu:N, -G N, --gpus-per-task, --gres=gpu:a100:N; a 2-node job; an array of
# 6 x 4 GPUs; a dependency on a long job; --begin; a --no-requeue job; reclaim with
# preemption; scancel during a long KillWait; jobs of the second partition on the same
# nodes; a finished job requeued by its user (with and without a controller running: the
# PrologSlurmctld refuses Slurm's own start); a preempted job held and released by its user;
# a node failure (the requeued job reclaims a borrower when its SLO is due);
# a quota change by sacctmgr without a restart, and a quota cut that makes running jobs
# borrowers (reclaimed by an entitled job).
# Every case is checked from Slurm's own records and the jobs' outputs; at the end, from
# ~4 samples a second of `scontrol -d show job` and from every job's start/end lines:
# no GPU ever held by two non-shared jobs at once, no tenant ever above its quota on
# non-borrowed GPUs.
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/adversarial_test.sh BUILD_BIN_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsv slurmctld slurmd slurmdbd mariadbd munged sbatch useradd runuser
[ -x "$BIN/slurm_forge" ] || { echo "FAIL: no $BIN/slurm_forge"; exit 1; }
CTL_PID=""; SAMPLER_PID=""; USERS=""
cleanup() {
  rm -f "$BASE/sampling"
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null && wait "$SAMPLER_PID" 2>/dev/null
  [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null && wait "$CTL_PID" 2>/dev/null
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE/ctl.log" "$DS_TEST_LOG_DIR/adv-$(basename "$BASE").log" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
  for u in $USERS; do userdel "$u" 2>/dev/null; done
}
trap cleanup EXIT
T0=$SECONDS
NODES=4 GPUS=4 ACCOUNTING=1 ACCOUNTS=alpha:8,beta:8,scav:0 OTHER_PARTITION=other \
  OTHER_NODES='node[3-4]' KILL_WAIT=10 "$SRC/scripts/slurm/start-cluster.sh" >/dev/null ||
  { echo "FAIL: cluster did not start"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
install -m 755 "$BIN/slurm_forge" "$BASE/forge"

# Unprivileged users: alice (alpha), bob (beta), dave (scav), nemo (no association), and the
# controller's own user ctl: no root, only Slurm's AdminLevel=Administrator and a place in the
# gate's operators (what deploy/deepshare-slurm.service documents).
tag=$(printf '%04x' $((RANDOM)))
alice=dsa$tag; bob=dsb$tag; dave=dsd$tag; nemo=dsn$tag; ctl=dsc$tag
for u in $alice $bob $dave $nemo $ctl; do
  useradd -M -s /bin/bash "$u" || { echo "FAIL: useradd $u"; exit 1; }
  USERS="$USERS $u"
done
sacctmgr -i add user "$alice" Account=alpha >/dev/null
sacctmgr -i add user "$bob" Account=beta >/dev/null
sacctmgr -i add user "$dave" Account=scav >/dev/null
sacctmgr -i add user "$ctl" Account=alpha AdminLevel=Administrator >/dev/null
sed -i "s/^operators = .*/operators = 0, $(id -u "$ctl")/" "$BASE/etc/deepshare_gate.conf"
install -d -m 750 -o "$ctl" "$BASE/ctl-state"

pass=0; fail=0
ok() { pass=$((pass + 1)); echo "PASS [$((SECONDS - T0))s] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL [$((SECONDS - T0))s] $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }
as() { local u=$1; shift; (cd "$O" && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"); }
state() { squeue -h -j "$1" -o %T 2>/dev/null; }
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done; return 1; }
is_state() { [ "$(state "$1")" = "$2" ]; }
ended() { local s; s=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z]*' | cut -d= -f2)
  case $s in COMPLETED | CANCELLED | FAILED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL | "") return 0 ;; esac; return 1; }
all_ended() { for j in "$@"; do ended "$j" || return 1; done; }
field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
rec() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p'; }
key() { rec "$1" | tr ';' '\n' | sed -n "s/^$2=//p"; }
alloc() { # node@i,j/... from Slurm's own allocation record (GRES IDX per node)
  scontrol show job -d "$1" | sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=\([^ ]*\).*/\1 \2/p' |
    while read -r n g; do
      for h in $(scontrol show hostnames "$n"); do
        echo "$h@$(echo "$g" | grep -o 'IDX:[0-9,-]*' | cut -d: -f2 | paste -sd,)"
      done
    done | paste -sd/
}
epoch() { date -d "$1" +%s 2>/dev/null || echo 0; }
cat > "$O/job.sh" <<'JOB'
#!/bin/bash
# start/end lines with the time, the node, the GPUs the job was given and whether it is a
# colocated (shared) job; on SIGTERM it "checkpoints" for TERM_WAIT seconds
say() { echo "$1 $(date +%s.%N) job=$SLURM_JOB_ID node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES shared=${DEEPSHARE_SHARED:-0} restart=${SLURM_RESTART_COUNT:-0}"; }
say start
trap 'say term; sleep "${TERM_WAIT:-0}"; say end; exit 0' TERM
sleep "$1" & wait
say end
JOB
chmod 755 "$O/job.sh"
sub() { # user account seconds sbatch-options...  -> job id (stdout), sbatch's messages in $BASE/last.err
  local u=$1 a=$2 s=$3; shift 3
  as "$u" sbatch --parsable -A "$a" -o "$O/%j.out" --open-mode=append "$@" "$O/job.sh" "$s" 2>"$BASE/last.err"
}
refused() { # name pattern user sbatch-options... : refused, with a message matching pattern
  local n=$1 pat=$2 u=$3; shift 3
  local out
  out=$(cd "$O" && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -o /dev/null "$@" --wrap true 2>&1)
  if [ $? -ne 0 ] && echo "$out" | grep -q -- "$pat"; then ok "refused: $n ($(echo "$out" | head -1 | cut -c1-150))"
  else bad "refused: $n (got: $out)"; fi
}

# Slurm's own view, sampled: time job state partition account b s nodes gres
touch "$BASE/sampling"
(
  while [ -f "$BASE/sampling" ]; do
    t=$(date +%s.%N)
    scontrol -d -o show job 2>/dev/null | awk -v t="$t" '
      { job = ""; st = ""; part = ""; acct = ""; b = "-"; s = "-"
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^JobId=/) job = substr($i, 7)
          else if ($i ~ /^JobState=/) st = substr($i, 10)
          else if ($i ~ /^Partition=/) part = substr($i, 11)
          else if ($i ~ /^Account=/) acct = substr($i, 9)
          else if ($i ~ /^AdminComment=/) { n = split(substr($i, 14), kv, ";")
            for (k = 1; k <= n; k++) { if (kv[k] ~ /^b=/) b = substr(kv[k], 3); if (kv[k] ~ /^s=/) s = substr(kv[k], 3) } }
          else if ($i ~ /^Nodes=/) nodes = substr($i, 7)
          else if ($i ~ /^GRES=/ && nodes != "") { seg[++ns] = nodes " " substr($i, 6); nodes = "" } }
        for (k = 1; k <= ns; k++) print t, job, st, part, acct, b, s, seg[k]
        ns = 0 }'
    sleep 0.25
  done >> "$BASE/samples"
) &
SAMPLER_PID=$!
# The controller runs as its own unprivileged user (setpriv execs: CTL_PID is the controller);
# its config is the suite's with a state_dir that user owns.
sed "s|^partition: batch|state_dir: $BASE/ctl-state\npartition: batch|" "$SRC/tests/slurm/adversarial.yaml" > "$BASE/ctl.yaml"
chmod 644 "$BASE/ctl.yaml"
start_ctl() {
  setpriv --reuid="$ctl" --regid="$(id -g "$ctl")" --init-groups -- env SLURM_CONF="$SLURM_CONF" \
    "$BIN/deepshare" slurm run --config "$BASE/ctl.yaml" --metrics 127.0.0.1:0 >>"$BASE/ctl.log" 2>&1 &
  CTL_PID=$!
}

echo "== 1. refusals at submit (no controller running)"
refused "unknown GPU model" "no 'v100' GPUs" "$alice" -A alpha --gres=gpu:v100:1
refused "GPU index types" "indices" "$alice" -A alpha --gres=gpu:g1:1
refused "2 nodes x 2 GPUs (not whole nodes)" "whole nodes" "$alice" -A alpha -N 2 --gres=gpu:2
refused "6 GPUs (more than a node, not whole nodes)" "whole nodes" "$alice" -A alpha -G 6
refused "forged pin in --comment" "only the scheduler writes them" "$alice" -A alpha --gres=gpu:4 \
  --comment='ds:r=0;b=0;s=0;g=node4@0,1,2,3;m=100;gpus=4;mem=22000'
refused "the sharing GRES in another partition" "sharing slot" "$alice" -A alpha -p other --gres=gpushare:g0:1
refused "DeepShare and another partition at once" "not both" "$alice" -A alpha -p batch,other --gres=gpu:1
refused "an account the user does not belong to" "Invalid account" "$bob" -A alpha --gres=gpu:1
refused "an account that does not exist" "Invalid account" "$bob" -A nosuch --gres=gpu:1
refused "a user without any Slurm account" "has no Slurm account" "$nemo" --gres=gpu:1
refused "a GPU index type named from another partition (-p other --gres=gpu:g1)" "indices" \
  "$alice" -A alpha -p other --gres=gpu:g1
refused "a hint the controller could not read (mem=nan)" "mem=" "$alice" -A alpha --gres=gpu:1 --comment=ds:mem=nan
refused "a hint the controller could not read (u=0x10)" "u=" "$alice" -A alpha --gres=gpu:1 --comment=ds:u=0x10
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH hetjob\n#SBATCH --gres=gpu:1\ntrue\n' > "$O/het.sh"
chmod 644 "$O/het.sh"
out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -A alpha -o /dev/null "$O/het.sh" 2>&1)
check "refused: a heterogeneous job, with a message ($(echo "$out" | grep DeepShare | head -1 | cut -c1-120))" \
  sh -c "! echo '$out' | grep -qx '[0-9]*' && echo '$out' | grep -q 'heterogeneous jobs'"
out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -A alpha -o /dev/null \
  --gres=gpu:1 --wrap true : -p other --gres=gpu:1 2>&1)
check "refused: a heterogeneous job with a component in another partition ($(echo "$out" | grep DeepShare | head -1 | cut -c1-80))" \
  sh -c "! echo '$out' | grep -qx '[0-9]*'"
# an existing state_dir another user made (or could write) is not trusted
install -d -m 777 -o "$alice" "$BASE/alice-state"
sed "s|^partition: batch|state_dir: $BASE/alice-state\npartition: batch|" "$SRC/tests/slurm/adversarial.yaml" > "$BASE/bad-state.yaml"
timeout 20 "$BIN/deepshare" slurm run --config "$BASE/bad-state.yaml" --metrics 127.0.0.1:0 > "$BASE/bad-state.out" 2>&1; rc=$?
check "refused: a state_dir made by another user, mode 0777 (rc $rc: $(grep -o 'state_dir [^;]*' "$BASE/bad-state.out" | head -1))" \
  sh -c "[ $rc -ne 0 ] && grep -q 'owned by uid $(id -u "$alice")\|writable by group or others' $BASE/bad-state.out"
out=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" "$BASE/forge" submit-admin-comment batch alpha \
  'ds:v=1;gpus=4;n=1;nr=0;r=0;b=0;s=0;g=node1@0,1,2,3;m=100' 2>&1)
check "refused: AdminComment at submit through libslurm ($out)" sh -c "echo '$out' | grep -q 'refused: Access/permission denied'"
nr0=$(sub "$dave" scav 5 --no-requeue --gres=gpu:1)
check "accepted with a warning: --no-requeue of a best-effort account ($(head -1 "$BASE/last.err"))" \
  grep -q "never on borrowed" "$BASE/last.err"

echo "== 2. a job without --hold, forged updates while no controller runs"
p1=$(sub "$alice" alpha 12 --gres=gpu:2)
sleep 3
check "no controller: job $p1 waits parked, Slurm does not start it" sh -c "[ \"\$(squeue -h -j $p1 -o %T:%r)\" = PENDING:BeginTime ]"
e=$(as "$alice" scontrol update JobId="$p1" Comment='ds:r=0;b=0;s=0;g=node1@0,1' 2>&1)
check "refused: pin in the Comment by scontrol update ($e)" sh -c "echo '$e' | grep -q 'Access/permission denied'"
e=$(as "$alice" "$BASE/forge" update-admin-comment "$p1" 'ds:v=1;gpus=2;n=1;nr=0;r=0;b=0;s=0;g=node1@0,1;m=100' 2>&1)
check "refused: AdminComment by update ($e)" sh -c "echo '$e' | grep -q 'refused: Access/permission denied'"
e=$(as "$alice" scontrol update JobId="$p1" Gres=gpu:g0:1 2>&1)
check "refused: GRES by scontrol update ($e)" sh -c "echo '$e' | grep -q 'Invalid generic resource'"
e=$(as "$alice" scontrol update JobId="$p1" NumNodes=2 2>&1)
check "refused: node count by scontrol update ($e)" sh -c "echo '$e' | grep -qi 'node count'"
e=$(as "$alice" scontrol update JobId="$p1" Partition=other 2>&1)
check "refused: moving the job to another partition ($e)" sh -c "echo '$e' | grep -qi 'partition'"
e=$(as "$alice" scontrol update JobId="$p1" StartTime=now+3600 2>&1); rc=$?
check "StartTime=now+3600 by the user: allowed (rc $rc${e:+: $e}), recorded as the job's begin" \
  sh -c "[ $rc = 0 ] && scontrol show job $p1 | grep -q 'Comment=ds:begin=[0-9]'"
e=$(as "$alice" scontrol update JobId="$p1" StartTime=now 2>&1); rc=$?
sleep 2
check "StartTime=now by the user: allowed (rc $rc${e:+: $e}), the job stays parked for DeepShare" \
  sh -c "[ $rc = 0 ] && [ \"\$(squeue -h -j $p1 -o %T:%r)\" = PENDING:BeginTime ] && scontrol show job $p1 | grep -q 'EligibleTime=2100' && scontrol show job $p1 | grep -q 'Comment=ds:begin=0'"
start_ctl

echo "== 3. every form of GPU request; a 2-node job"
# a job whose PATH starts with its own scontrol: the TaskProlog must not run it
mkdir -p "$O/evil" && printf '#!/bin/sh\ntouch %s/evil/ran\nexit 1\n' "$O" > "$O/evil/scontrol"
chmod 755 "$O/evil/scontrol"; chmod 777 "$O/evil"
ev=$(cd "$O" && runuser -u "$alice" -- env SLURM_CONF="$SLURM_CONF" PATH="$O/evil:$PATH" \
  sbatch --parsable -A alpha -o "$O/%j.out" --gres=gpu:1 "$O/job.sh" 2)
f1=$(sub "$alice" alpha 10 -G 2)
f2=$(sub "$bob" beta 10 --gpus-per-task=1 -n 2)
f3=$(sub "$bob" beta 10 --gres=gpu:a100:1)
m2=$(sub "$bob" beta 6 -N 2 --gres=gpu:4)
for j in $p1 $f1 $f2 $f3 $m2; do wait_for 75 is_state "$j" RUNNING; done
wait_for 25 grep -q start "$O/$f3.out"
for pair in "$p1:2" "$f1:2" "$f2:2" "$f3:1"; do
  j=${pair%%:*}; n=${pair#*:}
  wait_for 25 grep -q start "$O/$j.out"
  g=$(sed -n 's/^start .* gpus=\([^ ]*\) .*/\1/p' "$O/$j.out" | head -1)
  a=$(alloc "$j"); pg=$(key "$j" g)
  check "job $j: $n GPU(s), CUDA_VISIBLE_DEVICES=$g = Slurm's allocation $a = DeepShare's pin $pg" \
    sh -c "[ $(echo "$g" | tr ',' '\n' | grep -c .) = $n ] && [ '$a' = '$pg' ] && [ '${a#*@}' = '$g' ]"
done
check "2-node job $m2: whole nodes, all GPUs of both ($(alloc "$m2"))" \
  sh -c "[ \"\$(scontrol show job -d $m2 | grep -o 'NumNodes=[0-9]*')\" = NumNodes=2 ] && \
         [ \"\$(echo '$(alloc "$m2")' | tr '/' '\n' | grep -c '@0,1,2,3$')\" = 2 ]"
check "no job ran before the controller started, the forged StartTime included" \
  sh -c "[ \$(grep -c start $O/$p1.out) = 1 ]"
wait_for 50 ended "$nr0"
refused_by_controller() { [ "$(field "$1" JobState)" = CANCELLED ] && rec "$1" | grep -q "x=$2"; }
check "refused by DeepShare: --no-requeue job of a best-effort account, cancelled with the reason in its AdminComment ($(rec "$nr0" | tr ';' '\n' | sed -n 's/^x=//p' | cut -c1-80)...)" \
  refused_by_controller "$nr0" "a job that cannot be requeued"
wait_for 100 all_ended $p1 $f1 $f2 $f3 $m2 $ev
check "the TaskProlog ran the cluster's scontrol, not the one in the job's PATH (job $ev: $(grep -c '^start' "$O/$ev.out" 2>/dev/null) start)" \
  sh -c "[ \"\$(grep -c '^start' $O/$ev.out 2>/dev/null)\" = 1 ] && [ ! -e $O/evil/ran ]"

echo "== 4. an array of 6 x 4 GPUs; a dependency; --begin"
arr=$(sub "$alice" alpha 4 --array=0-5 --gres=gpu:4 -o "$O/%A_%a.out")
o1=$(sub "$alice" alpha 8 -p other --gres=gpu:1)
o2=$(sub "$bob" beta 8 -p other --gres=gpu:2)
long=$(sub "$bob" beta 8 --gres=gpu:1)
dep=$(sub "$bob" beta 2 --gres=gpu:1 --dependency=afterok:"$long")
sub_t=$(date +%s)
beg=$(sub "$bob" beta 2 --gres=gpu:1 --begin=now+6)
tasks=$(for t in 0 1 2 3 4 5; do echo "${arr}_$t"; done)
wait_for 200 all_ended $tasks $long $dep $beg $o1 $o2
n_done=$(for t in $tasks; do field "$t" JobState; done | grep -c COMPLETED)
check "array: all 6 tasks completed, each on a whole node" test "$n_done" = 6
each_whole_node() { for t in $tasks; do grep -q 'gpus=0,1,2,3 ' "$O/$t.out" || return 1; done; }
check "array: tasks were scheduled one by one, each on the 4 GPUs of a node ($(cat $(for t in $tasks; do echo "$O/$t.out"; done) | grep -o 'node=node[0-9]' | paste -sd' '))" \
  each_whole_node
ds=$(epoch "$(field "$dep" StartTime)"); le=$(epoch "$(field "$long" EndTime)")
check "dependency: $dep started at $ds, after $long ended at $le" test "$ds" -ge "$le" -a "$le" -gt 0
bs=$(epoch "$(field "$beg" StartTime)")
check "--begin=now+6: started $((bs - sub_t)) s after submit" test "$((bs - sub_t))" -ge 6
other_ran() { [ "$(field "$o1" JobState)" = COMPLETED ] && [ "$(field "$o2" JobState)" = COMPLETED ] &&
  grep -q 'node=node[34]' "$O/$o1.out" && grep -q 'node=node[34]' "$O/$o2.out"; }
check "the second partition's jobs ran on the same nodes ($(grep -ho 'node=[^ ]* gpus=[^ ]*' "$O/$o1.out" "$O/$o2.out" | paste -sd' '))" \
  other_ran

echo "== 5. borrowers, forged pins on running jobs, controller kill -9, reclaim, --no-requeue, scancel in KillWait"
v1=$(TERM_WAIT=3 sub "$dave" scav 90 --gres=gpu:4 --comment=ds:mem=22000)
v2=$(TERM_WAIT=3 sub "$dave" scav 90 --gres=gpu:4 --comment=ds:mem=22000)
v3=$(TERM_WAIT=6 sub "$dave" scav 90 --gres=gpu:4 --comment=ds:mem=22000)
v4=$(TERM_WAIT=6 sub "$dave" scav 90 --gres=gpu:4 --comment=ds:mem=22000)
for j in $v1 $v2 $v3 $v4; do wait_for 75 is_state "$j" RUNNING; done
borrowing() { for j in "$@"; do [ "$(state "$j")" = RUNNING ] && [ "$(key "$j" b)" = 1 ] || return 1; done; }
check "borrowers of a zero-quota account fill the cluster on lent GPUs (b=1)" borrowing $v1 $v2 $v3 $v4
e=$(as "$dave" scontrol update JobId="$v1" Comment='ds:r=0;b=0;s=0;g=node1@0,1,2,3' 2>&1)
check "refused: pin in the Comment of a running job ($e)" sh -c "echo '$e' | grep -q 'Access/permission denied'"
e=$(as "$dave" "$BASE/forge" update-admin-comment "$v1" "$(rec "$v1" | sed 's/;b=1;/;b=0;/')" 2>&1)
check "refused: b=1 -> b=0 in the AdminComment of a running job ($e)" sh -c "echo '$e' | grep -q 'refused: Access/permission denied'"
# a pin that bypassed the gate (written by an operator): ignored, logged, counted
scontrol update JobId="$v2" Comment='ds:r=0;b=0;s=0;g=node2@0,1,2,3;m=100'
sleep 0.5
kill -9 "$CTL_PID"; wait "$CTL_PID" 2>/dev/null; CTL_PID=""
start_ctl
pins_logged() { [ "$(grep -c "\"event\":\"untrusted_pin\",\"job\":\"$v2\"" "$BASE/ctl.log")" -ge "$1" ]; }
wait_for 50 pins_logged 2
check "untrusted pin in a Comment: ignored and logged, before and after the restart" pins_logged 2
adopted_borrowed() {
  for j in "$@"; do grep -q "\"event\":\"adopt\",\"job\":\"$j\",\"borrowed\":true" "$BASE/ctl.log" || return 1; done
}
wait_for 50 adopted_borrowed $v1 $v2 $v3 $v4
check "after the restart every borrower is still borrowed (adopted with b=1)" adopted_borrowed $v1 $v2 $v3 $v4
nrq=$(sub "$alice" alpha 8 --no-requeue --gres=gpu:4)
wait_for 100 is_state "$nrq" RUNNING
check "--no-requeue job $nrq runs within its quota, never borrowed (b=0)" test "$(key "$nrq" b)" = 0
victims=$(grep -o '"event":"preempt","job":"[0-9]*"' "$BASE/ctl.log" | grep -o '[0-9]*' | sort -u | paste -sd' ')
check "reclaim on a full cluster: the entitled job preempted a borrower ($victims)" test -n "$victims"
# the user cancels a borrower that checkpoints for 6 s on SIGTERM (KillWait 10 s) while an
# entitled job needs GPUs: the cancelled job must stay cancelled, its GPUs busy until it ends
vc=""
for j in $v4 $v3; do [ "$(state "$j")" = RUNNING ] && { vc=$j; break; }; done
[ -n "$vc" ] && as "$dave" scancel "$vc"
ent=$(sub "$bob" beta 8 --gres=gpu:4)
wait_for 150 is_state "$ent" RUNNING
check "entitled job $ent runs" is_state "$ent" RUNNING
if [ -n "$vc" ]; then
  wait_for 100 ended "$vc"
  stayed_cancelled() { [ "$(field "$1" JobState)" = CANCELLED ] && [ "$(field "$1" Restarts)" = 0 ] &&
    ! grep -q "\"event\":\"preempt\",\"job\":\"$1\"" "$BASE/ctl.log" && [ "$(grep -c '^start' "$O/$1.out")" = 1 ]; }
  check "scancel during KillWait: $vc stays cancelled (never requeued, Restarts=0, never preempted, ran once)" \
    stayed_cancelled "$vc"
else
  bad "scancel during KillWait: no running borrower left to cancel"
fi
wait_for 100 all_ended "$nrq" "$ent"
check "--no-requeue job never preempted (Restarts=0, completed)" \
  test "$(field "$nrq" Restarts)" = 0 -a "$(field "$nrq" JobState)" = COMPLETED
scancel $v1 $v2 $v3 $v4 2>/dev/null
wait_for 100 all_ended $v1 $v2 $v3 $v4

echo "== 5b. what Slurm would start by itself: a finished job requeued, a preempted job held and released"
# (issue #24) Only DeepShare starts a job of its partition: the PrologSlurmctld refuses any
# other start before the job runs (deploy/slurm/prolog-slurmctld.sh), the controller takes a
# finished job its user requeued as a new arrival, and a user's hold stays theirs.
refusals() { grep -c "prolog_slurmctld JobId=$1 prolog exit status" "$BASE/log/slurmctld.log"; }
starts() { grep -c '^start' "$O/$1.out" 2>/dev/null; }
rq=$(sub "$alice" alpha 1 --gres=gpu:2)
wait_for 75 ended "$rq"
# finished as the controller saw it too: requeued before its next poll, the job would look to
# it like a running job Slurm requeued (restarted as such: r=1, no job_returned; seen in 2 of
# 3 runs with other tests loading the 2 cores)
wait_for 150 grep -q "\"event\":\"job_end\",\"job\":\"$rq\"" "$BASE/ctl.log"
e=$(as "$alice" scontrol requeue "$rq" 2>&1); rc=$?
wait_for 75 sh -c "[ \"\$(grep -c '^end' $O/$rq.out)\" = 2 ]"
check "a finished job its user requeued (rc $rc${e:+: $e}) ran again, started by DeepShare as a new arrival (pin r=$(key "$rq" r), Restarts=$(field "$rq" Restarts), $(refusals "$rq") start(s) refused)" \
  sh -c "[ $rc = 0 ] && [ $(starts "$rq") = 2 ] && [ '$(key "$rq" r)' = '$(field "$rq" Restarts)' ] && grep -q '\"event\":\"job_returned\",\"job\":\"$rq\"' $BASE/ctl.log"
# the same while no controller runs: Slurm tries after cred_expire (10 s), its prolog refuses
kill "$CTL_PID"; wait "$CTL_PID" 2>/dev/null; CTL_PID=""
as "$alice" scontrol requeue "$rq"
wait_for 100 sh -c "[ \$(grep -c 'prolog_slurmctld JobId=$rq prolog exit status' $BASE/log/slurmctld.log) -ge 1 ]"
check "no controller: Slurm's own start of the requeued job was refused by the prolog before it ran ($(refusals "$rq") refusal(s), $(starts "$rq") starts, $(squeue -h -j "$rq" -o %T:%r))" \
  sh -c "[ $(refusals "$rq") -ge 1 ] && [ $(starts "$rq") = 2 ] && [ \"\$(squeue -h -j $rq -o %T)\" = PENDING ]"
start_ctl
wait_for 100 sh -c "[ \"\$(grep -c '^end' $O/$rq.out)\" = 3 ]"
check "the next controller started it (3 runs, pin r=$(key "$rq" r) = Restarts $(field "$rq" Restarts))" \
  sh -c "[ $(starts "$rq") = 3 ] && [ '$(key "$rq" r)' = '$(field "$rq" Restarts)' ]"
# a borrower DeepShare preempts, then its user holds it: it stays held when GPUs free up
b1=$(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)
b2=$(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)
b3=$(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)
b4=$(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)
for j in $b1 $b2 $b3 $b4; do wait_for 75 is_state "$j" RUNNING; done
own=$(sub "$bob" beta 4 --gres=gpu:4)
held_by_ds() { for j in $b1 $b2 $b3 $b4; do [ "$(state "$j")" = PENDING ] && [ "$(field "$j" Restarts)" = 1 ] && { echo "$j"; return 0; }; done; return 1; }
wait_for 75 held_by_ds >/dev/null
hv=$(held_by_ds)
if [ -n "$hv" ]; then
  e=$(as "$dave" scontrol hold "$hv" 2>&1); rc=$?
  wait_for 100 ended "$own"
  sleep 3
  # (Slurm keeps the reason job_requeued_in_held_state; the gate parked it: StartTime 2100)
  check "a preempted job its user holds (rc $rc${e:+: $e}) stays held when its GPUs are free again ($hv: $(squeue -h -j "$hv" -o %T:%r), StartTime $(field "$hv" StartTime), $(starts "$hv") start(s))" \
    sh -c "[ $rc = 0 ] && [ \"\$(squeue -h -j $hv -o %T:%Q)\" = PENDING:0 ] && [ $(starts "$hv") = 1 ] && scontrol show job $hv | grep -q 'StartTime=2100'"
  as "$dave" scontrol release "$hv"
  wait_for 100 is_state "$hv" RUNNING
  check "released by its user, it was restarted by DeepShare (pin r=$(key "$hv" r) = Restarts $(field "$hv" Restarts), $(refusals "$hv") start(s) refused)" \
    sh -c "[ \"\$(squeue -h -j $hv -o %T)\" = RUNNING ] && [ '$(key "$hv" r)' = '$(field "$hv" Restarts)' ] && [ $(refusals "$hv") = 0 ]"
else
  bad "a preempted job its user holds: the entitled job $own preempted no borrower"
fi
scancel $b1 $b2 $b3 $b4 2>/dev/null
wait_for 100 all_ended $b1 $b2 $b3 $b4 "$own"

echo "== 5c. a node failure: the requeued job keeps its guarantee"
# (issue #24 item 5) alpha's job runs within quota, scav borrows the other three nodes, then
# alpha's node goes down: Slurm requeues the job, and it reclaims a borrower when its SLO
# (2 s) is due, not at a borrower's checkpoint (30 min) or end (60 s).
nf=$(sub "$alice" alpha 60 --gres=gpu:4 --comment=ds:mem=22000)
wait_for 75 is_state "$nf" RUNNING
bw=""
for _ in 1 2 3; do bw="$bw $(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)"; done
for j in $bw; do wait_for 75 is_state "$j" RUNNING; done
nfnode=$(squeue -h -j "$nf" -o %N)
scontrol update NodeName="$nfnode" State=DOWN Reason=adversarial-test
t_down=$(date +%s)
moved() { local n; n=$(squeue -h -j "$nf" -t R -o %N); [ -n "$n" ] && [ "$n" != "$nfnode" ]; }
wait_for 100 moved
t_up=$(epoch "$(field "$nf" StartTime)")
reclaimed=""
for j in $bw; do [ "$(field "$j" Restarts)" -ge 1 ] && reclaimed="$reclaimed $j"; done
check "node $nfnode down: job $nf was requeued by Slurm and restarted on $(squeue -h -j "$nf" -o %N) $((t_up - t_down)) s later by reclaiming a borrower (${reclaimed:-none}) (pin r=$(key "$nf" r), Restarts $(field "$nf" Restarts))" \
  sh -c "[ -n '$reclaimed' ] && [ \"\$(squeue -h -j $nf -o %T)\" = RUNNING ] && [ '$(key "$nf" r)' = '$(field "$nf" Restarts)' ]"
scontrol update NodeName="$nfnode" State=RESUME
scancel $nf $bw 2>/dev/null
wait_for 100 all_ended $nf $bw

echo "== 6. a quota change by sacctmgr applies without a restart"
tq=$(date +%s.%N)
sacctmgr -i modify account scav set GrpTRES=gres/gpu=4 >/dev/null
wait_for 50 grep -q '"event":"tenant_changed","account":"scav","quota_gpus":4' "$BASE/ctl.log"
check "controller read the new quota of scav" grep -q '"event":"tenant_changed","account":"scav","quota_gpus":4' "$BASE/ctl.log"
q=$(sub "$dave" scav 3 --gres=gpu:2)
wait_for 75 is_state "$q" RUNNING
check "scav's job now runs within its quota (b=0)" test "$(key "$q" b)" = 0
wait_for 50 ended "$q"

echo "== 6a. a quota cut reaches running jobs"
# (issue #24) scav runs 4 GPUs within its quota of 4, the cluster is full, then sacctmgr cuts
# scav to 0: its run becomes borrowed (pin b=1) without a restart, and beta's entitled job
# reclaims it instead of waiting for it to end.
c1=$(sub "$dave" scav 60 --gres=gpu:4 --comment=ds:mem=22000)
wait_for 75 is_state "$c1" RUNNING
fill=""
for u in "$alice:alpha" "$alice:alpha" "$bob:beta"; do fill="$fill $(sub "${u%%:*}" "${u#*:}" 60 --gres=gpu:4 --comment=ds:mem=22000)"; done
for j in $fill; do wait_for 75 is_state "$j" RUNNING; done
check "a full cluster; scav's job $c1 runs within its quota (b=$(key "$c1" b))" test "$(key "$c1" b)" = 0
tc0=$(date +%s.%N)
sacctmgr -i modify account scav set GrpTRES=gres/gpu=0 >/dev/null
wait_for 50 sh -c "scontrol show job $c1 | grep -q 'AdminComment=.*;b=1;'"
check "the quota cut reached scav's running job: borrowed now (b=$(key "$c1" b)), logged, without a restart" \
  sh -c "[ '$(key "$c1" b)' = 1 ] && grep -q '\"event\":\"quota_cut_borrowed\".*\"job\":\"$c1\"' $BASE/ctl.log"
ent2=$(sub "$bob" beta 3 --gres=gpu:4 --comment=ds:mem=22000)
wait_for 100 is_state "$ent2" RUNNING
waited=$(( $(epoch "$(field "$ent2" StartTime)") - $(epoch "$(field "$ent2" SubmitTime)") ))
kept() { for j in $fill; do [ "$(field "$j" Restarts)" = 0 ] || return 1; done; }
check "beta's entitled job $ent2 reclaimed the former guarantee (waited ${waited} s, SLO 2 s; $c1 Restarts=$(field "$c1" Restarts)), the entitled runs kept theirs" \
  sh -c "[ \"\$(squeue -h -j $ent2 -o %T)\" = RUNNING ] && [ '$(field "$c1" Restarts)' -ge 1 ] && $(kept && echo true || echo false)"
sacctmgr -i modify account scav set GrpTRES=gres/gpu=4 >/dev/null
tc1=$(date +%s.%N)
scancel $c1 $fill 2>/dev/null
wait_for 100 all_ended $c1 $fill "$ent2"

echo "== 6b. tenant trees: a coordinator's sub-account asks more than its parent"
# alpha has 8; its sub-account asks 16 (issue #24): DeepShare guarantees it what fits (8),
# says so (log, metric below, `deepshare slurm check`), and its jobs run within that.
sub_acct=sub$tag
sacctmgr -i add account "$sub_acct" parent=alpha GrpTRES=gres/gpu=16 >/dev/null
sacctmgr -i add user "$bob" Account="$sub_acct" >/dev/null
wait_for 100 grep -q "\"event\":\"tenant_tree_problem\".*$sub_acct" "$BASE/ctl.log"
check "the controller reported the sub-account's 16 GPUs under alpha's 8 ($(grep -o "\"event\":\"tenant_tree_problem\".*$sub_acct[^}]*" "$BASE/ctl.log" | head -1 | cut -c1-160))" \
  grep -q "\"event\":\"tenant_tree_problem\".*$sub_acct.*scaled to fit ($sub_acct 8)" "$BASE/ctl.log"
"$BIN/deepshare" slurm check --config "$BASE/ctl.yaml" > "$BASE/check.txt" 2>&1; rc=$?
check "deepshare slurm check: exit $rc, $(grep -c '^problem' "$BASE/check.txt") problem(s): $(grep -m1 '^problem' "$BASE/check.txt" | cut -c1-100)" \
  sh -c "[ $rc = 1 ] && grep -q '^problem: .*$sub_acct 16' $BASE/check.txt && grep -q '^  $sub_acct  *16  *8' $BASE/check.txt"
tj=$(sub "$bob" "$sub_acct" 3 --gres=gpu:4)
wait_for 75 is_state "$tj" RUNNING
check "the sub-account's 4-GPU job runs within its guarantee of 8 (b=$(key "$tj" b))" test "$(key "$tj" b)" = 0
wait_for 50 ended "$tj"

rm -f "$BASE/sampling"; wait "$SAMPLER_PID" 2>/dev/null; SAMPLER_PID=""
echo "== 7. from Slurm's records and the jobs' outputs"
# Expand node lists, then one line per (sample, node, GPU) held whole (W) or as a slot (S).
declare -A hosts
while read -r t job st part acct b s nodes gres; do
  [ -n "${hosts[$nodes]:-}" ] || hosts[$nodes]=$(scontrol show hostnames "$nodes" | paste -sd,)
  echo "$t $job $st $part $acct $b $s ${hosts[$nodes]} $gres"
done < "$BASE/samples" | awk '
  function add(list, kind,   n, r, k, a, b) { n = split(list, r, ",")
    for (k = 1; k <= n; k++) { if (split(r[k], a, "-") == 2) { for (b = a[1]; b <= a[2]; b++) out(b, kind) } else if (r[k] != "") out(r[k], kind) } }
  function out(g, kind,   h, nh, x) { nh = split(hosts, h, ","); for (x = 1; x <= nh; x++) print t, h[x], g, kind, job, st, part, acct, b, s }
  { t = $1; job = $2; st = $3; part = $4; acct = $5; b = $6; s = $7; hosts = $8
    # entries look like gpu:g0:1(IDX:0) or gpushare:g2:1(IDX:2)
    line = $9; while (match(line, /(gpushare|gpu)[^()]*\(IDX:[0-9,-]*\)/)) {
      ent = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
      kind = (ent ~ /^gpushare/) ? "S" : "W"; sub(/.*IDX:/, "", ent); sub(/\)$/, "", ent); add(ent, kind) } }' \
  > "$BASE/holders"
overlaps=$(awk '{ k = $1 " " $2 " " $3 " " $4; c[k]++; j[k] = j[k] " " $5 } END { for (k in c) if (c[k] > 1) print k ":" j[k] }' "$BASE/holders" | sort | head -5)
samples=$(cut -d' ' -f1 "$BASE/samples" | sort -u | wc -l)
check "Slurm's records ($samples samples): no GPU ever held by two jobs whole, nor its slot twice${overlaps:+: $overlaps}" \
  test -z "$overlaps" -a "$samples" -gt 100
# scav's quota: 0, 4 from section 6, 0 again while cut in 6a (from 2 s after the cut: the
# controller reads quotas every tenants_refresh_s = 1 s), 4 after.
over=$(awk -v tq="$tq" -v tc0="$tc0" -v tc1="$tc1" '$7 == "batch" && $9 == "0" && $10 == "0" && $4 == "W" { k = $1 " " $8; n[k]++ }
  END { for (k in n) { split(k, a, " "); t = a[1] + 0
    q = (a[2] == "scav") ? ((t >= tq && !(t >= tc0 + 2 && t < tc1)) ? 4 : 0) : 8; if (n[k] > q) print k, n[k] ">" q } }' "$BASE/holders" | head -5)
check "no tenant ever held more GPUs than its quota without borrowing${over:+: $over}" test -z "$over"
# The jobs' own start/end lines: intervals of non-shared jobs on one (node, GPU) never overlap.
for f in "$O"/*.out; do
  awk '$1 == "start" || $1 == "end" || $1 == "term" { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    if ($1 == "start") { s = $2; node = v["node"]; gpus = v["gpus"]; sh = v["shared"] }
    else if ($1 == "end" && s != "") { n = split(gpus, g, ","); for (k = 1; k <= n; k++) print node, g[k], s, $2, sh, v["job"]; s = "" } }' "$f"
done | awk '$5 == "0"' | sort -k1,1 -k2,2n -k3,3n > "$BASE/intervals"
clash=$(awk '{ k = $1 " " $2; if (k == pk && $3 < pe - 0.05) print k, pj, $6; if (k != pk || $4 > pe) { pe = $4; pj = $6 }; pk = k }' "$BASE/intervals" | head -5)
check "the jobs' outputs ($(wc -l < "$BASE/intervals") runs): no two non-shared jobs on one GPU at once${clash:+: $clash}" \
  test -z "$clash" -a "$(wc -l < "$BASE/intervals")" -gt 20

port=$(grep -o '"port":[0-9]*' "$BASE/ctl.log" | tail -1 | grep -o '[0-9]*')
# a local user holds 100 idle connections to the endpoint (more than it serves at once)
runuser -u "$bob" -- bash -c "for i in \$(seq 10 109); do eval \"exec \$i<>/dev/tcp/127.0.0.1/$port\"; done; sleep 15" 2>/dev/null &
flood=$!
sleep 2
t_scrape=$(date +%s.%N)
curl -s -m 10 "127.0.0.1:$port/metrics" > "$BASE/metrics.txt" 2>/dev/null || true
t_scrape=$(awk -v a="$t_scrape" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
check "a scrape with 100 idle connections of a local user open: answered ($(wc -l < "$BASE/metrics.txt") lines in ${t_scrape} s)" \
  grep -q '^deepshare_cycles_total' "$BASE/metrics.txt"
kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null
metric() { awk -v m="$1" '$1 == m { print $2 }' "$BASE/metrics.txt"; }
check "metrics: the untrusted pin counted ($(metric deepshare_untrusted_pins_total))" \
  test "$(metric deepshare_untrusted_pins_total)" -ge 1
# two: the sub-account, and 20 guaranteed GPUs (alpha 8, beta 8, scav 4 since section 6) of 16
check "metrics: the tenant tree's problems counted ($(metric deepshare_tenant_tree_problems): the sub-account, 20 of 16 GPUs guaranteed)" \
  test "$(metric deepshare_tenant_tree_problems)" = 2
check "metrics: no decision failed, no preemption failed ($(metric deepshare_decisions_failed_total), $(metric deepshare_preemptions_failed_total))" \
  test "$(metric deepshare_decisions_failed_total)" = 0 -a "$(metric deepshare_preemptions_failed_total)" = 0
check "controller logged no error" sh -c "! grep -q '\"level\":\"error\"' $BASE/ctl.log"
echo "$pass passed, $fail failed ($((SECONDS - T0)) s)"
[ "$fail" = 0 ] || { echo "--- controller log (tail)"; tail -n 60 "$BASE/ctl.log"; }
[ "$fail" = 0 ]
