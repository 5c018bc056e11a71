#!/usr/bin/env bash
# End-to-end: DeepShare as the scheduler on a REAL Kubernetes control plane (`deepshare k8s
# run`, docs/kubernetes.md §8). A cluster of its own: 4 KWOK nodes x 4 nvidia.com/gpu, no
# kube-scheduler, pods deleted as a kubelet would (POD_DELETE=graceful, POD_TERMINATE=1: an
# evicted pod turns Failed at the end of its grace period, then goes). `deepshare k8s run`
# runs in the background (stopped by PID) with the tenants of tests/k8s/deepshare2.yaml
# (namespaces ewi and wor, 8 GPUs each), and:
#  1. reclaim: ewi fills the 16 GPUs with 4 Jobs of 4 GPUs (8 of them borrowed; their pods
#     ask for an hour's grace period, the schedulers run with --eviction-grace 2), then wor
#     asks for its 8: DeepShare must evict two of ewi's pods (Eviction API) with a grace
#     period of at most 2 s, and bind wor's only once the API shows their GPUs free;
#  2. `deepshare k8s replay --scheduler deepshare` of a Venus excerpt (2 tenants); 20 s in,
#     the leader is killed (-9): the standby takes the Lease over and must adopt the running
#     pods from the API (their decision annotations) and go on.
# Leader election (a Lease deepshare-system/deepshare-scheduler, 6 s): two schedulers run from
# the start, A (leader) and B (standby, started once A leads). B must bind nothing while A
# leads, take over once A is killed, and give the Lease up at its clean stop.
# Checks, from the API's own records (a watch of every pod kept by kubectl for the whole run,
# and the objects at the end):
#  - B logged nothing it decided before it led; it adopted the pods that ran when A died;
#  - every binding's decision carries the epoch of its leader (A: 1, B: 2), in the watch's
#    order never an older epoch after a newer one; the Lease shows 2 transitions, no holder
#    after B's clean stop;
#  - every Job completed, every DeepShare pod Succeeded or was evicted (DisruptionTarget),
#    none is left pending; the evicted ones were evicted through the Eviction API;
#  - in the watch's order of events, no node ever had more nvidia.com/gpu bound to pods that
#    are not ended than its allocatable;
#  - a GPU pod in a namespace that is no tenant is not bound, and is told why (a Warning Event
#    FailedScheduling and the condition PodScheduled=False with the reason); once the
#    ConfigMap deepshare-tenants gives that namespace a quota, the same pod is bound (the
#    tenants are read from the API and re-read without a restart);
#  - every pod DeepShare bound carries its decision (deepshare.io/gpus names its node);
#  - a GPU node added while they run (gpu-node-5) is taken in (nodes_added) and used (a Job
#    runs there while the four others are cordoned);
#  - pods whose nodeSelector or required node affinity admit only gpu-node-3 (a label of ours)
#    are bound there; one whose selector no node matches is told why and not bound;
#  - pods that waited were told their typed waiting reason (PodScheduled=False, message
#    "DeepShare: waiting (REASON): ...");
#  - the metrics endpoints (--metrics 127.0.0.1:0): A says it leads and B that it waits, then
#    B leads, counts its bindings and shows the live quota of namespace nobody;
#  - the replay wrote its report (summary.json, jobs.csv, observed.csv, replay.json).
# About 2 minutes once the tools are built. Skips (77) without the Venus trace or jq.
# Env: FROM, JOBS, LOAD (the excerpt), KILL_AFTER (s, 20); DS_TEST_OUT=DIR keeps the outputs and logs in DIR.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT="from=${FROM:-3000},jobs=${JOBS:-30},load=${LOAD:-2},min=5,max=60"
CONFIG=$SRC/tests/k8s/deepshare2.yaml
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/setup-k8s.sh)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
source "$SRC/tests/k8s/gpu_watch_lib.sh"
export BASE
BASE=$(mktemp -d /tmp/dskrun.XXXX)
SCHED_PID= STANDBY_PID= WATCH_PID=
cleanup() {
  [ -n "$SCHED_PID" ] && kill "$SCHED_PID" 2>/dev/null
  [ -n "$STANDBY_PID" ] && kill "$STANDBY_PID" 2>/dev/null
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
  if [ -n "${DS_TEST_OUT:-}" ]; then
    mkdir -p "$DS_TEST_OUT" && cp -r "$BASE/out" "$BASE/check" "$DS_TEST_OUT/" 2>/dev/null
  fi
  "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
mkdir -p "$BASE/check"
NODES=4 GPUS=4 POD_DELETE=graceful POD_TERMINATE=1 "$SRC/scripts/k8s/start-cluster.sh" ||
  fail "cluster"
source "$BASE/env.sh"

# The API's own record of every pod, in the order the API server sends the changes.
kubectl get pods -A --watch --output-watch-events -o json >"$BASE/check/pods.watch" 2>"$BASE/check/watch.err" &
WATCH_PID=$!
# Two schedulers, one Lease: A leads, B waits as a standby. Their tenants: the ConfigMap
# deepshare-tenants (no Kueue here), watched.
kubectl create namespace deepshare-system >/dev/null || fail "namespace deepshare-system"
kubectl create configmap deepshare-tenants -n deepshare-system --from-literal=ewi=8 \
  --from-literal=wor=8 >/dev/null || fail "ConfigMap deepshare-tenants"
LEASE_ARGS=(--lease-duration 6 --tenants-from-api --metrics 127.0.0.1:0 --eviction-grace 2)
"$BIN/deepshare" k8s run --config "$CONFIG" "${LEASE_ARGS[@]}" --identity sched-a \
  >"$BASE/check/scheduler.log" 2>&1 &
SCHED_PID=$!
for _ in $(seq 1 150); do grep -q '"event":"leader"' "$BASE/check/scheduler.log" && break; sleep 0.2; done
grep -q '"event":"leader"' "$BASE/check/scheduler.log" || fail "A did not take the Lease: $(tail -3 "$BASE/check/scheduler.log")"
"$BIN/deepshare" k8s run --config "$CONFIG" "${LEASE_ARGS[@]}" --identity sched-b \
  >"$BASE/check/scheduler2.log" 2>&1 &
STANDBY_PID=$!
for _ in $(seq 1 150); do grep -q '"event":"standby"' "$BASE/check/scheduler2.log" && break; sleep 0.2; done
grep -q '"event":"standby"' "$BASE/check/scheduler2.log" || fail "B is no standby: $(tail -3 "$BASE/check/scheduler2.log")"
# The Prometheus endpoint of each (port 0: a free one, logged).
metrics() { # LOG -> the scheduler's metrics text
  curl -fsS "http://127.0.0.1:$(grep -o '"event":"metrics_listening".*"port":[0-9]*' "$1" | grep -o '[0-9]*$')/metrics"
}
metrics "$BASE/check/scheduler.log" | grep -qx 'deepshare_leader 1' || fail "A's metrics do not say it leads"
metrics "$BASE/check/scheduler2.log" | grep -qx 'deepshare_leader 0' || fail "B's metrics do not say it waits"
for ns in ewi wor; do kubectl create namespace "$ns" >/dev/null || fail "namespace $ns"; done
for ns in ewi wor; do
  for _ in $(seq 1 100); do kubectl get sa default -n "$ns" >/dev/null 2>&1 && break; sleep 0.2; done
done

# A Job of one pod for DeepShare: NS NAME GPUS RUN_FOR GRACE_S
job() {
  cat <<EOF
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$2", "namespace": "$1", "labels": {"deepshare.io/test": "reclaim"}},
 "spec": {"backoffLimit": 100,
  "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
  "template": {"metadata": {"annotations": {"deepshare.io/run-for": "$4"}},
   "spec": {"schedulerName": "deepshare", "restartPolicy": "Never", "terminationGracePeriodSeconds": $5,
    "containers": [{"name": "train", "image": "registry.invalid/deepshare/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}}}
EOF
}
echo "== 1. reclaim: ewi borrows the whole cluster, wor comes back for its 8 GPUs"
for i in 1 2 3 4; do job ewi borrow-$i 4 20s 3600 | kubectl create -f - >/dev/null || fail "Job borrow-$i"; done
for _ in $(seq 1 100); do
  [ "$(kubectl get pods -n ewi --field-selector=status.phase=Running -o name | wc -l)" = 4 ] && break
  sleep 0.2
done
[ "$(kubectl get pods -n ewi --field-selector=status.phase=Running -o name | wc -l)" = 4 ] ||
  fail "DeepShare did not run ewi's 4 pods (scheduler log: $(tail -3 "$BASE/check/scheduler.log"))"
for i in 1 2; do job wor reclaim-$i 4 5s 0 | kubectl create -f - >/dev/null || fail "Job reclaim-$i"; done
kubectl wait --for=condition=Complete -n wor job/reclaim-1 job/reclaim-2 --timeout=60s >/dev/null ||
  fail "wor's Jobs did not complete: $(kubectl get pods -A -o wide)"
kubectl wait --for=condition=Complete -n ewi job --all --timeout=90s >/dev/null ||
  fail "ewi's Jobs did not complete after their eviction: $(kubectl get pods -A -o wide)"

echo "== 1b. refusal: a GPU pod in a namespace that is no tenant is told why, not bound"
kubectl create namespace nobody >/dev/null || fail "namespace nobody"
for _ in $(seq 1 100); do kubectl get sa default -n nobody >/dev/null 2>&1 && break; sleep 0.2; done
kubectl run stray -n nobody --image=registry.invalid/x:1 --restart=Never \
  --overrides='{"spec": {"schedulerName": "deepshare", "containers": [{"name": "stray",
    "image": "registry.invalid/x:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}' >/dev/null ||
  fail "pod nobody/stray"
kubectl wait --for=condition=PodScheduled=false -n nobody pod/stray --timeout=30s >/dev/null ||
  fail "nobody/stray was not told it will not be scheduled"
msg=$(kubectl get pod stray -n nobody -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
echo "nobody/stray: $msg"
case $msg in *"no DeepShare quota"*) ;; *) fail "the condition does not say why: $msg" ;; esac
kubectl get events -n nobody -o json | jq -e '[.items[] | select(.reason == "FailedScheduling"
  and .reportingComponent == "deepshare")] | length > 0' >/dev/null ||
  fail "no FailedScheduling Event from deepshare for nobody/stray"
[ -z "$(kubectl get pod stray -n nobody -o jsonpath='{.spec.nodeName}')" ] || fail "nobody/stray was bound"

echo "== 1c. quotas without a restart: namespace nobody gets 1 GPU in the ConfigMap, stray is bound"
kubectl patch configmap deepshare-tenants -n deepshare-system --type merge -p '{"data": {"nobody": "1"}}' >/dev/null ||
  fail "patch the ConfigMap"
for _ in $(seq 1 150); do
  [ -n "$(kubectl get pod stray -n nobody -o jsonpath='{.spec.nodeName}')" ] && break
  sleep 0.2
done
[ -n "$(kubectl get pod stray -n nobody -o jsonpath='{.spec.nodeName}')" ] ||
  fail "nobody/stray not bound after its namespace got a quota: $(grep tenants_ "$BASE/check/scheduler.log" | tail -2)"
grep '"event":"tenants_reloaded"' "$BASE/check/scheduler.log" | tail -1
grep -q '"event":"tenants_reloaded".*nobody=1' "$BASE/check/scheduler.log" || fail "no tenants_reloaded with nobody=1"
kubectl delete pod stray -n nobody --grace-period=1 --wait=false >/dev/null

echo "== 1d. a GPU node added while the schedulers run (gpu-node-5, 4 GPUs) is used"
kubectl get node gpu-node-1 -o json | jq '{apiVersion, kind,
  metadata: {name: "gpu-node-5", labels: (.metadata.labels + {"kubernetes.io/hostname": "gpu-node-5"}),
             annotations: {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
  status: {capacity: .status.capacity, allocatable: .status.allocatable}}' | kubectl create -f - >/dev/null ||
  fail "node gpu-node-5"
for _ in $(seq 1 150); do grep -q '"event":"nodes_added"' "$BASE/check/scheduler.log" && break; sleep 0.2; done
grep '"event":"nodes_added"' "$BASE/check/scheduler.log" || fail "A did not take gpu-node-5 in"
# Used: with the four others cordoned, a 1-GPU Job of wor must run there.
kubectl cordon gpu-node-1 gpu-node-2 gpu-node-3 gpu-node-4 >/dev/null || fail "cordon"
job wor grow-1 1 2s 0 | kubectl create -f - >/dev/null || fail "Job grow-1"
kubectl wait --for=condition=Complete -n wor job/grow-1 --timeout=60s >/dev/null ||
  fail "wor/grow-1 did not run on the added node: $(kubectl get pods -n wor -o wide | tail -2)"
node=$(kubectl get pods -n wor -l job-name=grow-1 -o jsonpath='{.items[0].spec.nodeName}')
echo "wor/grow-1 ran on $node"
[ "$node" = gpu-node-5 ] || fail "wor/grow-1 ran on $node, not on the added gpu-node-5"
kubectl uncordon gpu-node-1 gpu-node-2 gpu-node-3 gpu-node-4 >/dev/null || fail "uncordon"

echo "== 1e. a pod's nodeSelector and required node affinity are its nodes (the kubelet checks them)"
kubectl label node gpu-node-3 deepshare.io/test-zone=z1 >/dev/null || fail "label gpu-node-3"
# POD NS RULES(json of spec fields): a bare 1-GPU pod for DeepShare that runs 2 s
rule_pod() {
  kubectl run "$1" -n "$2" --image=registry.invalid/x:1 --restart=Never \
    --annotations=deepshare.io/run-for=2s --overrides="{\"spec\": {\"schedulerName\": \"deepshare\",
      \"containers\": [{\"name\": \"c\", \"image\": \"registry.invalid/x:1\",
        \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}], $3}}" >/dev/null || fail "pod $2/$1"
}
rule_pod sel-1 wor '"nodeSelector": {"deepshare.io/test-zone": "z1"}'
rule_pod sel-2 wor '"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
  {"nodeSelectorTerms": [{"matchExpressions": [{"key": "deepshare.io/test-zone", "operator": "In", "values": ["z1", "z2"]}]}]}}}'
