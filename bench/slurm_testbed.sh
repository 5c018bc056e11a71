#!/usr/bin/env bash
# The paper's testbed experiment on the 16-GPU test cluster (issues #13, #25; docs/slurm.md
# §12, §14): one time-scaled multi-tenant Venus excerpt (tests/slurm/venus3.yaml: ewi/wor/hvq
# with quotas 6/6/4 on 4 nodes x 4 fake GPUs; borrowing, reclaim and MPS sharing) replayed on
# a real Slurm cluster under each policy, RUNS times each (a fresh cluster per replay), each
# replay compared with the simulator's prediction for the same excerpt (`deepshare fidelity`:
# one simulation and the jittered ensemble, with the start latency, jitter and overhang that
# replay measured).
#
# Policies: DeepShare's controller with a policy (deepshare, kueue, fifo-pooled, ...), or
# `native`: DeepShare's controller stopped and Slurm scheduling by itself as
# deploy/slurm/native/ configures it (priority/multifactor with Fair Tree, sched/backfill with
# time limits, GrpTRES quota on each account's QOS, scavenger QOS requeued by preempt/qos),
# time-scaled (below), compared with the simulator's `slurm` baseline in the same
# configuration.
#
# Time scaling of the native configuration: every Slurm time parameter is divided by SCALE
# where Slurm's units allow it (PriorityDecayHalfLife, PriorityMaxAge, bf_window in minutes,
# bf_interval and bf_resolution in seconds), else kept at Slurm's smallest unit, which is
# coarser than the scaled value: PriorityCalcPeriod 1 min, time limits in whole minutes,
# bf_interval and bf_resolution 1 s (at SCALE 120: 7,200, 7,200, 120 and 120 trace s). The
# `slurm` baseline is given the same values in trace seconds (OUT/native/config.yaml), and the
# requeue delay of the test cluster (cred_expire=10: 11 s) and cons_common's 30 s will-run
# grouping likewise.
#
# Writes OUT/<policy>/config.yaml and OUT/<policy>/run<k>/: replay/ (the replay's folder, which
# holds only what the replay wrote, with the fidelity check's outputs in replay/fidelity/),
# replay.txt, fidelity.txt and run.json (the load average before and after), then scripts/real_peers_slurm.py writes OUT/table.md. Needs root, Slurm
# (with slurmdbd and MariaDB for native) and the Venus trace (exit 77 without them).
# Usage: bench/slurm_testbed.sh OUT [POLICY...]   (default: native deepshare kueue fifo-pooled)
# Env: RUNS=3, EXCERPT (default from=1000,jobs=300,min=5,max=90), SCALE=120 (an integer),
#   BIN=build/bin, TIMEOUT=1200 (wall seconds per replay), DS_SLURM_TMP; REPLAY=0: no replay,
#   only the fidelity checks and the table again from OUT (e.g. after a simulator change).
#   Timing-sensitive: the replays measure the start latency and overhang of the machine as
#   it is, and the simulations use them; run it on a machine as quiet as you can.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BIN=${BIN:-$SRC/build/bin}
OUT=${1:?usage: bench/slurm_testbed.sh OUT [POLICY...]}
shift
POLICIES=("$@")
[ ${#POLICIES[@]} -gt 0 ] || POLICIES=(native deepshare kueue fifo-pooled)
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT=${EXCERPT:-from=1000,jobs=300,min=5,max=90}
SCALE=${SCALE:-120}
RUNS=${RUNS:-3}
REPLAY=${REPLAY:-1}
CRED_EXPIRE=10  # the test cluster's (scripts/slurm/start-cluster.sh), for every policy
case $SCALE in '' | *[!0-9]*) echo "SCALE must be a whole number" >&2; exit 2 ;; esac
[ "$REPLAY" = 0 ] || [ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ "$REPLAY" = 0 ] || command -v slurmctld >/dev/null || { echo "SKIP: Slurm not installed"; exit 77; }
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)

# max(1, round(value / SCALE))
scaled() { local v=$((($1 + SCALE / 2) / SCALE)); echo $((v < 1 ? 1 : v)); }

