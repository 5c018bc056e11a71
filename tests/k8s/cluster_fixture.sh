#!/usr/bin/env bash
# The CTest fixture k8s_cluster (tests/k8s/CMakeLists.txt): one real control plane for the
# tests of label k8s, in BASE (a folder of the build tree).
#   cluster_fixture.sh start BASE   stops what an aborted run left in BASE, builds the tools
#                                   if needed (scripts/k8s/build-tools.sh), starts the cluster
#   cluster_fixture.sh stop BASE    stops it; the logs are copied to DS_TEST_LOG_DIR if set
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
action=${1:?start|stop}
export BASE=${2:?BASE}
case $action in
  start)
    [ -d "$BASE" ] && "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null
    mkdir -p "$BASE"
    NODES=${DS_K8S_TEST_NODES:-4} GPUS=${DS_K8S_TEST_GPUS:-8} "$SRC/scripts/k8s/start-cluster.sh"
    BASE=$BASE "$SRC/scripts/k8s/component.sh" status
    ;;
  stop)
    [ -d "$BASE" ] || exit 0
    BASE=$BASE "$SRC/scripts/k8s/component.sh" status || true
    if [ -n "${DS_TEST_LOG_DIR:-}" ]; then
      mkdir -p "$DS_TEST_LOG_DIR/k8s-fixture" && cp "$BASE"/log/*.log "$DS_TEST_LOG_DIR/k8s-fixture/" || true
    fi
    "$SRC/scripts/k8s/stop-cluster.sh" --purge
    ;;
  *) echo "cluster_fixture.sh: start|stop" >&2; exit 2 ;;
esac