rule_pod sel-none wor '"nodeSelector": {"deepshare.io/test-zone": "z9"}'
for p in sel-1 sel-2; do
  for _ in $(seq 1 150); do
    [ -n "$(kubectl get pod "$p" -n wor -o jsonpath='{.spec.nodeName}')" ] && break
    sleep 0.2
  done
  node=$(kubectl get pod "$p" -n wor -o jsonpath='{.spec.nodeName}')
  echo "wor/$p bound to ${node:-nothing}"
  [ "$node" = gpu-node-3 ] || fail "wor/$p, whose rules admit only gpu-node-3, was bound to '${node}'"
done
kubectl wait --for=condition=PodScheduled=false -n wor pod/sel-none --timeout=30s >/dev/null ||
  fail "wor/sel-none (no node has its label) was not told it will not be scheduled"
msg=$(kubectl get pod sel-none -n wor -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
echo "wor/sel-none: $msg"
case $msg in *"no GPU node matches"*) ;; *) fail "the condition does not say why: $msg" ;; esac
kubectl delete pod sel-none -n wor --grace-period=1 --wait=false >/dev/null
kubectl wait --for=jsonpath='{.status.phase}'=Succeeded -n wor pod/sel-1 pod/sel-2 --timeout=30s >/dev/null ||
  fail "wor/sel-1 and sel-2 did not complete"

