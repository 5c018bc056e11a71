#!/usr/bin/env bash
# The testbed experiment on Kubernetes (issue #25 item 3, docs/kubernetes.md §7): one
# time-scaled Venus excerpt (the tenants and quotas of tests/k8s/kueue3.yaml: ewi/wor/hvq
# 6/6/4 on 4 KWOK nodes x 4 nvidia.com/gpu) replayed on a real control plane, RUNS times per
# scheduler (interleaved: run 1 of each, then run 2...), a fresh cluster per run:
#   kueue    the real Kueue (scripts/k8s/start-kueue.sh) admits, kube-scheduler places;
#            compared with the simulator's `kueue` re-implementation;
#   default  kube-scheduler alone (every Job starts at once; pods wait Pending until they
#            fit); compared with the simulator's `fifo-pooled` (one pool, FIFO with backfill:
#            kube-scheduler retries every pending pod, so a large head does not block).
#   deepshare `deepshare k8s run` schedules (docs/kubernetes.md §8: whole GPUs through
#            pods/binding, reclaim through the Eviction API), started before the replay and
#            stopped by PID after it; compared with the simulator's `deepshare` with the same
#            configuration (time_scale = SCALE, so that it counts trace time).
# Every scheduler gets the same cluster: 4 KWOK nodes x 4 GPUs, kube-scheduler running (it
# ignores the pods that name DeepShare), a running pod being deleted turned Failed at the end
# of its grace period as a kubelet does, then removed (POD_DELETE=graceful POD_TERMINATE=1;
# the replay's pods have a grace period of 0 s). With KWOK's fast delete an evicted pod of a
# Job stays Terminating for good on its job-tracking finalizer (seen: the replay never ends).
# Each run is followed by `deepshare fidelity` (one simulation and the jittered ensemble with
# the start latency, jitter and overhang that run measured). Writes OUT/<scheduler>/<run>/
# (config.yaml, replay/ with its fidelity/, replay.txt, fidelity.txt, run.json with the load
# average before and after; scheduler.log for deepshare) and OUT/table.md: per scheduler the mean and min-max over the runs of avg JCT, avg
# queueing delay and QoS compliance of entitled jobs, beside the simulator's prediction
# (scripts/real_peers_k8s.py, which also writes docs/results.md's tables with --doc).
# Needs the Venus trace and jq (exit 77 without them).
# Usage: bench/k8s_testbed.sh OUT [SCHEDULER...]   (default: kueue default deepshare)
# Env: EXCERPT (default from=1000,jobs=40,min=5,max=60), SCALE=60, RUNS=3, BIN=build/bin,
#   TIMEOUT=1200 (wall seconds per replay), OPTIONS (DeepShare's policy options as KEY=VALUE
#   words, e.g. "repredict=on": written under `options:` of its config, so that its fidelity
#   simulation uses them too).
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BIN=${BIN:-$SRC/build/bin}
OUT=${1:?usage: bench/k8s_testbed.sh OUT [SCHEDULER...]}
shift
SCHEDULERS=("$@")
[ ${#SCHEDULERS[@]} -gt 0 ] || SCHEDULERS=(kueue default deepshare)
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT=${EXCERPT:-from=1000,jobs=40,min=5,max=60}
SCALE=${SCALE:-60}
RUNS=${RUNS:-3}
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/setup-k8s.sh)"; exit 77; }
for s in "${SCHEDULERS[@]}"; do
  case $s in
    kueue | default | deepshare) ;;
    *) echo "k8s_testbed.sh: unknown scheduler '$s' (kueue|default|deepshare)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
source "$SRC/bench/k8s_bench_lib.sh"
# The simulator's policy that stands for each scheduler.
policy_of() { case $1 in default) echo fifo-pooled ;; *) echo "$1" ;; esac; }
fail=0
for r in $(seq 1 "$RUNS"); do
  for s in "${SCHEDULERS[@]}"; do
    policy=$(policy_of "$s")
    dir=$OUT/$s/$r
    mkdir -p "$dir"
    sed -e "s/^policy: .*/policy: $policy/" "$SRC/tests/k8s/kueue3.yaml" >"$dir/config.yaml"
    [ "$s" = deepshare ] && echo "time_scale: $SCALE" >>"$dir/config.yaml"
    if [ "$s" = deepshare ] && [ -n "${OPTIONS:-}" ]; then  # e.g. OPTIONS="repredict=on"
      echo "options:" >>"$dir/config.yaml"
      for kv in $OPTIONS; do echo "  ${kv%%=*}: \"${kv#*=}\"" >>"$dir/config.yaml"; done
    fi
    echo "== $s run $r: replay (excerpt $EXCERPT, time scale $SCALE; simulated as $policy)"
    before=$(cut -d' ' -f1-3 /proc/loadavg) start=$(date -u +%FT%TZ) t0=$(date +%s)
    BASE=$(mktemp -d /tmp/dskt.XXXX)
    NODES=4 GPUS=4 SCHEDULER=1 POD_DELETE=graceful POD_TERMINATE=1 "$SRC/scripts/k8s/start-cluster.sh" >/dev/null || exit 1
    [ "$s" = kueue ] && { "$SRC/scripts/k8s/start-kueue.sh" >/dev/null || exit 1; }
    source "$BASE/env.sh"
    if [ "$s" = deepshare ]; then
      # one scheduler per run: no Lease (no namespace deepshare-system on the bare cluster)
      "$BIN/deepshare" k8s run --config "$dir/config.yaml" --no-leader-elect >"$dir/scheduler.log" 2>&1 &
      SCHED_PID=$!
    fi
    "$BIN/deepshare" k8s replay --config "$dir/config.yaml" --trace "$TRACE" --excerpt "$EXCERPT" \
      --time-scale "$SCALE" --scheduler "$s" --out "$dir/replay" --timeout "${TIMEOUT:-1200}" --quiet |
      tee "$dir/replay.txt" || fail=1
    echo "load at the end of the replay: $(cat /proc/loadavg)" | tee -a "$dir/replay.txt"
    printf '{"scheduler": "%s", "start_utc": "%s", "end_utc": "%s", "wall_s": %d, "loadavg_before": "%s", "loadavg_after": "%s"}\n' \
      "$s" "$start" "$(date -u +%FT%TZ)" $(($(date +%s) - t0)) "$before" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$dir/run.json"
    stop_all
    "$BIN/deepshare" fidelity --replay "$dir/replay" >"$dir/fidelity.txt" || fail=1
  done
done
# The tables (scripts/real_peers_k8s.py: per scheduler the runs' mean and range beside the
# simulator's ensembles, each run against its own, DeepShare against each peer).
python3 "$SRC/scripts/real_peers_k8s.py" "$OUT" "${SCHEDULERS[@]}" >"$OUT/table.md" || fail=1
cat "$OUT/table.md"
exit $fail
