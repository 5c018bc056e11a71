#!/usr/bin/env bash
# Stops, starts or restarts one component of the cluster in BASE (start-cluster.sh wrote its
# command line to BASE/run/NAME.sh), or shows every component's pid and memory. For tests
# such as "API server restart mid-watch".
# Usage: BASE=$BASE scripts/k8s/component.sh stop|start|restart NAME [--wait]
#        BASE=$BASE scripts/k8s/component.sh kill NAME      (SIGKILL, no grace)
#        BASE=$BASE scripts/k8s/component.sh status
# NAME: etcd kube-apiserver kube-controller-manager kube-scheduler kwok
# --wait (start/restart of kube-apiserver): return once /readyz answers.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE}"
source "$HERE/lib.sh"
action=${1:?usage: component.sh stop|start|restart|kill NAME | status}
if [ "$action" = status ]; then
  for f in "$BASE"/run/*.sh; do
    n=$(basename "$f" .sh); p=$(pid_of "$n" || true)
    if alive "$p"; then
      echo "$n pid=$p rss_mib=$(($(awk '/^VmRSS:/ {print $2}' "/proc/$p/status") / 1024))"
    else
      echo "$n stopped"
    fi
  done
  echo "total rss_mib=$(rss_total)"
  exit 0
fi
name=${2:?component name}
[ -x "$BASE/run/$name.sh" ] || { echo "component.sh: no component $name in $BASE/run" >&2; exit 1; }
wait_ready() {
  [ "${3:-}" = --wait ] && [ "$name" = kube-apiserver ] || return 0
  source "$BASE/env.sh"
  wait_http kube-apiserver "$DS_K8S_API/readyz" --cacert "$BASE/pki/ca.crt" \
    --cert "$BASE/pki/admin.crt" --key "$BASE/pki/admin.key"
}
case $action in
  stop) stop_component "$name" ;;
  kill) p=$(pid_of "$name") && alive "$p" && kill -KILL "$p"
        while alive "$p"; do sleep 0.1; done; rm -f "$BASE/run/$name.pid" ;;
  start) alive "$(pid_of "$name" || true)" || start_component "$name"; wait_ready "$@" ;;
  restart) stop_component "$name"; start_component "$name"; wait_ready "$@" ;;
  *) echo "component.sh: unknown action $action" >&2; exit 2 ;;
esac