echo "== 2. replay a Venus excerpt with DeepShare scheduling ($EXCERPT); kill -9 the leader midway"
"$BIN/deepshare" k8s replay --config "$CONFIG" --trace "$TRACE" --excerpt "$EXCERPT" \
  --time-scale 60 --scheduler deepshare --out "$BASE/out" --timeout 150 --quiet &
REPLAY_PID=$!
sleep "${KILL_AFTER:-20}"
grep -q '"event":"leader"' "$BASE/check/scheduler2.log" && fail "B took the Lease while A led"
grep -q '"event":"start"' "$BASE/check/scheduler2.log" && fail "the standby decided a start"
kill -9 "$SCHED_PID"
killed_at=$(date +%s.%N)
wait "$SCHED_PID" 2>/dev/null
SCHED_PID=$STANDBY_PID STANDBY_PID=
running=$(kubectl get pods -A --field-selector=status.phase=Running,spec.schedulerName=deepshare -o name | wc -l)
echo "leader A killed (-9) with $running DeepShare pods running; standby B takes over"
for _ in $(seq 1 300); do grep -q '"event":"leader"' "$BASE/check/scheduler2.log" && break; sleep 0.1; done
grep -q '"event":"leader"' "$BASE/check/scheduler2.log" || fail "B did not take the Lease over"
echo "B leads $(awk -v a="$killed_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after the kill (Lease: 6 s; polled every 0.1 s)"
wait "$REPLAY_PID" ||
  fail "replay (not every job completed): $(grep -c '"level":"error"' "$BASE/check/scheduler2.log") errors in the scheduler's log"
