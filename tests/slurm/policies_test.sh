#!/usr/bin/env bash
# Every policy on a REAL Slurm cluster (scripts/slurm/start-cluster.sh: 4 nodes x 4 fake GPUs,
# the gate, slurmdbd with accounts alpha/beta (GrpTRES=gres/gpu=8) and scav (0)), and the
# controller's operations surface. For each of POLICIES (default: deepshare kueue fifo-pooled)
# the same short job set, with the policy's default options:
#  1. idle lending: on the idle cluster 4 best-effort jobs x 4 GPUs (scav, quota 0) are all
#     decided in their first cycle (`queued_s` of the start event) and run;
#  2. owners return: alpha's two entitled 4-GPU jobs start by reclaim (deepshare, kueue:
#     borrowers preempted, the entitled jobs run within a few seconds) or when the borrowers
#     end (fifo-pooled: no preemption);
#  3. every job ends, preempted ones after a restart (`job_end` logged);
#  4. idle again right after that busy spell: 4 more best-effort jobs decided in the first
#     cycle that sees them (a forecast-driven reserve would hold the owners' idle quota);
#  5. no error logged; metrics follow the Prometheus conventions (build_info names the
#     policy, no -1 values, a cycle histogram, lent + unowned = over quota, per-tenant
#     preemptions sum to the total).
# Once (deepshare phase): 8 idle connections do not delay a scrape, the endpoint listens on
# 127.0.0.1 only, typed JSON log values with user/account, SIGHUP reloads the config (a live
# key applied, a restart key reported, a broken file refused with the controller running on).
# Before any cluster: an oracle policy is refused with a clear message.
# Exit 77 (CTest: skipped) only when not root or the Slurm packages are missing.
# Usage: tests/slurm/policies_test.sh BUILD_BIN_DIR
# Env: POLICIES; DS_TEST_LOG_DIR=DIR keeps the controller logs and metrics scrapes there.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
POLICIES=${POLICIES:-deepshare kueue fifo-pooled}
source "$SRC/tests/slurm/preflight.sh"
slurm_preflight dsp slurmctld slurmd munged sbatch curl
CTL_PID=""
stop_ctl() { [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null && wait "$CTL_PID" 2>/dev/null; CTL_PID=""; }
cleanup() {
  stop_ctl
  [ -n "${DS_TEST_LOG_DIR:-}" ] && cp "$BASE"/ctl-*.log "$BASE"/m[12]-*.txt "$DS_TEST_LOG_DIR/" 2>/dev/null
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "PASS [${SECONDS}s] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL [${SECONDS}s] $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }
conf() { # policy file [extra lines]
  printf 'partition: batch\npolicy: %s\npoll_ms: 100\ngpu_memory_mib: 24576\nstart_margin_s: 10\ntenant_source: slurm\ntenants_refresh_s: 1\ntenant_defaults: {slo_queue_s: 2}\n%s' "$1" "${3:-}" > "$2"
}
# What each policy does when the owners return: reclaim (preempt borrowers), wait for them
# to end (fifo-pooled), or no expectation (other policies: run with POLICIES=...; only
# "every job runs and ends" and the metrics are checked). Tiresias decides in rounds: 5 s.
reclaims() { case $1 in deepshare|kueue) echo 1 ;; fifo-pooled) echo 0 ;; *) echo - ;; esac; }
extra_conf() { case $1 in tiresias) echo 'options: {interval: "5"}' ;; esac; }

# 0. oracles need true run times: refused before touching Slurm
conf sjf "$BASE/sjf.yaml"
"$BIN/deepshare" slurm run --config "$BASE/sjf.yaml" >"$BASE/sjf.out" 2>&1; rc=$?
check "oracle policy refused with a clear message (rc $rc: $(head -c 160 "$BASE/sjf.out"))" \
  sh -c "[ $rc != 0 ] && grep -q \"policy 'sjf' is an oracle\" '$BASE/sjf.out'"

