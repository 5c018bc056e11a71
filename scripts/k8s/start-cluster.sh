#!/usr/bin/env bash
# Starts a real Kubernetes control plane with fake GPU nodes on ONE machine, for DeepShare's
# Kubernetes tests and local trials (docs/kubernetes.md).
#
# What runs (all built by scripts/k8s/build-tools.sh from published Go modules; all real):
#  - etcd (--unsafe-no-fsync: test data only), kube-apiserver (RBAC; default admission
#    plugins, so ServiceAccount, ValidatingAdmissionPolicy and PodSecurity are on),
#    kube-controller-manager (only KCM_CONTROLLERS; one service account per controller, as
#    kubeadm does), kube-scheduler when SCHEDULER=1 (for pods NOT asking for DeepShare),
#  - KWOK, which plays the kubelets of NODES nodes with GPUS `nvidia.com/gpu` each: the
#    Nodes are created here (annotation kwok.x-k8s.io/node=fake); KWOK's own Stages are read
#    from its Go module at run time (never copied) plus scripts/k8s/stages/*.yaml of ours: a
#    pod annotated deepshare.io/run-for=DURATION ("90s", "1500ms") succeeds that long after
#    it started running. KWOK fakes only the kubelet: no containers run, no logs, no exec.
# Every component listens on 127.0.0.1 only; nothing is registered by `service:` reference.
# Everything (PKI, kubeconfigs, etcd data, logs, pid files) lives under BASE.
#
# Ports: API_PORT and the next 5 (etcd client, etcd peer, controller-manager, scheduler,
# KWOK; start-kueue.sh takes the 3 after them); without API_PORT a free block of 9 between
# 20000 and the ephemeral range is picked.
#
# Usage:  BASE=$(mktemp -d /tmp/dsk.XXXX) NODES=4 GPUS=8 scripts/k8s/start-cluster.sh
# Then:   source $BASE/env.sh      (KUBECONFIG = cluster admin; DS_K8S_* for tests)
# Users:  BASE=$BASE scripts/k8s/add-user.sh NAME [GROUP...]   (client certificate, no rights)
# Stop:   BASE=$BASE scripts/k8s/stop-cluster.sh [--purge]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE to an empty folder, e.g. BASE=\$(mktemp -d /tmp/dsk.XXXX)}"
BASE=$(cd "$BASE" && pwd)
NODES=${NODES:-4}
GPUS=${GPUS:-8}
NODE_CPU=${NODE_CPU:-64}
NODE_MEMORY=${NODE_MEMORY:-512Gi}
NODE_PREFIX=${NODE_PREFIX:-gpu-node-}
SCHEDULER=${SCHEDULER:-0}
# kube-scheduler's placement of nvidia.com/gpu: "spread" (its defaults: GPUs are not scored,
# cpu/memory LeastAllocated) or "gpu" (NodeResourcesFit MostAllocated on nvidia.com/gpu:
# the bin-packing a GPU site configures); SCHEDULER_BACKOFF_S: its pod backoff (initial =
# max, whole seconds; default 1 and 10); SCHEDULER_QPS: its client's queries per second
# (burst twice that; default 50 and 100)
SCHEDULER_PACKING=${SCHEDULER_PACKING:-spread}
SCHEDULER_BACKOFF_S=${SCHEDULER_BACKOFF_S:-}
SCHEDULER_QPS=${SCHEDULER_QPS:-}
# KCM_QPS: the controller-manager's client queries per second (burst twice that; default 20
# and 30): its node-lifecycle controller lifts the not-ready taint of each new node; a start
# with 1,000 nodes took 50 s at 100 against 6 min at the default (bench/k8s_scale.sh)
KCM_QPS=${KCM_QPS:-}
KCM_CONTROLLERS=${KCM_CONTROLLERS:-job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,node-lifecycle-controller,taint-eviction-controller,pod-garbage-collector-controller,ttl-after-finished-controller,resourceclaim-controller,validatingadmissionpolicy-status-controller}
# kubelet-like pod deletion: "graceful" waits (up to) the pod's grace period, "fast" at once
POD_DELETE=${POD_DELETE:-graceful}
# POD_TERMINATE=1: a running pod being deleted turns Failed at the end of its grace period, as
# a kubelet makes it (stages-kubelet/pod-terminate.yaml; best with POD_DELETE=graceful): a
# Job's evicted pod is then replaced instead of staying Terminating
POD_TERMINATE=${POD_TERMINATE:-0}
READY_TIMEOUT=${READY_TIMEOUT:-120}
source "$HERE/lib.sh"