adopted=$(grep -c '"event":"adopt"' "$BASE/check/scheduler2.log")
echo "the new leader adopted $adopted running pods"
[ "$running" = 0 ] || [ "$adopted" -gt 0 ] || fail "the new leader adopted none of the $running running pods"
# Nothing decided by B before it led: its first start comes after its "leader" line.
first_start=$(grep -n '"event":"start"' "$BASE/check/scheduler2.log" | head -1 | cut -d: -f1)
led_at=$(grep -n '"event":"leader"' "$BASE/check/scheduler2.log" | head -1 | cut -d: -f1)
[ -z "$first_start" ] || [ "$first_start" -gt "$led_at" ] || fail "B decided a start before it led"
for f in summary.json jobs.csv observed.csv replay.json; do
  [ -s "$BASE/out/$f" ] || fail "replay wrote no $f"
done

metrics "$BASE/check/scheduler2.log" >"$BASE/check/metrics.txt" || fail "B's metrics endpoint"
grep -E '^deepshare_(leader|starts_total|k8s_binds_total|k8s_wait_conditions_total|tenant_quota_gpus|tenant_reloads_total)[ {]' "$BASE/check/metrics.txt"
grep -qx 'deepshare_leader 1' "$BASE/check/metrics.txt" || fail "B's metrics do not say it leads"
grep -q '^deepshare_tenant_quota_gpus{tenant="nobody"} 1$' "$BASE/check/metrics.txt" || fail "no live quota of nobody in the metrics"
grep -q '^deepshare_k8s_binds_total [1-9]' "$BASE/check/metrics.txt" || fail "no binding counted in B's metrics"
grep -q '^deepshare_k8s_bind_duration_seconds_count [1-9]' "$BASE/check/metrics.txt" ||
  fail "no binding's latency in B's metrics"
