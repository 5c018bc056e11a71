#!/usr/bin/env bash
# Kubernetes at scale on a real API server (issue #25 item 4; docs/kubernetes.md §14):
# DeepShare (`deepshare k8s run`) and kube-scheduler place the same bare 1-GPU pods on the
# same KWOK nodes (NODES x GPUS nvidia.com/gpu, default 1,000 x 8), one after the other, a
# fresh cluster for each (scripts/k8s/start-cluster.sh; POD_DELETE=fast; KCM_QPS=100, so
# that the new nodes lose their not-ready taint in seconds, not minutes). The load and the
# measurements are bench/k8s_scale.py's: ARRIVALS pods at RATE per second (creation ->
# binding, pods bound per second), then FILL pods as one burst, then BACKLOG pods that must
# wait in the full cluster while CHURN_RATE running pods per second are deleted (freed GPU ->
# binding with BACKLOG pods pending); per phase the CPU seconds of the scheduler and of every
# cluster component, at the end their peak RSS. Writes OUT/<scheduler>/ (result.json,
# run.txt, the scheduler's log) and OUT/table.md (bench/k8s_scale_table.py).
#
# Schedulers:
#   deepshare      `deepshare k8s run --tenants bench=NODES*GPUS --no-leader-elect` (policy
#                  deepshare, one tenant whose quota is the whole cluster; bare pods are never
#                  preempted, so none runs on borrowed GPUs);
#   default        kube-scheduler as it ships: its client limited to 50 queries per second
#                  (burst 100), spreading pods (LeastAllocated on cpu/memory);
#   default-qps    kube-scheduler with its client's limit raised to SCHED_QPS (default 5000,
#                  burst twice that): DeepShare's client has no such limit, so this is the
#                  fair throughput peer.
#   kueue          the real Kueue (scripts/k8s/start-kueue.sh, plain-pod integration, its
#                  client at SCHED_QPS too) admits every pod against one ClusterQueue whose
#                  nominalQuota is the cluster's GPUs (and ample CPU and memory), and
#                  default-qps's kube-scheduler binds the admitted pods: creation -> binding
#                  includes the admission (bench/k8s_scale.py --kueue-queue). The CPU and
#                  memory of Kueue are in result.json ("kueue") beside kube-scheduler's.
#
# Usage: bench/k8s_scale.sh OUT [SCHEDULER...]   (default: default default-qps kueue deepshare)
# Env: NODES=1000 GPUS=8 ARRIVALS=10000 RATE=50 RUN_FOR=30 FILL=(NODES*GPUS) BACKLOG=10000
#      CHURN_RATE=50 CHURN_S=60 SETTLE=30 SCHED_QPS=5000 BIN=build/bin TIMEOUT=900
#      PROFILE=1: `perf record` of the scheduler under test for the whole run (199 Hz), its
#      report in OUT/<scheduler>/perf.txt (where the time goes; needs perf)
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BIN=${BIN:-$SRC/build/bin}
OUT=${1:?usage: bench/k8s_scale.sh OUT [SCHEDULER...]}
shift
SCHEDULERS=("$@")
[ ${#SCHEDULERS[@]} -gt 0 ] || SCHEDULERS=(default default-qps kueue deepshare)
NODES=${NODES:-1000}
GPUS=${GPUS:-8}
FILL=${FILL:-$((NODES * GPUS))}
SCHED_QPS=${SCHED_QPS:-5000}
for s in "${SCHEDULERS[@]}"; do
  case $s in
    deepshare | default | default-qps | kueue) ;;
    *) echo "k8s_scale.sh: unknown scheduler '$s' (deepshare|default|default-qps|kueue)" >&2; exit 2 ;;
  esac
