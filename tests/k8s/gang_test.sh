#!/usr/bin/env bash
# Gangs on a real control plane (issue #23; docs/kubernetes.md §8, "Gangs" and "Tests"): pods
# labelled deepshare.io/gang=NAME with deepshare.io/gang-size=N are one job, placed
# all-or-nothing. A cluster of its own: 2 KWOK nodes x 4 nvidia.com/gpu, no kube-scheduler,
# `deepshare k8s run --config tests/k8s/gang.yaml` (the deepshare policy, tenants a and b with
# 4 GPUs each, a minute of policy time per wall second; no Lease).
#  1. a bare pod of gang `lonely` (size 2, written as Kueue's plain pod group: label
#     kueue.x-k8s.io/pod-group-name, annotation kueue.x-k8s.io/pod-group-total-count) alone:
#     it stays unbound, told why (its condition);
#  2. Job `blocker` of tenant b (4 GPUs, 25 s) runs; then the indexed Job `train` of tenant a
#     (2 pods x 4 GPUs, gang `train`, size 2; 8 GPUs: 4 borrowed) must stay wholly unbound
#     while only 4 GPUs are free: not one of its pods is bound;
#  3. once `blocker` ends both pods of `train` are bound together, one on each node;
#  4. tenant b's Job `reclaim` (4 GPUs): DeepShare evicts both pods of the borrowing gang (the
#     whole gang, not one pod), `reclaim` runs, and the gang's replacements (its Job recreates
#     them) wait unbound while only 4 GPUs are free;
#  5. once `reclaim` ends the gang runs again as a whole, as the same job (the scheduler's
#     log names the key gang:a/train for both starts); then Job train is deleted;
#  6. without a label of ours: Job `blocker2` of tenant b (4 GPUs, 15 s) runs, then the indexed
#     Job `pair` of tenant a (2 pods x 4 GPUs, parallelism = completions = 2, no gang label or
#     annotation) must stay wholly unbound beside it and, once it ends, run whole on two nodes
#     as one job (a/job:pair).
#  7. work-queue Jobs of tenant a (parallelism 1, completions 2, 2 GPUs, 10 s each), one
#     NonIndexed (`slots`) and one Indexed (`items`): the running pod of each is deleted, its
#     Job's replacement runs as the same item (the log starts a/job:slots~0 and a/job:items#0
#     twice), and the second completion is a new item (~1, #1: one start each).
#  8. nodes of 64Gi (NODE_MEMORY): two bare pods of 2 GPUs and 40Gi each fit one node's GPUs but
#     not its memory: they run at the same time on two nodes; a pod of 100Gi is refused (told
#     why in its condition), never bound; beside them two 1-GPU pods binding host port 8080
#     run on two nodes.
# Checks, from the API's own record of every pod (a kubectl watch): no node ever over its
# nvidia.com/gpu, every DeepShare pod bound with its decision, and each decision of the gang
# carried by both its pods (bound from one decision, not one at a time); the same for `pair`.
# About 125 s once the tools are built.
# Broken on purpose (every gang label ignored, so that every pod is a job of its own) step 1
# fails: lonely-0 is bound; with step 1 left out, step 2 fails: a pod of `train` is bound
# beside `blocker`. With the Jobs ignored (no pod joins its Job's gang) step 6 fails: a pod of
# `pair` is bound beside `blocker2`. With the room check left out (K8sAdapter::room_refusal_on)
# step 8 fails: mem-1 and mem-2 bound to one node (and with the host port check left out,
# port-1 and port-2 on one node). With each replacement a job of its own (the slot not taken
# over) step 7 fails: a/job:slots~0 started once.
# Skips (77) without jq. DS_TEST_OUT=DIR keeps the logs in DIR.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/k8s/own_cluster_lib.sh"
source "$SRC/tests/k8s/gpu_watch_lib.sh"
own_cluster_begin dskgang
NODE_MEMORY=64Gi own_cluster_start  # step 8: two 40Gi pods fit a node's GPUs, not its memory
watch_pods
tenant_namespaces a b
"$BIN/deepshare" k8s run --config "$SRC/tests/k8s/gang.yaml" --no-leader-elect --eviction-grace 0 \
  >"$BASE/check/scheduler.log" 2>&1 &
SCHED_PID=$!