grep -q '^deepshare_k8s_writes_queued{lane="notes"} [0-9]' "$BASE/check/metrics.txt" ||
  fail "no notes' queue in B's metrics"
sleep 1  # the last changes reach the watch
kill "$SCHED_PID" && wait "$SCHED_PID"
rc=$?
SCHED_PID=
[ "$rc" = 0 ] || fail "deepshare k8s run exited $rc on SIGTERM"
kill "$WATCH_PID"
WATCH_PID=
grep -q '"event":"scheduler_stopped"' "$BASE/check/scheduler2.log" || fail "the scheduler did not stop cleanly"
lease=$(kubectl get lease deepshare-scheduler -n deepshare-system -o jsonpath='{.spec.holderIdentity}/{.spec.leaseTransitions}') ||
  fail "no Lease deepshare-system/deepshare-scheduler"
echo "Lease after B's clean stop (holder/transitions): $lease"
[ "$lease" = "/2" ] || fail "the Lease should have no holder and 2 transitions (A, then B): $lease"
grep '"level":"error"' "$BASE/check/scheduler.log" "$BASE/check/scheduler2.log" && fail "the scheduler logged errors"

kubectl get jobs -A -o json >"$BASE/check/jobs.json" || fail "list Jobs"
kubectl get pods -A -o json >"$BASE/check/pods.json" || fail "list pods"
kubectl get nodes -o json >"$BASE/check/nodes.json" || fail "list nodes"
jobs=$(jq '[.items[] | select(.metadata.namespace == "ewi" or .metadata.namespace == "wor")] | length' "$BASE/check/jobs.json")
done_jobs=$(jq '[.items[] | select(.metadata.namespace == "ewi" or .metadata.namespace == "wor")
  | select(any(.status.conditions[]?; .type == "Complete" and .status == "True"))] | length' "$BASE/check/jobs.json")