NODES=4 GPUS=4 ACCOUNTING=1 ACCOUNTS=alpha:8,beta:8,scav:0 "$SRC/scripts/slurm/start-cluster.sh" > "$BASE/start-cluster.log" 2>&1 ||
  { echo "FAIL: cluster did not start"; tail -20 "$BASE/start-cluster.log"; exit 1; }
source "$BASE/env.sh"
O=$BASE/jobout
state() { squeue -h -j "$1" -o %T 2>/dev/null; }
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done; return 1; }
is_state() { [ "$(state "$1")" = "$2" ]; }
all_running() { local j; for j in "$@"; do is_state "$j" RUNNING || return 1; done; }
all_gone() { [ -z "$(squeue -h -p batch -o %i 2>/dev/null)" ]; }
cat > "$O/job.sh" <<'JOB'
#!/bin/bash
echo "start node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES restart=${SLURM_RESTART_COUNT:-0}"
sleep "$1"
JOB
chmod +x "$O/job.sh"
sub() { # account gpus seconds: 22000 of 24576 MiB per GPU, so that nothing shares
  sbatch --parsable -A "$1" -o "$O/%j.out" --open-mode=append --gres=gpu:"$2" --comment="ds:u=40;mem=22000" "$O/job.sh" "$3"
}
port_of() { grep -o '"event":"metrics_listening"[^}]*"port":[0-9]*' "$1" | tail -1 | grep -o '[0-9]*$'; }
scrape() { curl -s --max-time 5 "127.0.0.1:$PORT/metrics"; }
metric() { awk -v m="$1" '$1 == m { print $2 }' "$2"; }
sum_metric() { awk -v m="$1" 'index($1, m "{") == 1 { s += $2 } END { print s + 0 }' "$2"; }

for P in $POLICIES; do
  echo "== policy $P"
  LOG=$BASE/ctl-$P.log; CONF=$BASE/ctl-$P.yaml
  conf "$P" "$CONF" "$(extra_conf "$P")
