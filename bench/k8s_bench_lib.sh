# Shared by the Kubernetes benchmarks (bench/k8s_testbed.sh, bench/k8s_scale.sh; sourced, not
# a command; needs SRC): one cluster (BASE) and one scheduler (SCHED_PID) at a time, stopped by
# stop_all, also on exit.
export BASE=
SCHED_PID=
stop_all() {
  [ -n "$SCHED_PID" ] && kill "$SCHED_PID" 2>/dev/null && wait "$SCHED_PID" 2>/dev/null
  SCHED_PID=
  [ -n "$BASE" ] && "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
  BASE=
}
trap stop_all EXIT