for f in "$BASE"/run/*.pid; do
  [ -f "$f" ] && alive "$(cat "$f")" && { echo "start-cluster.sh: a cluster already runs in $BASE" >&2; exit 1; }
done
for b in openssl curl ss flock; do
  command -v $b >/dev/null || { echo "start-cluster.sh: missing $b (run scripts/setup.sh)" >&2; exit 1; }
done
TOOLS=${DS_K8S_TOOLS:-$("$HERE/build-tools.sh")}
source "$TOOLS/tools.env"
K8SBIN=$TOOLS/bin
case $SCHEDULER_PACKING in
  spread | gpu) ;;
  *) echo "start-cluster.sh: SCHEDULER_PACKING must be spread|gpu" >&2; exit 1 ;;
esac
case $SCHEDULER_BACKOFF_S in
  '' | [1-9] | [1-9][0-9]) ;;
  *) echo "start-cluster.sh: SCHEDULER_BACKOFF_S must be whole seconds, 1-99" >&2; exit 1 ;;
esac
for q in "$SCHEDULER_QPS" "$KCM_QPS"; do
  case $q in
    '' | [1-9] | [1-9][0-9] | [1-9][0-9][0-9] | [1-9][0-9][0-9][0-9]) ;;
    *) echo "start-cluster.sh: SCHEDULER_QPS and KCM_QPS must be whole numbers, 1-9999" >&2; exit 1 ;;
  esac
done
kcm_qps=()
[ -n "$KCM_QPS" ] && kcm_qps=(--kube-api-qps="$KCM_QPS" --kube-api-burst=$((KCM_QPS * 2)))
case $POD_DELETE in
  graceful) delete_stage=general/pod-delete.yaml ;;
  fast) delete_stage=fast/pod-delete.yaml ;;
  *) echo "start-cluster.sh: POD_DELETE must be graceful|fast" >&2; exit 1 ;;
esac

if [ -z "${API_PORT:-}" ]; then
  eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  blocks=$(((eph - 20000 - 10) / 10))
  for _ in $(seq 1 50); do
    c=$((20000 + (RANDOM % blocks) * 10))
    ok=1; for p in $(seq "$c" $((c + 8))); do port_free "$p" || ok=0; done
    [ $ok = 1 ] && { API_PORT=$c; break; }
  done
  : "${API_PORT:?no free port block found}"
fi
ETCD_PORT=$((API_PORT + 1)) PEER_PORT=$((API_PORT + 2)) KCM_PORT=$((API_PORT + 3))
SCHED_PORT=$((API_PORT + 4)) KWOK_PORT=$((API_PORT + 5))
for p in $(seq "$API_PORT" "$KWOK_PORT"); do
  port_free "$p" || { echo "start-cluster.sh: TCP port $p is in use" >&2; exit 1; }
done

on_fail() {
  set +e; trap - ERR
  echo "start-cluster.sh failed; last log lines:" >&2
  for l in "$BASE"/log/*.log; do [ -f "$l" ] && { echo "== $l" >&2; tail -n 8 "$l" >&2; }; done
  [ "${KEEP_ON_FAIL:-0}" = 1 ] || BASE="$BASE" "$HERE/stop-cluster.sh" >&2
  exit 1
}
trap on_fail ERR
mkdir -p "$BASE"/{pki,log,run,etcd,users}
chmod 700 "$BASE/pki" "$BASE/etcd"
API=https://127.0.0.1:$API_PORT

# --- PKI: one CA signs the serving cert and every client cert; SA tokens get their own key
pki=$BASE/pki
if [ ! -f "$pki/ca.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 30 \
    -subj "/CN=deepshare-test-ca" -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  sign_cert "$pki" apiserver "/CN=kube-apiserver" \
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1"
  # the controller-manager's and scheduler's own HTTPS endpoints (healthz, metrics)
  sign_cert "$pki" serving "/CN=deepshare-test-components" "subjectAltName=IP:127.0.0.1,DNS:localhost"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
fi
client_kubeconfig admin "/O=system:masters/CN=deepshare-admin" "$BASE/admin.kubeconfig"
client_kubeconfig controller-manager "/CN=system:kube-controller-manager" "$BASE/run/kcm.kubeconfig"
client_kubeconfig scheduler "/CN=system:kube-scheduler" "$BASE/run/scheduler.kubeconfig"
# KWOK plays every kubelet, so it gets the rights of all of them at once
client_kubeconfig kwok "/O=system:masters/CN=kwok" "$BASE/run/kwok.kubeconfig"

# --- components: each a script under run/ so that tests can restart one (component.sh).
# --authentication-skip-lookup: nobody authenticates to the kcm/scheduler endpoints with a
# front-proxy certificate, so they need not read the API server's requestheader CA (which
# this cluster does not configure; the lookup would only log errors).
component etcd "$K8SBIN/etcd" --name=deepshare --data-dir="$BASE/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$PEER_PORT" \
  --initial-cluster="deepshare=http://127.0.0.1:$PEER_PORT" --unsafe-no-fsync --log-level=warn
component kube-apiserver "$K8SBIN/kube-apiserver" --bind-address=127.0.0.1 --secure-port="$API_PORT" \
  --advertise-address=127.0.0.1 --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" --authorization-mode=RBAC --anonymous-auth=false \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$pki/sa.pub" \
  --service-account-signing-key-file="$pki/sa.key" --service-cluster-ip-range=10.0.0.0/24 \
  --endpoint-reconciler-type=none --profiling=false
component kube-controller-manager "$K8SBIN/kube-controller-manager" --bind-address=127.0.0.1 \
  --secure-port="$KCM_PORT" --kubeconfig="$BASE/run/kcm.kubeconfig" \
  --authentication-kubeconfig="$BASE/run/kcm.kubeconfig" --authorization-kubeconfig="$BASE/run/kcm.kubeconfig" \
  --authentication-skip-lookup \
  --controllers="$KCM_CONTROLLERS" --use-service-account-credentials=true --leader-elect=false \
  --root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" --profiling=false \
  --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key" "${kcm_qps[@]}"
# kube-scheduler's command line is written even with SCHEDULER=0, so that a test can start
# it later (component.sh start kube-scheduler). Its KubeSchedulerConfiguration, when one of
# SCHEDULER_PACKING/SCHEDULER_BACKOFF_S/SCHEDULER_QPS asks for more than the defaults, is our own file.
sched_config=()
if [ "$SCHEDULER_PACKING" != spread ] || [ -n "$SCHEDULER_BACKOFF_S" ] || [ -n "$SCHEDULER_QPS" ]; then
  write_scheduler_config "$BASE/run/kube-scheduler.yaml"
  sched_config=(--config="$BASE/run/kube-scheduler.yaml")
fi
component kube-scheduler "$K8SBIN/kube-scheduler" --bind-address=127.0.0.1 \
  --secure-port="$SCHED_PORT" --kubeconfig="$BASE/run/scheduler.kubeconfig" \
  --authentication-kubeconfig="$BASE/run/scheduler.kubeconfig" \
  --authorization-kubeconfig="$BASE/run/scheduler.kubeconfig" --authentication-skip-lookup \
  --leader-elect=false --profiling=false "${sched_config[@]}" \
  --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key"
stages=$KWOK_DIR/kustomize/stage
kwok_configs=()
for s in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/fast/pod-ready.yaml "pod/$delete_stage"; do
  [ -f "$stages/$s" ] || { echo "start-cluster.sh: KWOK Stage $stages/$s not found" >&2; false; }
  kwok_configs+=("--config=$stages/$s")
done
for s in "$HERE"/stages/*.yaml; do kwok_configs+=("--config=$s"); done
[ "$POD_TERMINATE" = 1 ] && kwok_configs+=("--config=$HERE/stages-kubelet/pod-terminate.yaml")
component kwok "$K8SBIN/kwok" --kubeconfig="$BASE/run/kwok.kubeconfig" --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --server-address="127.0.0.1:$KWOK_PORT" --node-ip=127.0.0.1 "${kwok_configs[@]}"

{
  echo "export KUBECONFIG=$BASE/admin.kubeconfig"
  echo "export DS_K8S_BASE=$BASE"
  echo "export DS_K8S_API=$API"
  echo "export DS_K8S_ETCD=http://127.0.0.1:$ETCD_PORT"
  echo "export DS_K8S_KWOK=http://127.0.0.1:$KWOK_PORT"
  echo "export DS_K8S_TOOLS=$TOOLS"
  echo "export DS_K8S_NODES=$NODES"
  echo "export DS_K8S_GPUS=$GPUS"
  echo "export DS_K8S_NODE_PREFIX=$NODE_PREFIX"
  echo "export PATH=$K8SBIN:\$PATH"
} >"$BASE/env.sh"
export KUBECONFIG=$BASE/admin.kubeconfig

start_component etcd
wait_http "etcd" "http://127.0.0.1:$ETCD_PORT/health"
start_component kube-apiserver
wait_http "kube-apiserver" "$API/readyz" --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key"
start_component kube-controller-manager
wait_http "kube-controller-manager" "https://127.0.0.1:$KCM_PORT/healthz" --cacert "$pki/ca.crt"
if [ "$SCHEDULER" = 1 ]; then
  start_component kube-scheduler
  wait_http "kube-scheduler" "https://127.0.0.1:$SCHED_PORT/healthz" --cacert "$pki/ca.crt"
fi
start_component kwok
wait_http "kwok" "http://127.0.0.1:$KWOK_PORT/healthz"

# --- fake GPU nodes: registered as a kubelet would (status included); KWOK keeps them Ready
for i in $(seq 1 "$NODES"); do
  node_json "$NODE_PREFIX$i"
done | "$K8SBIN/kubectl" apply -f - >/dev/null
deadline=$(($(date +%s) + READY_TIMEOUT))
# Ready (KWOK) and untainted (node-lifecycle-controller lifts the not-ready taint), and the
# `default` ServiceAccount exists (serviceaccount-controller; pods are refused without it)
until [ "$(nodes_schedulable)" = "$NODES" ] && "$K8SBIN/kubectl" -n default get serviceaccount default >/dev/null 2>&1; do
  [ "$(date +%s)" -lt "$deadline" ] || { echo "start-cluster.sh: nodes not ready after ${READY_TIMEOUT}s" >&2; false; }
  sleep 0.2
done
trap - ERR
echo "kubernetes up: $NODES nodes x $GPUS nvidia.com/gpu (KWOK), API $API, etcd :$ETCD_PORT, in $BASE ($(rss_total) MiB RSS)"