[ "$jobs" -ge 30 ] || fail "only $jobs Jobs in ewi and wor"
[ "$jobs" = "$done_jobs" ] || fail "$done_jobs of $jobs Jobs complete"
left=$(jq -r '.items[] | select(.spec.schedulerName == "deepshare")
  | select(.status.phase != "Succeeded" and (any(.status.conditions[]?; .type == "DisruptionTarget") | not))
  | .metadata.namespace + "/" + .metadata.name + " " + .status.phase' "$BASE/check/pods.json")
[ -z "$left" ] || fail "DeepShare pods neither succeeded nor evicted: $left"

# The watch, replayed in order (gpu_watch_lib.sh): no node over its nvidia.com/gpu, every pod
# DeepShare bound carries its decision.
gpu_watch_check "$BASE/check/pods.watch" "$BASE/check/nodes.json" >"$BASE/check/watch.txt"
grep -q "^gpu_watch_check: cannot read" "$BASE/check/watch.txt" && fail "reading the pod watch"
# Each pod's first binding, in the watch's order, with the epoch of the leader that decided it.
jq -rs '[.[] | .object | select(.spec.schedulerName == "deepshare" and (.spec.nodeName // "") != "")
  | {uid: .metadata.uid, epoch: ((.metadata.annotations["deepshare.io/decision"] // "")
      | (capture("epoch=(?<e>[0-9]+)").e // "none"))}]
  | reduce .[] as $b ({seen: {}, order: []}; if .seen[$b.uid] then . else .seen[$b.uid] = true | .order += [$b.epoch] end)
  | .order | "binding epochs in order: \(group_by(.) | map("\(.[0]) x\(length)") | join(", "))",
    (if any(.[]; . == "none") then "NO_EPOCH" else empty end),
    (. as $o | if [range(1; length) | select(($o[.] | tonumber? // 0) < ($o[. - 1] | tonumber? // 0))] | length > 0
      then "EPOCH_BACK" else empty end)' "$BASE/check/pods.watch" >>"$BASE/check/watch.txt" ||
  fail "reading the binding epochs"
jq -rs '[.[] | .object | select(.metadata.namespace == "ewi" or .metadata.namespace == "wor")
  | select(any(.status.conditions[]?; .type == "DisruptionTarget" and .reason == "EvictionByEvictionAPI"))
  | .metadata.uid] | unique | if length < 2 then "FEW_EVICTIONS" else empty end' "$BASE/check/pods.watch" >>"$BASE/check/watch.txt"
# The evictions' grace period: ewi's pods ask for 3600 s, the tenants' bound is 2 s.
jq -rs '[.[] | .object | select(.metadata.namespace == "ewi" and .metadata.deletionGracePeriodSeconds != null)
  | {u: .metadata.uid, g: .metadata.deletionGracePeriodSeconds}] | unique
  | "evicted ewi pods and their grace periods: \(map(.g) | group_by(.) | map("\(.[0]) s x\(length)") | join(", "))",
    (if any(.[]; .g > 2) then "LONG_GRACE" else empty end)' "$BASE/check/pods.watch" >>"$BASE/check/watch.txt" ||
  fail "reading the grace periods"
# Waiting pods told why: PodScheduled=False with "DeepShare: waiting (REASON)" while unbound.
jq -rs '[.[] | .object | select(.spec.schedulerName == "deepshare" and (.spec.nodeName // "") == "")
  | .metadata.uid as $u | .status.conditions[]? | select(.type == "PodScheduled" and .status == "False")
  | .message | select(startswith("DeepShare: waiting (")) | {u: $u, r: (capture("waiting \\((?<r>[a-z-]+)\\)").r)}]
  | unique | "waiting reasons told (pod, reason pairs): \(length): \(group_by(.r) | map("\(.[0].r) x\(length)") | join(", "))",
    (if length == 0 then "NO_WAIT_REASON" else empty end)' "$BASE/check/pods.watch" >>"$BASE/check/watch.txt" ||
  fail "reading the waiting reasons"
cat "$BASE/check/watch.txt"
grep -q "^NO_WAIT_REASON" "$BASE/check/watch.txt" && fail "no waiting pod was told why it waits"
grep -q "^pods bound by DeepShare: [1-9]" "$BASE/check/watch.txt" || fail "the watch saw no pod bound by DeepShare"
grep "^OVER " "$BASE/check/watch.txt" && fail "a node had more nvidia.com/gpu bound than allocatable"
grep "^UNDECIDED " "$BASE/check/watch.txt" && fail "pods bound without DeepShare's decision"
grep -q "^FEW_EVICTIONS" "$BASE/check/watch.txt" && fail "the reclaim evicted fewer than 2 pods"
grep -q "^LONG_GRACE" "$BASE/check/watch.txt" && fail "an eviction gave a pod more than its tenant's grace period"
grep -q "^NO_EPOCH" "$BASE/check/watch.txt" && fail "a binding without its leader's epoch"
grep -q "^EPOCH_BACK" "$BASE/check/watch.txt" && fail "a binding of a deposed leader after the new one's"
grep -q "^binding epochs in order: 1 x[0-9]*, 2 x" "$BASE/check/watch.txt" || fail "bindings not of A (epoch 1) then B (epoch 2)"
echo "PASS: every Job completed under DeepShare, no node over its nvidia.com/gpu, reclaim by eviction, leader failover"