# The native site configuration (deploy/slurm/native/slurm.conf.fragment), time-scaled, and
# the controller-format config of the `slurm` baseline with the same values in trace seconds.
native_setup() {
  local dir=$1 half calc bfi bfr bfw
  half=$(scaled 10080) calc=$(scaled 5) bfi=$(scaled 30) bfr=$(scaled 60) bfw=$(scaled 1440)
  sed -e "s/^PriorityDecayHalfLife=.*/PriorityDecayHalfLife=$half/" \
    -e "s/^PriorityMaxAge=.*/PriorityMaxAge=$half/" \
    -e "s/^PriorityCalcPeriod=.*/PriorityCalcPeriod=$calc/" \
    -e "s/^SchedulerParameters=.*/SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=$bfi,bf_resolution=$bfr,bf_window=$bfw,bf_max_job_test=500,preempt_reorder_count=1/" \
    "$SRC/deploy/slurm/native/slurm.conf.fragment" | grep -v '^#' | grep . > "$dir/slurm.conf.fragment"
  {
    sed -e "s/^policy: .*/policy: slurm/" -e '/^options:/d' "$SRC/tests/slurm/venus3.yaml"
    printf 'options: {calc_period_s: "%d", bf_interval_s: "%d", bf_resolution_s: "%d", ' \
      $((calc * 60 * SCALE)) $((bfi * SCALE)) $((bfr * SCALE))
    printf 'bf_window_s: "%d", decay_half_life_s: "%d", max_age_s: "%d", ' \
      $((bfw * 60 * SCALE)) $((half * 60 * SCALE)) $((half * 60 * SCALE))
    printf 'requeue_delay_s: "%d", will_run_window_s: "%d", time_limit_round_s: "%d", ' \
      $(((CRED_EXPIRE + 1) * SCALE)) $((30 * SCALE)) $((60 * SCALE))
    printf 'time_limit_min_s: "%d"}\n' $((60 * SCALE))
  } > "$dir/config.yaml"
}

# One replay of policy $1 into $2 on a fresh cluster.
replay() {
  local p=$1 dir=$2 cfg rc=0 t0
  mkdir -p "$dir"
  export BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/dst.XXXX")
  if [ "$p" = native ]; then
    cfg=$OUT/native/config.yaml
    NODES=4 GPUS=4 GATE=0 ACCOUNTING=1 GRES_LAYOUT=plain CRED_EXPIRE=$CRED_EXPIRE \
      PARTITION_OPTS='TRESBillingWeights="GRES/gpu=1.0"' \
      EXTRA_CONF=$OUT/native/slurm.conf.fragment "$SRC/scripts/slurm/start-cluster.sh" >/dev/null || return 1
    source "$BASE/env.sh"
    "$SRC/deploy/slurm/native/setup-accounts.sh" "$DS_SLURM_CLUSTER" ewi:6 wor:6 hvq:4 -- root >/dev/null || return 1
  else
    cfg=$OUT/$p/config.yaml
    NODES=4 GPUS=4 CRED_EXPIRE=$CRED_EXPIRE "$SRC/scripts/slurm/start-cluster.sh" >/dev/null || return 1
    source "$BASE/env.sh"
  fi
  local before=$(cut -d' ' -f1-3 /proc/loadavg) start=$(date -u +%FT%TZ)
  t0=$(date +%s)
  "$BIN/deepshare" slurm replay --config "$cfg" --trace "$TRACE" --excerpt "$EXCERPT" \
    --time-scale "$SCALE" --out "$dir/replay" --work-dir "$BASE/jobout/r" --timeout "${TIMEOUT:-1200}" \
    --quiet $([ "$p" = native ] && echo --native --cpus-per-gpu 16) > "$dir/replay.txt" || rc=1
  local after=$(cut -d' ' -f1-3 /proc/loadavg)
  printf '{"policy": "%s", "start_utc": "%s", "end_utc": "%s", "wall_s": %d, "loadavg_before": "%s", "loadavg_after": "%s"}\n' \
    "$p" "$start" "$(date -u +%FT%TZ)" $(($(date +%s) - t0)) "$before" "$after" > "$dir/run.json"
  echo "   $(head -1 "$dir/replay.txt"); load $before -> $after"
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
  BASE=
  return $rc
}

BASE=
trap '[ -n "$BASE" ] && "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1' EXIT
fail=0
for p in "${POLICIES[@]}"; do
  mkdir -p "$OUT/$p"
  if [ "$p" = native ]; then
    native_setup "$OUT/native"
  elif [ "$REPLAY" != 0 ]; then
    # The same tenants for every policy; DeepShare's own option only for DeepShare.
    sed -e "s/^policy: .*/policy: $p/" "$SRC/tests/slurm/venus3.yaml" |
      { [ "$p" = deepshare ] && cat || grep -v '^options:'; } > "$OUT/$p/config.yaml"
  fi
done
for k in $(seq 1 "$RUNS"); do  # interleaved, so that slow drifts of the machine hit all alike
  for p in "${POLICIES[@]}"; do
    dir=$OUT/$p/run$k
    if [ "$REPLAY" != 0 ]; then
      echo "== $p, run $k of $RUNS: replay (excerpt $EXCERPT, time scale $SCALE)"
      replay "$p" "$dir" || fail=1
    fi
    [ -f "$dir/replay/replay.json" ] || continue
    "$BIN/deepshare" fidelity --replay "$dir/replay" --config "$OUT/$p/config.yaml" \
      > "$dir/fidelity.txt" || fail=1
  done
done
python3 "$SRC/scripts/real_peers_slurm.py" "$OUT" "${POLICIES[@]}" > "$OUT/table.md" || fail=1
cat "$OUT/table.md"
exit $fail