done
[ -x "$BIN/deepshare" ] || { echo "k8s_scale.sh: no $BIN/deepshare (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
source "$SRC/bench/k8s_bench_lib.sh"
fail=0
for s in "${SCHEDULERS[@]}"; do
  dir=$OUT/$s
  mkdir -p "$dir"
  echo "== $s: cluster of $NODES nodes x $GPUS GPUs"
  BASE=$(mktemp -d /tmp/dsks.XXXX)
  qps=
  [ "$s" = default-qps ] || [ "$s" = kueue ] && qps=$SCHED_QPS
  t0=$(date +%s)
  NODES=$NODES GPUS=$GPUS SCHEDULER=1 SCHEDULER_QPS=$qps KCM_QPS=100 POD_DELETE=fast READY_TIMEOUT=600 \
    "$SRC/scripts/k8s/start-cluster.sh" | tee "$dir/run.txt" || exit 1
  echo "cluster start: $(($(date +%s) - t0)) s" | tee -a "$dir/run.txt"
  source "$BASE/env.sh"
  kubectl create namespace bench >/dev/null
  until kubectl -n bench get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  kueue_args=()
  if [ "$s" = kueue ]; then
    KUEUE_QPS=$SCHED_QPS KUEUE_BURST=$((SCHED_QPS * 2)) KUEUE_FRAMEWORKS="batch/job pod" \
      "$SRC/scripts/k8s/start-kueue.sh" | tee -a "$dir/run.txt" || exit 1
    kubectl apply -f - >/dev/null <<EOF || exit 1
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bench}
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: nvidia.com/gpu, nominalQuota: $FILL}
      - {name: cpu, nominalQuota: 100k}
      - {name: memory, nominalQuota: 1000Ti}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: bench, namespace: bench}
spec: {clusterQueue: bench}
EOF
    kueue_args=(--kueue-queue bench)
  fi
  if [ "$s" = deepshare ]; then
    "$BIN/deepshare" k8s run --tenants "bench=$FILL" --no-leader-elect >"$dir/scheduler.log" 2>&1 &
    SCHED_PID=$!
    pid=$SCHED_PID name=deepshare
    sleep 2
    kill -0 "$pid" 2>/dev/null || { echo "deepshare k8s run exited:"; tail "$dir/scheduler.log"; exit 1; }
  else
    pid=$(cat "$BASE/run/kube-scheduler.pid") name=default-scheduler
  fi
  PERF_PID=
  if [ "${PROFILE:-0}" = 1 ] && command -v perf >/dev/null; then
    perf record -F 199 -p "$pid" -o "$dir/perf.data" >/dev/null 2>&1 &
    PERF_PID=$!
  fi
  python3 "$SRC/bench/k8s_scale.py" --base "$BASE" --scheduler-name "$name" --sched-pid "$pid" \
    --arrivals "${ARRIVALS:-10000}" --rate "${RATE:-50}" --run-for "${RUN_FOR:-30}" \
    --fill "$FILL" --backlog "${BACKLOG:-10000}" --settle "${SETTLE:-30}" \
    --churn-rate "${CHURN_RATE:-50}" --churn-s "${CHURN_S:-60}" --timeout "${TIMEOUT:-900}" \
    "${kueue_args[@]}" --out "$dir/result.json" | tee -a "$dir/run.txt" || fail=1
  if [ -n "$PERF_PID" ]; then
    kill -INT "$PERF_PID" 2>/dev/null
    wait "$PERF_PID" 2>/dev/null
    perf report -i "$dir/perf.data" --stdio --sort symbol --percent-limit 0.5 2>/dev/null | head -n 300 >"$dir/perf.txt"
  fi
  [ "$s" != deepshare ] && cp "$BASE/log/kube-scheduler.log" "$dir/scheduler.log"
  [ "$s" = kueue ] && cp "$BASE/log/kueue.log" "$dir/kueue.log"
  echo "machine: $(nproc) cores, load at the end $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$dir/run.txt"
  stop_all
done
python3 "$SRC/bench/k8s_scale_table.py" "$OUT" "${SCHEDULERS[@]}" >"$OUT/table.md" || fail=1
cat "$OUT/table.md"
exit $fail