"
  R=$(reclaims "$P")
  "$BIN/deepshare" slurm run --config "$CONF" --metrics 127.0.0.1:0 >"$LOG" 2>&1 &
  CTL_PID=$!
  wait_for 50 grep -q '"event":"metrics_listening"' "$LOG"; PORT=$(port_of "$LOG")
  # 1. idle lending
  s=(); for _ in 1 2 3 4; do s+=("$(sub scav 4 15)"); done
  wait_for "$([ "$R" = - ] && echo 150 || echo 50)" all_running "${s[@]}"
  check "$P: idle cluster: 4 best-effort jobs x 4 GPUs all run" all_running "${s[@]}"
  # queued_s: from the cycle that first saw the job to its start decision (0: that cycle)
  late=$(grep '"event":"start"' "$LOG" | grep -o '"queued_s":[0-9.e+-]*' | cut -d: -f2 | awk '$1 > 0' | wc -l)
  [ "$R" != - ] && check "$P: ... each decided in the first cycle that saw it ($late later)" test "$late" = 0 -a "$(grep -c '"event":"start"' "$LOG")" -ge 4
  scrape > "$BASE/m1-$P.txt"
  lent=$(sum_metric deepshare_tenant_lent_gpus "$BASE/m1-$P.txt"); over=$(sum_metric deepshare_tenant_over_quota_gpus "$BASE/m1-$P.txt")
  unowned=$(metric deepshare_unowned_over_quota_gpus "$BASE/m1-$P.txt")
  check "$P: metrics while lending: over quota $over = lent $lent + unowned $unowned, scav 16 over its quota" \
    test "$over" = 16 -a "$((lent + unowned))" = "$over" -a "$(metric 'deepshare_tenant_over_quota_gpus{tenant="scav"}' "$BASE/m1-$P.txt")" = 16
  # borrowed: GPUs of jobs the policy started as borrowed (fifo-pooled has no such notion)
  borrowed=$(metric 'deepshare_tenant_borrowed_gpus{tenant="scav"}' "$BASE/m1-$P.txt")
  [ "$P" != fifo-pooled ] && check "$P: ... all 16 run as borrowed (preemptible) jobs ($borrowed)" test "$borrowed" = 16
  # 2. owners return
  t0=$SECONDS
  a1=$(sub alpha 4 5); a2=$(sub alpha 4 5)
  wait_for 150 all_running "$a1" "$a2"
  took=$((SECONDS - t0))
  if [ "$R" = - ]; then
    check "$P: entitled jobs run (${took}s)" all_running "$a1" "$a2"
  elif [ "$R" = 0 ]; then
    check "$P: entitled jobs run once the borrowers end (${took}s, FIFO never preempts)" sh -c "[ $took -ge 5 ] && ! grep -q '\"event\":\"preempt\"' '$LOG'"
  else
    check "$P: entitled jobs reclaim lent GPUs at once (${took}s) by preempting borrowers" sh -c "[ $took -le 8 ] && grep -q '\"event\":\"preempt\"' '$LOG'"
    # the SLO (slo_queue_s: 2): decided within it (the rest is Slurm's start latency)
    slo=$(grep '"event":"start"' "$LOG" | grep '"account":"alpha"' | grep -o '"queued_s":[0-9.e+-]*' | cut -d: -f2 | awk '$1 <= 2' | wc -l)
    check "$P: ... both decided within alpha's SLO of 2 s ($slo of 2)" test "$slo" -ge 2
  fi
  # 3. everything ends
  wait_for 450 all_gone
  check "$P: every job ended" all_gone
  wait_for 25 sh -c "[ \$(grep -c '\"event\":\"job_end\"' '$LOG') -ge 6 ]"
  ends=$(grep -c '"event":"job_end"' "$LOG")
  check "$P: job ends logged ($ends of 6)" test "$ends" = 6
  # 4. idle again after the busy spell (the owners' demand was just high: a forecast-driven
  # reserve would hold their idle quota now): best-effort work is lent the idle GPUs at once
  n0=$(wc -l < "$LOG")
  s=(); for _ in 1 2 3 4; do s+=("$(sub scav 4 2)"); done
  wait_for "$([ "$R" = - ] && echo 150 || echo 50)" sh -c "[ \$(tail -n +$((n0 + 1)) '$LOG' | grep -c '\"event\":\"start\"') -ge 4 ]"
  late=$(tail -n +$((n0 + 1)) "$LOG" | grep '"event":"start"' | grep -o '"queued_s":[0-9.e+-]*' | cut -d: -f2 | awk '$1 > 0' | wc -l)
  now=$(tail -n +$((n0 + 1)) "$LOG" | grep -c '"event":"start"')
  if [ "$R" != - ]; then
    check "$P: idle after a busy spell: 4 best-effort jobs decided in the first cycle that saw them ($now started, $late later)" test "$now" -ge 4 -a "$late" = 0
  fi
  wait_for 150 all_gone
  wait_for 25 sh -c "[ \$(grep -c '\"event\":\"job_end\"' '$LOG') -ge 10 ]"
  scrape > "$BASE/m2-$P.txt"
  check "$P: metrics: deepshare_build_info names the policy" grep -q "^deepshare_build_info{version=\"[^\"]*\",policy=\"$P\"} 1$" "$BASE/m2-$P.txt"
  check "$P: metrics: no -1 sentinel, no _max/_last" sh -c "! grep -q ' -1$' $BASE/m2-$P.txt && ! grep -q '_seconds_max\|_seconds_last' $BASE/m2-$P.txt"
  check "$P: metrics: cycle histogram and last-observe timestamp" sh -c \
    "grep -q '^deepshare_cycle_duration_seconds_bucket{le=\"+Inf\"}' $BASE/m2-$P.txt && grep -q '^deepshare_last_observe_timestamp_seconds 1[0-9]*' $BASE/m2-$P.txt && grep -q '^deepshare_slurm_rpc_duration_seconds_count{rpc=\"load_jobs\"}' $BASE/m2-$P.txt"
  tp=$(sum_metric deepshare_tenant_preemptions_total "$BASE/m2-$P.txt"); tot=$(metric deepshare_preemptions_total "$BASE/m2-$P.txt")
  npre=$(grep -c '"event":"preempt"' "$LOG")
  check "$P: metrics: tenant preemptions ($tp) = total ($tot) = preempt events ($npre)" test "$tp" = "$tot" -a "$tot" = "$npre"
  if [ "$P" = deepshare ]; then
    check "$P: assurance exported per tenant" grep -q '^deepshare_tenant_assurance{tenant="alpha"}' "$BASE/m2-$P.txt"
    # --- the operations surface, once
    exec 3<>/dev/tcp/127.0.0.1/"$PORT" 4<>/dev/tcp/127.0.0.1/"$PORT" 5<>/dev/tcp/127.0.0.1/"$PORT" 6<>/dev/tcp/127.0.0.1/"$PORT" \
      7<>/dev/tcp/127.0.0.1/"$PORT" 8<>/dev/tcp/127.0.0.1/"$PORT" 9<>/dev/tcp/127.0.0.1/"$PORT" 10<>/dev/tcp/127.0.0.1/"$PORT"
    t=$(curl -s -o /dev/null --max-time 10 -w '%{time_total}' "127.0.0.1:$PORT/metrics")
    exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- 10>&-
    check "ops: a scrape with 8 idle connections open takes ${t}s (< 2 s)" awk -v t="$t" 'BEGIN { exit !(t > 0 && t < 2) }'
    check "ops: the endpoint listens on 127.0.0.1 only" sh -c "ss -ltnH | awk '{print \$4}' | grep -qx '127.0.0.1:$PORT' && ! ss -ltnH | awk '{print \$4}' | grep -qx '\\(0.0.0.0\\|\\*\\):$PORT'"
    check "ops: typed JSON values with user and account on job events" \
      grep -q '"event":"start","job":"[0-9_]*","gpus":"[^"]*","gpu_count":4,"borrowed":true,.*"user":"root","account":"scav"' "$LOG"
    check "ops: routine node and job events at info, none at error" sh -c "! grep -q '\"level\":\"error\"' '$LOG'"
    sed -i 's/^poll_ms: 100/poll_ms: 150/; s/^partition: batch/partition: other/' "$CONF"
    kill -HUP "$CTL_PID"
    wait_for 25 grep -q '"event":"config_reloaded"' "$LOG"
    check "ops: SIGHUP reloads: poll_ms applied live" grep -q '"event":"config_reloaded".*"applied":"poll_ms"' "$LOG"
    check "ops: SIGHUP: partition reported as needing a restart" grep -q '"event":"reload_needs_restart","key":"partition"' "$LOG"
    echo 'poll_ms: [' >> "$CONF"
    kill -HUP "$CTL_PID"
    wait_for 25 grep -q '"event":"reload_refused"' "$LOG"
    sleep 0.5
    check "ops: a broken config is refused and the controller runs on" sh -c "grep -q '\"event\":\"reload_refused\"' '$LOG' && kill -0 $CTL_PID"
    j=$(sub alpha 1 1); wait_for 50 sh -c "grep -q start $O/$j.out 2>/dev/null"
    check "ops: still scheduling after the reloads" grep -q start "$O/$j.out"
    wait_for 50 all_gone
  else
    check "$P: no error logged" sh -c "! grep -q '\"level\":\"error\"' '$LOG'"
  fi
  stop_ctl
  # leftovers of a failed phase must not run into the next policy's
  scancel -p batch 2>/dev/null; wait_for 100 all_gone
done
echo "$pass passed, $fail failed"
if [ "$fail" != 0 ]; then for P in $POLICIES; do echo "--- $P controller log (tail)"; tail -n 30 "$BASE/ctl-$P.log"; done; fi
[ "$fail" = 0 ]
