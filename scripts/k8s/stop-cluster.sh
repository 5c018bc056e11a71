#!/usr/bin/env bash
# Stops the cluster that start-cluster.sh started in BASE: ends only the processes whose pid
# files lie in BASE/run (KWOK, scheduler, controller-manager, API server, etcd, in that
# order: TERM, then KILL after ~15 s each).
# Usage: BASE=$BASE scripts/k8s/stop-cluster.sh [--purge]   (--purge removes BASE)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE}"
source "$HERE/lib.sh"
for c in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop_component "$c"
done
[ "${1:-}" = "--purge" ] && rm -rf "$BASE"
echo "stopped kubernetes cluster in $BASE"
