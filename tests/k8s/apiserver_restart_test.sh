#!/usr/bin/env bash
# Restart safety (issue #23): the API server is stopped and started again while `deepshare
# k8s run` schedules, with pods in flight (docs/kubernetes.md §8, "Tests"). A cluster of its
# own: 2 KWOK nodes x 4 nvidia.com/gpu, no kube-scheduler, POD_DELETE=graceful
# POD_TERMINATE=1. DeepShare runs with leader election (a Lease of 60 s: it stops acting
# only after 40 s without a renewal, longer than the outage) and the tenants a=4, b=4.
#  1. 16 one-pod Jobs (1-2 GPUs, 4-8 s each; 24 GPUs of work for 8 GPUs) are created in a and
#     b over about 8 s, so that pods wait, run and end throughout;
#  2. 4 s after the first, kube-apiserver is stopped (SIGTERM, by its pid), kept down
#     DOWN_S (6) seconds, then started again (scripts/k8s/component.sh) — etcd keeps the
#     objects, the scheduler's watches break and every call fails meanwhile;
#  3. the Jobs not yet created are created once it answers again.
# Checks: the scheduler never exited and still leads (its metrics: deepshare_leader 1; no
# lease_lost in its log), it saw its watches fail and went on (watch_failed, then bindings
# after the restart), every Job completed, and in the API's own record of every pod (a
# kubectl watch before the outage, a new one after it: the changes in order) no node ever
# had more nvidia.com/gpu bound to pods that have not ended than its allocatable, and every
# pod DeepShare bound carries its decision. About a minute once the tools are built.
# Skips (77) without jq. Env: DOWN_S (6); DS_TEST_OUT=DIR keeps the logs in DIR.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
source "$SRC/tests/k8s/own_cluster_lib.sh"
source "$SRC/tests/k8s/gpu_watch_lib.sh"
own_cluster_begin dskapi
own_cluster_start
watch_pods
kubectl create namespace deepshare-system >/dev/null || fail "namespace deepshare-system"
tenant_namespaces a b
"$BIN/deepshare" k8s run --tenants a=4,b=4 --lease-duration 60 --metrics 127.0.0.1:0 \
  >"$BASE/check/scheduler.log" 2>&1 &
SCHED_PID=$!
for _ in $(seq 1 150); do grep -q '"event":"leader"' "$BASE/check/scheduler.log" && break; sleep 0.2; done
grep -q '"event":"leader"' "$BASE/check/scheduler.log" || fail "the scheduler did not lead: $(tail -3 "$BASE/check/scheduler.log")"

echo "== 1. 16 Jobs over ~8 s; the API server goes down ${DOWN_S:-6} s, 4 s after the first"
t0=$(date +%s)
i=0 down=0
while [ $i -lt 16 ]; do
  if [ $down = 0 ] && [ $(($(date +%s) - t0)) -ge 4 ]; then
    echo "== 2. kube-apiserver stopped at $(($(date +%s) - t0)) s ($(grep -c '"event":"start"' "$BASE/check/scheduler.log") starts so far)"
    "$SRC/scripts/k8s/component.sh" stop kube-apiserver || fail "stop kube-apiserver"
    kill "$WATCH_PID" 2>/dev/null
    sleep "${DOWN_S:-6}"
    kill -0 "$SCHED_PID" 2>/dev/null || fail "the scheduler exited while the API server was down: $(tail -3 "$BASE/check/scheduler.log")"
    "$SRC/scripts/k8s/component.sh" start kube-apiserver --wait || fail "start kube-apiserver"
    restarted_line=$(wc -l <"$BASE/check/scheduler.log")
    echo "== 3. kube-apiserver answers again at $(($(date +%s) - t0)) s"
    watch_pods
    down=1
  fi
  ns=a; [ $((i % 2)) = 1 ] && ns=b
  one_pod_job "$ns" "j-$i" $((1 + i % 2)) "$((4 + i % 5))s" | kubectl create -f - >/dev/null || fail "Job j-$i"
  i=$((i + 1))
  sleep 0.5
done
[ $down = 1 ] || fail "the Jobs were all created before the outage (the machine is too slow?)"
for ns in a b; do
  kubectl wait --for=condition=Complete -n "$ns" job --all --timeout=120s >/dev/null ||
    fail "Jobs of $ns did not complete after the restart: $(kubectl get pods -A -o wide | tail -5)"
done
kill -0 "$SCHED_PID" 2>/dev/null || fail "the scheduler exited: $(tail -3 "$BASE/check/scheduler.log")"
metrics() {
  curl -fsS "http://127.0.0.1:$(grep -o '"event":"metrics_listening".*"port":[0-9]*' "$BASE/check/scheduler.log" | grep -o '[0-9]*$')/metrics"
}
metrics | grep -qx 'deepshare_leader 1' || fail "the scheduler's metrics do not say it leads"
grep -q '"event":"lease_lost"' "$BASE/check/scheduler.log" && fail "the outage cost the scheduler its Lease"
grep -q '"event":"watch_failed"' "$BASE/check/scheduler.log" || fail "the scheduler saw no watch fail (was the API server down?)"
after=$(tail -n +"$((restarted_line + 1))" "$BASE/check/scheduler.log" | grep -c '"event":"start"')
echo "scheduler: $(grep -c '"event":"watch_failed"' "$BASE/check/scheduler.log") watch failures logged, $after starts after the restart"
[ "$after" -gt 0 ] || fail "nothing started after the restart"
sleep 1  # the last changes reach the watch
kill "$SCHED_PID" && wait "$SCHED_PID"
rc=$? SCHED_PID=
[ "$rc" = 0 ] || fail "deepshare k8s run exited $rc on SIGTERM"
kill "$WATCH_PID"
WATCH_PID=
kubectl get nodes -o json >"$BASE/check/nodes.json" || fail "list nodes"
gpu_watch_check "$BASE/check/pods.watch" "$BASE/check/nodes.json" || fail "a node over its nvidia.com/gpu, or a pod bound without its decision"
echo "PASS: the API server restarted under a running scheduler; it kept the Lease, went on, every Job completed, no node over its GPUs"
