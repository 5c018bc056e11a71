#!/usr/bin/env bash
# Starts the real Kueue (the full manager, sigs.k8s.io/kueue/cmd/kueue, built from its Go
# module by build-tools.sh) against the cluster that start-cluster.sh runs in BASE, outside
# the cluster as one more component (docs/kubernetes.md §6).
#
# What it does:
#  - applies Kueue's CRDs read from the module cache at run time
#    ($KUEUE_DIR/config/components/crd/bases; never copied), server-side, and waits until
#    they are Established; the namespace kueue-system (Kueue's own);
#  - gives Kueue a client certificate (CN=system:kueue) and the RBAC of its own manifests
#    ($KUEUE_DIR/config/components/rbac/: role.yaml, manager_secrets_role.yaml,
#    metrics_auth_role.yaml, named as its kustomization names them), so it acts with the
#    rights a real install grants, no more;
#  - writes BASE/kueue/config.yaml: the workers per controller of Kueue's own manifests, every
#    listener on 127.0.0.1 (webhook API_PORT+6, metrics
#    +7, health +8), leaderElection off, internalCertManagement off (it would patch webhook
#    configurations and a Secret for a Service that does not exist), integrations
#    batch/job only (KUEUE_FRAMEWORKS), and starts it with
#    --feature-gates=VisibilityOnDemand=false (an extra aggregated API server). No webhook
#    configuration is registered: no `service:` reference may exist (the API server would
#    dial a cluster IP), so Jobs are created the way Kueue's defaulting webhook would leave
#    them: `suspend: true` plus the label
#    kueue.x-k8s.io/queue-name (Kueue suspends an unsuspended unadmitted Job anyway); with
#    KUEUE_FRAMEWORKS="batch/job pod", plain pods are created as Kueue's pod webhook would
#    leave them (bench/k8s_scale.py --kueue-queue: the label kueue.x-k8s.io/managed, its
#    finalizer and the scheduling gate kueue.x-k8s.io/admission besides the queue label);
#  - serving certificates signed by the cluster's CA: the webhook server's in
#    BASE/kueue/webhook-certs; the metrics server's must be at the path Kueue hard-codes,
#    /etc/kueue/metrics/certs/tls.{crt,key}: as root, Kueue runs in a mount namespace of its
#    own where an overlay on /etc adds that folder (the machine's /etc is never written);
#    otherwise the files must exist there already.
# Stop it by pid: BASE=$BASE scripts/k8s/component.sh stop kueue (stop-cluster.sh stops it
# too). Logs: BASE/log/kueue.log.
#
# Usage: BASE=$BASE scripts/k8s/start-kueue.sh     (after start-cluster.sh)
# Env: KUEUE_QPS (50) and KUEUE_BURST (100): Kueue's client rate limit (its defaults);
#      KUEUE_FRAMEWORKS ("batch/job"): the integrations, space-separated;
#      READY_TIMEOUT (120 s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE to the folder of a cluster started by start-cluster.sh}"
BASE=$(cd "$BASE" && pwd)
source "$HERE/lib.sh"
[ -f "$BASE/env.sh" ] || { echo "start-kueue.sh: no cluster in $BASE (run start-cluster.sh)" >&2; exit 1; }
source "$BASE/env.sh"
alive "$(pid_of kueue || true)" && { echo "start-kueue.sh: Kueue already runs in $BASE" >&2; exit 1; }
TOOLS=$("$HERE/build-tools.sh")
source "$TOOLS/tools.env"
K8SBIN=$TOOLS/bin
[ -x "$K8SBIN/kueue" ] && [ -n "${KUEUE_DIR:-}" ] ||
  { echo "start-kueue.sh: no kueue in $TOOLS (scripts/k8s/modules/kueue)" >&2; exit 1; }
