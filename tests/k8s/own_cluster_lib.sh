# Shared by the tests of tests/k8s that start a Kubernetes cluster of their own (sourced after
# SRC is set, not a command): apiserver_restart_test.sh, node_removal_test.sh, gang_test.sh.
#
# own_cluster_begin PREFIX
#   Skips the test (exit 77) without jq; makes BASE=/tmp/PREFIX.XXXX (exported: the cluster
#   scripts use it) with BASE/check, and on exit stops SCHED_PID and WATCH_PID (set them to
#   the scheduler's and a kubectl watch's pids), copies BASE/check and BASE/log into
#   DS_TEST_OUT when it is set, and stops the cluster by its pids (stop-cluster.sh --purge).
# own_cluster_start: the cluster of these tests (2 KWOK nodes x 4 nvidia.com/gpu, no
#   kube-scheduler, pods deleted gracefully and ended by KWOK), its env.sh sourced.
# fail MESSAGE: prints FAIL: MESSAGE and exits 1.
# watch_pods: the API's record of every pod from now on, appended to BASE/check/pods.watch (a
#   kubectl watch in the background; WATCH_PID).
# tenant_namespaces NS...: creates them and waits for their default ServiceAccounts.
# wait_for SECONDS COMMAND...: true once COMMAND succeeds (tried every 0.5 s).
# one_pod_job NS NAME GPUS RUN_FOR
#   A Job of one pod for DeepShare (schedulerName deepshare, run for RUN_FOR, e.g. 5s, by KWOK);
#   a pod that ends as a disruption (an eviction, the pod garbage collector) does not count
#   against its backoff limit, so the Job makes a replacement.
fail() {
  echo "FAIL: $*"
  exit 1
}
own_cluster_cleanup() {
  [ -n "${SCHED_PID:-}" ] && kill "$SCHED_PID" 2>/dev/null
  [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null
  if [ -n "${DS_TEST_OUT:-}" ]; then
    mkdir -p "$DS_TEST_OUT" && cp -r "$BASE/check" "$BASE/log" "$DS_TEST_OUT/" 2>/dev/null
  fi
  "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
}
own_cluster_begin() {
  command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/setup-k8s.sh)"; exit 77; }
  export BASE
  BASE=$(mktemp -d "/tmp/$1.XXXX")
  SCHED_PID= WATCH_PID=
  trap own_cluster_cleanup EXIT
  mkdir -p "$BASE/check"
}
own_cluster_start() {
  NODES=2 GPUS=4 POD_DELETE=graceful POD_TERMINATE=1 "$SRC/scripts/k8s/start-cluster.sh" || fail "cluster"
  source "$BASE/env.sh"
}
watch_pods() {
  kubectl get pods -A --watch --output-watch-events -o json >>"$BASE/check/pods.watch" 2>>"$BASE/check/watch.err" &
  WATCH_PID=$!
}
tenant_namespaces() {
  local ns
  for ns in "$@"; do kubectl create namespace "$ns" >/dev/null || fail "namespace $ns"; done
  for ns in "$@"; do
    for _ in $(seq 1 100); do kubectl get sa default -n "$ns" >/dev/null 2>&1 && break; sleep 0.2; done
  done
}
wait_for() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}
one_pod_job() {
  cat <<JOB
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$2", "namespace": "$1"},
 "spec": {"backoffLimit": 100,
  "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
  "template": {"metadata": {"annotations": {"deepshare.io/run-for": "$4"}},
   "spec": {"schedulerName": "deepshare", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "train", "image": "registry.invalid/deepshare/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}}}
JOB
}