pods_of() { # JOB: "NAME NODE PHASE TERMINATING" of its pods, one per line
  kubectl get pods -n "$2" -l "job-name=$1" -o json |
    jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-") \(.status.phase) \(.metadata.deletionTimestamp != null)"'
}
running() { pods_of "$1" "$2" | grep -q ' Running false$'; }
# Live pods of train: bound ones and all of them.
live_of() { pods_of "${1:-train}" a | grep -c ' false$'; }
bound_of() { pods_of "${1:-train}" a | grep ' false$' | grep -vc ' - '; }
train_live() { live_of train; }
train_bound() { bound_of train; }
gang_runs() { # [JOB]: its 2 live pods run
  [ "$(live_of "${1:-train}")" = 2 ] && [ "$(pods_of "${1:-train}" a | grep -c ' Running false$')" = 2 ]
}
gang_job() { # NS NAME GPUS RUN_FOR PODS [nolabel]: an indexed Job whose pods are one gang
  local labels='{"deepshare.io/gang": "'"$2"'"}' annotations='{"deepshare.io/run-for": "'"$4"'", "deepshare.io/gang-size": "'"$5"'"}'
  [ "${6:-}" = nolabel ] && labels='{}' annotations='{"deepshare.io/run-for": "'"$4"'"}'
  cat <<JOB
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$2", "namespace": "$1"},
 "spec": {"backoffLimit": 100, "completionMode": "Indexed", "completions": $5, "parallelism": $5,
  "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
  "template": {"metadata": {"labels": $labels, "annotations": $annotations},
   "spec": {"schedulerName": "deepshare", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "train", "image": "registry.invalid/deepshare/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}}}
JOB
}

echo "== 1. a gang of 2 (a Kueue pod group) with one pod stays unbound and is told why"
kubectl apply -f - >/dev/null <<'POD' || fail "pod lonely-0"
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "lonely-0", "namespace": "a", "labels": {"kueue.x-k8s.io/pod-group-name": "lonely"},
              "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"}},
 "spec": {"schedulerName": "deepshare", "terminationGracePeriodSeconds": 0,
  "containers": [{"name": "c", "image": "registry.invalid/x:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
POD
told() {
  kubectl get pod lonely-0 -n a -o json |
    jq -e '.status.conditions[]? | select(.type == "PodScheduled" and ((.message // "") | test("all its 2 pods exist \\(1 now\\)")))' >/dev/null
}
lonely_node() { kubectl get pod lonely-0 -n a -o jsonpath='{.spec.nodeName}'; }
wait_for 30 told || fail "lonely-0 not told why it waits (bound to: '$(lonely_node)'): $(kubectl get pod lonely-0 -n a -o json | jq -c .status.conditions)"
[ -z "$(lonely_node)" ] || fail "lonely-0, one pod of a gang of 2, was bound to $(lonely_node)"
kubectl delete pod lonely-0 -n a --wait=false >/dev/null

echo "== 2. blocker runs; the gang train (2 x 4 GPUs) must stay wholly unbound beside it"
one_pod_job b blocker 4 25s | kubectl create -f - >/dev/null || fail "Job blocker"
wait_for 60 running blocker b || fail "blocker does not run: $(kubectl get pods -A -o wide)"
gang_job a train 4 3600s 2 | kubectl create -f - >/dev/null || fail "Job train"
wait_for 30 test "$(train_live)" = 2 || fail "train's 2 pods were not created"
for _ in $(seq 1 12); do  # 6 s of scheduling cycles with 4 GPUs free
  [ "$(train_bound)" = 0 ] || fail "a pod of the gang was bound while only 4 GPUs were free: $(pods_of train a)"
  sleep 0.5
done
running blocker b || fail "blocker no longer runs (too early for the check): $(pods_of blocker b)"
echo "train waits whole while blocker runs"

echo "== 3. blocker ends: both pods of train are bound together, one on each node"
wait_for 60 gang_runs || fail "the gang does not run after blocker: $(pods_of train a)"
nodes=$(pods_of train a | grep ' false$' | awk '{print $2}' | sort -u | wc -l)
[ "$nodes" = 2 ] || fail "train's pods are not on two nodes: $(pods_of train a)"
first=$(pods_of train a | grep ' false$' | awk '{print $1}' | sort | tr '\n' ' ')

echo "== 4. b reclaims its 4 GPUs: the whole gang is evicted, its replacements wait whole"
one_pod_job b reclaim 4 20s | kubectl create -f - >/dev/null || fail "Job reclaim"
wait_for 60 running reclaim b || fail "reclaim does not run: $(pods_of train a; pods_of reclaim b)"
replaced() { # both first pods gone or terminating
  for p in $first; do pods_of train a | grep -q "^$p .* false$" && return 1; done
  return 0
}
wait_for 30 replaced || fail "not every pod of the gang was evicted: $(pods_of train a)"
for _ in $(seq 1 8); do
  [ "$(train_bound)" = 0 ] || fail "a pod of the evicted gang was bound while only 4 GPUs were free: $(pods_of train a)"
  sleep 0.5
done
running reclaim b || fail "reclaim no longer runs (too early for the check): $(pods_of reclaim b)"

echo "== 5. reclaim ends: the gang runs again as a whole, as the same job"
wait_for 90 gang_runs || fail "the gang does not run again after reclaim: $(pods_of train a)"
starts=$(grep -c '"event":"start".*"job":"a/gang:train"' "$BASE/check/scheduler.log")
[ "$starts" -ge 2 ] || fail "the scheduler did not start gang:a/train twice ($starts)"
grep -q '"event":"job_cancelled".*"job":"a/gang:train"' "$BASE/check/scheduler.log" &&
  fail "the gang left between its eviction and its replacements: $(grep 'gang:train' "$BASE/check/scheduler.log" | cut -c1-200)"
kubectl delete job train -n a --wait=false >/dev/null || fail "delete Job train"
wait_for 30 test "$(train_live)" = 0 || fail "train's pods were not deleted: $(pods_of train a)"

echo "== 6. an indexed Job without a label (2 x 4 GPUs) is a gang too: it waits whole beside blocker2"
one_pod_job b blocker2 4 15s | kubectl create -f - >/dev/null || fail "Job blocker2"
wait_for 60 running blocker2 b || fail "blocker2 does not run: $(kubectl get pods -A -o wide)"
gang_job a pair 4 3600s 2 nolabel | kubectl create -f - >/dev/null || fail "Job pair"
wait_for 30 test "$(live_of pair)" = 2 || fail "pair's 2 pods were not created"
for _ in $(seq 1 12); do
  [ "$(bound_of pair)" = 0 ] || fail "a pod of the indexed Job was bound while only 4 GPUs were free: $(pods_of pair a)"
  sleep 0.5
done
running blocker2 b || fail "blocker2 no longer runs (too early for the check): $(pods_of blocker2 b)"
wait_for 60 gang_runs pair || fail "pair does not run after blocker2: $(pods_of pair a)"
nodes=$(pods_of pair a | grep ' false$' | awk '{print $2}' | sort -u | wc -l)
[ "$nodes" = 2 ] || fail "pair's pods are not on two nodes: $(pods_of pair a)"
grep -q '"event":"start".*"job":"a/job:pair"' "$BASE/check/scheduler.log" ||
  fail "the scheduler did not start a/job:pair as one job: $(grep 'pair' "$BASE/check/scheduler.log" | cut -c1-200 | head -5)"
kubectl delete job pair -n a --wait=false >/dev/null || fail "delete Job pair"
wait_for 30 test "$(live_of pair)" = 0 || fail "pair's pods were not deleted: $(pods_of pair a)"

echo "== 7. work-queue Jobs (one pod at a time of two): a deleted pod's replacement is the same item"
queue_job() { # NAME MODE: parallelism 1, completions 2, 2 GPUs, 10 s each
  cat <<JOB
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$1", "namespace": "a"},
 "spec": {"backoffLimit": 100, "completionMode": "$2", "completions": 2, "parallelism": 1,
  "template": {"metadata": {"annotations": {"deepshare.io/run-for": "10s"}},
   "spec": {"schedulerName": "deepshare", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "work", "image": "registry.invalid/deepshare/work:1",
                    "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}}
JOB
}
queue_job slots NonIndexed | kubectl create -f - >/dev/null || fail "Job slots"
queue_job items Indexed | kubectl create -f - >/dev/null || fail "Job items"
for job in slots items; do
  wait_for 60 running "$job" a || fail "$job does not run: $(pods_of "$job" a)"
  victim=$(pods_of "$job" a | awk '/ Running false$/ {print $1}')
  kubectl delete pod "$victim" -n a --wait=false >/dev/null || fail "delete $victim"
done
complete() { kubectl get job "$1" -n a -o json | jq -e '.status.conditions[]? | select(.type == "Complete" and .status == "True")' >/dev/null; }
for job in slots items; do
  wait_for 120 complete "$job" || fail "$job did not complete: $(pods_of "$job" a)"
done
starts_of() { grep -c '"event":"start".*"job":"a/job:'"$1"'"' "$BASE/check/scheduler.log"; }
for item in 'slots~0:2' 'slots~1:1' 'items#0:2' 'items#1:1'; do
  [ "$(starts_of "${item%:*}")" = "${item#*:}" ] ||
    fail "a/job:${item%:*} started $(starts_of "${item%:*}") times, not ${item#*:}: $(grep 'job:slots\|job:items' "$BASE/check/scheduler.log" | cut -c1-220)"
done
echo "the deleted pods' replacements ran as the same items (slots~0, items#0: two starts each)"
echo "== 8. the kubelet's room: two 2-GPU pods of 40Gi run side by side on two nodes; 100Gi is refused"
mem_pod() { # NAME MEMORY
  cat <<POD
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$1", "namespace": "a", "annotations": {"deepshare.io/run-for": "20s"}},
 "spec": {"schedulerName": "deepshare", "terminationGracePeriodSeconds": 0, "restartPolicy": "Never",
  "containers": [{"name": "c", "image": "registry.invalid/x:1",
                  "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "$2"}}}]}}
POD
}
for p in mem-1 mem-2; do mem_pod "$p" 40Gi | kubectl create -f - >/dev/null || fail "pod $p"; done
mem_pod mem-huge 100Gi | kubectl create -f - >/dev/null || fail "pod mem-huge"
node_of() { kubectl get pod "$1" -n a -o jsonpath='{.spec.nodeName}'; }
both_run() { [ "$(kubectl get pods -n a mem-1 mem-2 -o jsonpath='{.items[*].status.phase}')" = "Running Running" ]; }
wait_for 60 both_run || fail "mem-1 and mem-2 do not run together: $(kubectl get pods -n a -o wide | grep mem-)"
[ "$(node_of mem-1)" != "$(node_of mem-2)" ] ||
  fail "mem-1 and mem-2 were bound to one node ($(node_of mem-1)): 80Gi on a node that allocates 64Gi"
huge_told() {
  kubectl get pod mem-huge -n a -o json |
    jq -e '.status.conditions[]? | select(.type == "PodScheduled" and ((.message // "") | test("more CPU or memory than any GPU node allocates")))' >/dev/null
}
wait_for 30 huge_told || fail "mem-huge not told why: $(kubectl get pod mem-huge -n a -o json | jq -c .status.conditions)"
[ -z "$(node_of mem-huge)" ] || fail "mem-huge (100Gi) was bound to $(node_of mem-huge)"
echo "mem-1 on $(node_of mem-1), mem-2 on $(node_of mem-2); mem-huge refused"
# Beside them (2 GPUs free on each node): two 1-GPU pods binding host port 8080 run on two nodes.
for p in port-1 port-2; do
  mem_pod "$p" 1Gi | jq '.spec.containers[0].resources.limits["nvidia.com/gpu"] = "1"
    | .spec.containers[0].ports = [{"containerPort": 8080, "hostPort": 8080}]' |
    kubectl create -f - >/dev/null || fail "pod $p"
done
ports_run() { [ "$(kubectl get pods -n a port-1 port-2 -o jsonpath='{.items[*].status.phase}')" = "Running Running" ]; }
wait_for 60 ports_run || fail "port-1 and port-2 do not run together: $(kubectl get pods -n a -o wide | grep port-)"
[ "$(node_of port-1)" != "$(node_of port-2)" ] ||
  fail "port-1 and port-2 were bound to one node ($(node_of port-1)): host port 8080 twice"
echo "port-1 on $(node_of port-1), port-2 on $(node_of port-2)"
kill -0 "$SCHED_PID" 2>/dev/null || fail "the scheduler exited: $(tail -3 "$BASE/check/scheduler.log")"
sleep 1  # the last changes reach the watch
kill "$WATCH_PID"
WATCH_PID=
# A gang's pods bound from one decision: every decision (deepshare.io/decision, its time and
# epoch) that a pod of JOB carries is carried by exactly 2 of its pods.
decisions_of() { # JOB AT_LEAST
  jq -r --arg job "$1" 'select(.object.metadata.namespace == "a" and (.object.metadata.labels["job-name"] // "") == $job
    and .object.metadata.annotations["deepshare.io/decision"] != null)
    | "\(.object.metadata.annotations["deepshare.io/decision"]) \(.object.metadata.uid)"' "$BASE/check/pods.watch" |
    sort -u | awk '{print $1}' | uniq -c >"$BASE/check/decisions_$1"
  echo "$1's decisions (pods per decision): $(awk '{print $1}' "$BASE/check/decisions_$1" | tr '\n' ' ')"
  [ "$(wc -l <"$BASE/check/decisions_$1")" -ge "$2" ] || fail "fewer than $2 decisions for $1: $(cat "$BASE/check/decisions_$1")"
  awk '$1 != 2 { bad = 1 } END { exit bad }' "$BASE/check/decisions_$1" ||
    fail "a decision of $1 bound other than 2 pods: $(cat "$BASE/check/decisions_$1")"
}
decisions_of train 2
decisions_of pair 1
kubectl get nodes -o json >"$BASE/check/nodes.json" || fail "list nodes"
gpu_watch_check "$BASE/check/pods.watch" "$BASE/check/nodes.json" || fail "a node over its nvidia.com/gpu, or a pod bound without its decision"
grep -q '"level":"error"' "$BASE/check/scheduler.log" && fail "errors in the scheduler's log: $(grep '"level":"error"' "$BASE/check/scheduler.log" | head -3)"
echo "PASS: gangs (labelled, Kueue's, an indexed Job's) wait whole, run whole, are evicted whole and come back as the same job; work items come back as the same item"