API_PORT=${DS_K8S_API##*:}
WEBHOOK_PORT=$((API_PORT + 6)) METRICS_PORT=$((API_PORT + 7)) HEALTH_PORT=$((API_PORT + 8))
for p in $WEBHOOK_PORT $METRICS_PORT $HEALTH_PORT; do
  port_free "$p" || { echo "start-kueue.sh: TCP port $p is in use" >&2; exit 1; }
done
kc() { "$K8SBIN/kubectl" "$@"; }
K=$BASE/kueue
mkdir -p "$K/webhook-certs" "$K/etc-upper/kueue/metrics/certs" "$K/etc-work"

# --- CRDs and RBAC, from the module cache
crds=$KUEUE_DIR/config/components/crd/bases
kc apply --server-side --force-conflicts -f "$crds" >/dev/null
kc wait --for condition=established --timeout="${READY_TIMEOUT:-120}s" -f "$crds" >/dev/null
kc create namespace kueue-system --dry-run=client -o yaml | kc apply -f - >/dev/null
sed 's/^  name: manager-role$/  name: kueue-manager-role/' \
  "$KUEUE_DIR/config/components/rbac/role.yaml" | kc apply -f - >/dev/null
kc create clusterrolebinding kueue-manager-rolebinding --clusterrole=kueue-manager-role \
  --user=system:kueue --dry-run=client -o yaml | kc apply -f - >/dev/null
# Its namespaced Role on Secrets (kueue-system; without it the manager's cache never syncs and
# no controller starts) and the metrics server's authn/authz ClusterRole, named as Kueue's
# kustomization names them (namePrefix kueue-, namespace kueue-system).
sed -e 's/^  name: manager-secrets-role$/  name: kueue-manager-secrets-role/' \
  -e 's/^  namespace: system$/  namespace: kueue-system/' \
  "$KUEUE_DIR/config/components/rbac/manager_secrets_role.yaml" | kc apply -f - >/dev/null
kc -n kueue-system create rolebinding kueue-manager-secrets-rolebinding \
  --role=kueue-manager-secrets-role --user=system:kueue --dry-run=client -o yaml |
  kc apply -f - >/dev/null
sed 's/^  name: metrics-auth-role$/  name: kueue-metrics-auth-role/' \
  "$KUEUE_DIR/config/components/rbac/metrics_auth_role.yaml" | kc apply -f - >/dev/null
kc create clusterrolebinding kueue-metrics-auth-rolebinding --clusterrole=kueue-metrics-auth-role \
  --user=system:kueue --dry-run=client -o yaml | kc apply -f - >/dev/null
client_kubeconfig kueue "/CN=system:kueue" "$BASE/run/kueue.kubeconfig"

# --- serving certificates (webhook server; metrics server at Kueue's fixed path)
[ -f "$K/webhook-certs/tls.crt" ] ||
  sign_cert "$K/webhook-certs" tls "/CN=kueue-webhook" "subjectAltName=IP:127.0.0.1,DNS:localhost"
[ -f "$K/etc-upper/kueue/metrics/certs/tls.crt" ] ||
  sign_cert "$K/etc-upper/kueue/metrics/certs" tls "/CN=kueue-metrics" \
    "subjectAltName=IP:127.0.0.1,DNS:localhost"

# The workers per controller as Kueue's own manifests configure them
# (config/components/manager/controller_manager_config.yaml: Job and Pod 5, Workload 5, the
# queues 1), read from the module cache; without them every controller gets one worker
# (controller-runtime's default), and Kueue admitted ~10 plain pods a second here.
controller_concurrency() {
  sed -n '/^controller:/,/^[a-z]/{/^  /p}' "$KUEUE_DIR/config/components/manager/controller_manager_config.yaml"
}
[ -n "$(controller_concurrency)" ] ||
  { echo "start-kueue.sh: no controller settings in Kueue's controller_manager_config.yaml" >&2; exit 1; }

cat >"$K/config.yaml" <<EOF
# Kueue's Configuration for DeepShare's test cluster (written by scripts/k8s/start-kueue.sh)
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$METRICS_PORT
webhook:
  host: 127.0.0.1
  port: $WEBHOOK_PORT
  certDir: $K/webhook-certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
controller:
$(controller_concurrency)
clientConnection:
  qps: ${KUEUE_QPS:-50}
  burst: ${KUEUE_BURST:-100}
integrations:
  frameworks:
$(for f in ${KUEUE_FRAMEWORKS:-batch/job}; do echo "  - $f"; done)
EOF

args=("$K8SBIN/kueue" "--config=$K/config.yaml" "--kubeconfig=$BASE/run/kueue.kubeconfig"
  "--feature-gates=VisibilityOnDemand=false")
if [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  # $0 of the inner shell is the kueue binary; the overlay exists only in Kueue's namespace
  component kueue unshare --mount --propagation private sh -c \
    "mount -t overlay overlay -o lowerdir=/etc,upperdir=$K/etc-upper,workdir=$K/etc-work /etc && exec \"\$0\" \"\$@\"" \
    "${args[@]}"
elif [ -f /etc/kueue/metrics/certs/tls.crt ] && [ -f /etc/kueue/metrics/certs/tls.key ]; then
  component kueue "${args[@]}"
else
  echo "start-kueue.sh: Kueue reads its metrics certificate from /etc/kueue/metrics/certs (fixed);" \
    "run as root (a private overlay provides it) or install tls.crt/tls.key there" >&2
  exit 1
fi
start_component kueue
wait_http kueue "http://127.0.0.1:$HEALTH_PORT/readyz"
{
  echo "export DS_KUEUE_METRICS=https://127.0.0.1:$METRICS_PORT"
  echo "export DS_KUEUE_HEALTH=http://127.0.0.1:$HEALTH_PORT"
  echo "export DS_KUEUE_VERSION=$KUEUE_VERSION"
} >"$BASE/kueue/env.sh"
echo "kueue $KUEUE_VERSION up (pid $(pid_of kueue), health :$HEALTH_PORT, log $BASE/log/kueue.log)"
