#!/usr/bin/env bash
# A node removed while it runs (issue #23; docs/kubernetes.md §9, "Tests"): the Node object of
# a node with a running pod is deleted under `deepshare k8s run`. A cluster of its own: 2 KWOK
# nodes x 4 nvidia.com/gpu, no kube-scheduler; the controller manager's pod garbage collector
# deletes the pods of a node that no longer exists (after its quarantine, about 40-60 s).
#  1. Jobs `long` (4 GPUs, an hour) and `other` (4 GPUs, 10 min) run, one on each node;
#  2. the Node object under `long` is deleted: the scheduler must log the node gone;
#  3. the garbage collector deletes `long`'s pod and the Job controller makes a replacement
#     (its failure policy ignores the disruption): the only node with free GPUs in a model
#     that kept the node would be the deleted one, so the replacement must stay unbound;
#  4. the Node is created again (as a kubelet registers): the replacement is bound to it and
#     runs.
# Checks: nothing is bound to the node while it does not exist (the API's own record of every
# pod, a kubectl watch), the replacement runs on it once it is back, and no node ever had
# more nvidia.com/gpu bound than it has. About two minutes once the tools are built.
# Broken on purpose (Core::observe_nodes not marking unlisted nodes unusable) the replacement
# is bound to the deleted node in step 3 and the test fails.
# Skips (77) without jq. DS_TEST_OUT=DIR keeps the logs in DIR.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/k8s/own_cluster_lib.sh"
source "$SRC/tests/k8s/gpu_watch_lib.sh"
own_cluster_begin dsknode
own_cluster_start
watch_pods
tenant_namespaces a
"$BIN/deepshare" k8s run --tenants a=8 --no-leader-elect >"$BASE/check/scheduler.log" 2>&1 &
SCHED_PID=$!

pod_of() { # JOB: "NAME UID NODE PHASE" of its pods, one per line
  kubectl get pods -n a -l "job-name=$1" -o json |
    jq -r '.items[] | "\(.metadata.name) \(.metadata.uid) \(.spec.nodeName // "-") \(.status.phase)"'
}
running() { pod_of "$1" | grep -q ' Running$'; }

echo "== 1. long and other run, one on each node"
one_pod_job a long 4 3600s | kubectl create -f - >/dev/null || fail "Job long"
one_pod_job a other 4 600s | kubectl create -f - >/dev/null || fail "Job other"
wait_for 60 running long && wait_for 60 running other ||
  fail "long and other do not run: $(kubectl get pods -n a -o wide | tail -3)"
read -r _ long_uid gone _ < <(pod_of long)
kubectl get node "$gone" -o json >"$BASE/check/node.json" || fail "read node $gone"
echo "long runs on $gone (pod $long_uid)"

echo "== 2. the Node object $gone is deleted"
kubectl delete node "$gone" --wait=false >/dev/null || fail "delete node $gone"
deleted_at=$(date +%s)
wait_for 30 grep -q "\"event\":\"node_down\".*\"node\":\"$gone\".*\"state\":\"gone\"" "$BASE/check/scheduler.log" ||
  fail "the scheduler did not see $gone gone: $(grep node_ "$BASE/check/scheduler.log" | tail -3)"

echo "== 3. the garbage collector deletes long's pod; its replacement must stay unbound"
gone_pod() { ! kubectl get pods -n a -o json | jq -e --arg u "$long_uid" '.items[] | select(.metadata.uid == $u)' >/dev/null; }
wait_for 150 gone_pod || fail "long's pod was not deleted $(($(date +%s) - deleted_at)) s after its node"
echo "long's pod deleted $(($(date +%s) - deleted_at)) s after its node"
replacement() { pod_of long | grep -v "$long_uid" | head -1; }
has_replacement() { [ -n "$(replacement)" ]; }
wait_for 60 has_replacement || fail "no replacement pod for long: $(kubectl get pods -n a -o wide)"
sleep 8  # several scheduling cycles with the replacement pending and the node gone
read -r _ new_uid node phase < <(replacement)
[ "$node" = "-" ] || fail "the replacement $new_uid was bound to $node while $gone does not exist ($phase)"
echo "replacement $new_uid pending, unbound"

echo "== 4. the Node $gone is created again: the replacement runs on it"
jq 'del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.managedFields)
    | .spec = {}' "$BASE/check/node.json" | kubectl create -f - >/dev/null || fail "create node $gone again"
runs_there() {
  kubectl get pods -n a -o json | jq -e --arg u "$new_uid" --arg n "$gone" \
    '.items[] | select(.metadata.uid == $u and .status.phase == "Running" and .spec.nodeName == $n)' >/dev/null
}
wait_for 60 runs_there ||
  fail "the replacement does not run on $gone after it came back: $(pod_of long)"
grep -q "\"event\":\"node_up\".*\"node\":\"$gone\"" "$BASE/check/scheduler.log" || fail "no node_up for $gone"
kill -0 "$SCHED_PID" 2>/dev/null || fail "the scheduler exited: $(tail -3 "$BASE/check/scheduler.log")"
sleep 1  # the last changes reach the watch
kill "$WATCH_PID"
WATCH_PID=
# Nothing bound to the node between its deletion and its return: the watch's bindings in order.
bad=$(jq -r --arg n "$gone" --arg old "$long_uid" '
  select(.object.spec.nodeName == $n and .object.metadata.uid != $old and .type != "DELETED")
  | .object.metadata.uid' "$BASE/check/pods.watch" | grep -v "^$new_uid$" | sort -u)
[ -z "$bad" ] || fail "pods other than the replacement bound to $gone: $bad"
kubectl get nodes -o json >"$BASE/check/nodes.json" || fail "list nodes"
gpu_watch_check "$BASE/check/pods.watch" "$BASE/check/nodes.json" || fail "a node over its nvidia.com/gpu, or a pod bound without its decision"
echo "PASS: a deleted node got nothing while it was gone; its pod's replacement waited and ran on it once it was back"
