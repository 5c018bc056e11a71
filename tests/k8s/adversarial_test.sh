#!/usr/bin/env bash
# Adversarial: users who try to get around DeepShare on a REAL Kubernetes control plane, with
# the operator's manifests applied (deploy/k8s/: the scheduler's RBAC, the admission policy,
# the tenant Role; docs/kubernetes.md §10-§13). A cluster of its own: 2 KWOK nodes x 4
# nvidia.com/gpu, a third whose 4 GPUs a GPU driver publishes as DRA devices (a ResourceSlice
# of driver gpu.nvidia.com and its DeviceClass, written here as the driver would), and
# kube-scheduler (so that a pod slipping past DeepShare would really be placed, DRA claims
# allocated by it included). `deepshare k8s run` runs as its own ServiceAccount
# (deepshare-system/deepshare, a token from the TokenRequest API), not as an admin, with
# tenants team-a (8 GPUs) and team-b (4). The users are client certificates
# (scripts/k8s/add-user.sh), bound only to the example tenant Role: alice (team-a), bob
# (team-b), carol (team-c: a managed namespace with no DeepShare quota). Each case prints PASS or FAIL:
#  - allowed: GPU pods and Jobs that name DeepShare run; a pod without GPUs runs under any
#    scheduler; a GPU pod of an unmanaged namespace is kube-scheduler's (coexistence);
#  - refused by admission, with the policy's sentence shown to the user: a GPU pod with a
#    preset spec.nodeName or GPUs in an init container, with another schedulerName (also through
#    a Job: the Job's FailedCreate Event carries the sentence), forged decision annotations
#    on create (also in a Job's template) and on a bound pod (set, changed, removed);
#  - a user editing a bound pod: labels and their own annotations may change; nodeName, GPUs
#    and schedulerName may not (the API's own validation); status, resize: 403 (RBAC);
#  - 403 (RBAC): a Binding, an Eviction, a PodDisruptionBudget, unlabelling the namespace,
#    another team's pods;
#  - a GPU pod in a managed namespace with no quota: left unbound, told why (FailedScheduling
#    Event + PodScheduled=False), which its user can read;
#  - DRA: two pods whose claims (from alice's ResourceClaimTemplate) ask for 2 GPUs each run on
#    the DRA node, each claim allocated by DeepShare to the devices of its decision annotation,
#    reserved for its pod, no device twice; refused: a DRA pod naming another scheduler
#    (admission), alice writing a claim's status, updating a claim or publishing a
#    ResourceSlice (403); a claim she creates with an allocation is stored without it; left
#    unbound and told why: a claim for every device (allocationMode All), a pod naming a claim
#    reserved for another pod; the claims are deleted with their pods.
# Then, from the API's own records: a watch of every pod replayed in order never shows a node
# over its allocatable nvidia.com/gpu, nor a GPU pod of a managed namespace bound by anyone but
# DeepShare, nor a DeepShare pod without its decision (gpu_watch_lib.sh); nothing lost (every
# admitted Job complete, the pods that must run ran); the scheduler's RBAC was enough (no API
# call of its was refused) and no more (`kubectl auth can-i` as it), and it stops cleanly.
# About 30 s once the tools are built. Skips (77) without jq.
# Env: DS_TEST_OUT=DIR keeps the logs and the watch in DIR; POLICY=FILE applies another
# admission policy (the test is run once with a broken one, docs/kubernetes.md §12).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
DEPLOY=$SRC/deploy/k8s
POLICY=${POLICY:-$DEPLOY/admission-policy.yaml}
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/setup-k8s.sh)"; exit 77; }
source "$SRC/tests/k8s/gpu_watch_lib.sh"
source "$SRC/tests/k8s/dra_lib.sh"
die() { echo "FAIL: $*"; exit 1; }
export BASE
BASE=$(mktemp -d /tmp/dskadv.XXXX)
SCHED_PID= WATCH_PID=
cleanup() {
  [ -n "$SCHED_PID" ] && kill "$SCHED_PID" 2>/dev/null
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
  [ -n "${DS_TEST_OUT:-}" ] && mkdir -p "$DS_TEST_OUT" && cp -r "$BASE/check" "$DS_TEST_OUT/" 2>/dev/null
  "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
}
trap cleanup EXIT
mkdir -p "$BASE/check"
NODES=2 GPUS=4 SCHEDULER=1 POD_DELETE=fast "$SRC/scripts/k8s/start-cluster.sh" || die "cluster"
source "$BASE/env.sh"

FAILED=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILED=$((FAILED + 1)); }
as() { local u=$1; shift; kubectl --kubeconfig "$BASE/users/$u.kubeconfig" "$@"; }
# refused CASE TEXT USER KUBECTL-ARGS... (stdin passed on): the request must fail and the
# user must read TEXT in the answer; prints what the user read.
refused() {
  local case=$1 text=$2 out
  shift 2
  if out=$(as "$@" 2>&1); then
    fail "$case: accepted ($out)"
  elif [[ $out != *"$text"* ]]; then
    fail "$case: refused without '$text': $out"
  else
    pass "$case"
    # the API's sentence, without kubectl's object diff of an invalid update
    echo "      the user read: $(sed '/^@@/,$d' <<<"${out#Error from server (Forbidden): }")"
  fi
}
# A pod: NAME NS SCHEDULER GPUS [EXTRA-SPEC-JSON] [ANNOTATIONS-JSON]
pod() {
  local spec='{"schedulerName": "'$3'", "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "c", "image": "registry.invalid/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": "'$4'"}}}]}'
  [ "$4" = 0 ] && spec=$(jq -c 'del(.containers[0].resources)' <<<"$spec")
  jq -n --arg n "$1" --arg ns "$2" --argjson spec "$spec" --argjson extra "${5:-{\}}" \
    --argjson ann "${6:-{\}}" \
    '{apiVersion: "v1", kind: "Pod", metadata: {name: $n, namespace: $ns, annotations: $ann},
      spec: ($spec * $extra)}'
}
# A Job of COUNT pods: NAME NS SCHEDULER GPUS COUNT RUN_FOR [ANNOTATIONS-JSON]
job() {
  jq -n --arg n "$1" --arg ns "$2" --arg s "$3" --arg g "$4" --argjson c "$5" --arg r "$6" \
    --argjson ann "${7:-{\}}" \
    '{apiVersion: "batch/v1", kind: "Job", metadata: {name: $n, namespace: $ns},
      spec: {completions: $c, parallelism: $c, backoffLimit: 0,
        template: {metadata: {annotations: ({"deepshare.io/run-for": $r} + $ann)},
          spec: {schedulerName: $s, restartPolicy: "Never", terminationGracePeriodSeconds: 0,
            containers: [{name: "c", image: "registry.invalid/train:1",
                          resources: {limits: {"nvidia.com/gpu": $g}}}]}}}}'
}
wait_phase() { # NS POD PHASE
  for _ in $(seq 1 150); do
    [ "$(kubectl get pod "$2" -n "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$3" ] && return 0
    sleep 0.2
  done
  return 1
}

echo "== the operator installs DeepShare (deploy/k8s) and three teams"
kubectl apply -f "$DEPLOY/scheduler-rbac.yaml" -f "$POLICY" -f "$DEPLOY/tenant-role.yaml" >/dev/null ||
  die "applying deploy/k8s"
for t in team-a team-b team-c; do
  sed "s/team-a/$t/g" "$DEPLOY/example-tenant.yaml" | kubectl apply -f - >/dev/null || die "tenant $t"
done
# GPUs as DRA devices (docs/kubernetes.md §8): a node without nvidia.com/gpu whose 4 GPUs a GPU
# driver publishes in a ResourceSlice (written here as the driver would), and their DeviceClass.
dra_node dra-node-1 4 && gpu_device_class || die "the DRA node, its ResourceSlice, the DeviceClass"
kubectl create namespace legacy >/dev/null || die "namespace legacy" # unmanaged: kube-scheduler's
for ns in team-a team-b team-c legacy; do
  for _ in $(seq 1 100); do kubectl get sa default -n "$ns" >/dev/null 2>&1 && break; sleep 0.2; done
done
BASE=$BASE "$SRC/scripts/k8s/add-user.sh" alice team-a >/dev/null &&
  BASE=$BASE "$SRC/scripts/k8s/add-user.sh" bob team-b >/dev/null &&
  BASE=$BASE "$SRC/scripts/k8s/add-user.sh" carol team-c >/dev/null || die "users"
# The policy is enforced once the API server has compiled it (its status says so, and a
# probe pod that it must refuse is refused).
for _ in $(seq 1 100); do
  [ -n "$(kubectl get validatingadmissionpolicy deepshare-gpu-pods -o jsonpath='{.status.typeChecking}')" ] && break
  sleep 0.2
done
warn=$(kubectl get validatingadmissionpolicy deepshare-gpu-pods -o jsonpath='{.status.typeChecking.expressionWarnings}')
[ -z "$warn" ] || die "the admission policy does not type-check: $warn"
for _ in $(seq 1 50); do
  pod probe team-a default-scheduler 1 | kubectl create --dry-run=server -f - >/dev/null 2>&1 || break
  sleep 0.2
done

# The scheduler's identity: its ServiceAccount's token (the TokenRequest API), in a kubeconfig.
token=$(kubectl create token deepshare -n deepshare-system --duration=1h) || die "token"
cat >"$BASE/check/scheduler.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$DS_K8S_API", certificate-authority: "$BASE/pki/ca.crt"}}]
users: [{name: deepshare, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: deepshare}}]
current-context: c
EOF
[ "$(kubectl --kubeconfig "$BASE/check/scheduler.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}')" = \
  system:serviceaccount:deepshare-system:deepshare ] || die "the scheduler's kubeconfig is not its ServiceAccount"
# Least privilege: what the scheduler may not do (`kubectl auth can-i` as its ServiceAccount).
can=
for q in "create pods -n team-a" "delete pods -n team-a" "get secrets -n team-a" "patch nodes" \
  "create pods --subresource=binding -n team-a" \
  "create pods --subresource=eviction -n team-a" "update leases -n team-a" \
  "update leases -n deepshare-system"; do
  # shellcheck disable=SC2086 # the words of one question
  can="$can$(kubectl --kubeconfig "$BASE/check/scheduler.kubeconfig" auth can-i $q 2>/dev/null) "
done
[ "$can" = "no no no no yes yes no yes " ] &&
  pass "the scheduler's ServiceAccount may bind, evict and renew its Lease, not create or delete pods, read secrets or write nodes" ||
  fail "the scheduler's rights: $can (create/delete pods, get secrets, patch nodes, bind, evict, lease elsewhere, own lease)"
kubectl get pods -A --watch --output-watch-events -o json >"$BASE/check/pods.watch" 2>"$BASE/check/watch.err" &
WATCH_PID=$!
"$BIN/deepshare" k8s run --kubeconfig "$BASE/check/scheduler.kubeconfig" --tenants team-a=8,team-b=4 \
  >"$BASE/check/scheduler.log" 2>&1 &
SCHED_PID=$!
for _ in $(seq 1 300); do grep -q '"event":"scheduler_ready"' "$BASE/check/scheduler.log" && break; sleep 0.2; done
grep -q '"event":"scheduler_ready"' "$BASE/check/scheduler.log" ||
  die "deepshare k8s run did not start as its ServiceAccount: $(tail -3 "$BASE/check/scheduler.log")"

echo "== allowed: what a team may do"
pod a-good team-a deepshare 2 | as alice create -f - >/dev/null && wait_phase team-a a-good Running &&
  pass "alice's GPU pod naming DeepShare runs" || fail "alice's GPU pod did not run"
job b-job team-b deepshare 2 2 4s | as bob create -f - >/dev/null || fail "bob's Job was refused"
pod a-cpu team-a default-scheduler 0 '{"nodeName": "gpu-node-2"}' | as alice create -f - >/dev/null &&
  pod a-cpu2 team-a default-scheduler 0 | as alice create -f - >/dev/null &&
  wait_phase team-a a-cpu Running && wait_phase team-a a-cpu2 Running &&
  pass "a pod without GPUs runs under any scheduler, even with a preset nodeName" ||
  fail "a pod without GPUs was not run"
pod a-gang-0 team-a deepshare 1 '{}' '{"deepshare.io/gang-size": "2"}' |
  jq '.metadata.labels = {"deepshare.io/gang": "pair"}' | as alice create --dry-run=server -f - >/dev/null &&
  pass "a gang's size (annotation deepshare.io/gang-size) is the user's to write" ||
  fail "alice may not write deepshare.io/gang-size"
pod old legacy default-scheduler 1 | kubectl create -f - >/dev/null && wait_phase legacy old Running &&
  pass "a GPU pod of an unmanaged namespace is kube-scheduler's" || fail "legacy/old did not run"

echo "== refused by admission, with a sentence the user reads"
refused "preset nodeName with GPUs" "may not preset spec.nodeName" alice create -f - \
  < <(pod a-node team-a deepshare 4 '{"nodeName": "gpu-node-1"}')
refused "another schedulerName asking for GPUs" "must set spec.schedulerName: deepshare" \
  alice create -f - < <(pod a-other team-a default-scheduler 1)
refused "GPUs asked by an init container" "not in an init container" \
  alice create -f - < <(pod a-init team-a deepshare 1 '{"initContainers": [{"name": "i",
    "image": "registry.invalid/i:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}')
refused "a gang's pod without a valid size" "needs the annotation deepshare.io/gang-size" \
  alice create -f - < <(pod a-gang-bad team-a deepshare 1 '{}' '{"deepshare.io/gang-size": "0"}' |
    jq '.metadata.labels = {"deepshare.io/gang": "pair"}')
refused "forged decision annotations on create" "only the scheduler may set" alice create -f - \
  < <(pod a-forged team-a deepshare 1 '{}' '{"deepshare.io/gpus": "gpu-node-1:0",
    "deepshare.io/decision": "borrowed=0,shared=0,decided=0"}')
job a-sneak team-a default-scheduler 1 1 5s | as alice create -f - >/dev/null || fail "alice's Job a-sneak"
job a-forge team-a deepshare 1 1 5s '{"deepshare.io/gpus": "gpu-node-2:0"}' | as alice create -f - >/dev/null ||
  fail "alice's Job a-forge"
for j in a-sneak:"must set spec.schedulerName" a-forge:"only the scheduler may set"; do
  name=${j%%:*} text=${j#*:} msg=
  for _ in $(seq 1 100); do
    msg=$(as alice get events -n team-a --field-selector "involvedObject.name=$name,reason=FailedCreate" \
      -o jsonpath='{.items[0].message}' 2>/dev/null)
    [ -n "$msg" ] && break
    sleep 0.2
  done
  if [[ $msg == *"$text"* ]] && [ -z "$(kubectl get pods -n team-a -l "job-name=$name" -o name)" ]; then
    pass "Job $name: no pod created; alice reads its FailedCreate Event"
    echo "      the user read: $msg"
  else
    fail "Job $name: Event '$msg', pods: $(kubectl get pods -n team-a -l "job-name=$name" -o name)"
  fi
done

echo "== a user editing a bound pod"
decision=$(kubectl get pod a-good -n team-a -o jsonpath='{.metadata.annotations.deepshare\.io/gpus}')
node=$(kubectl get pod a-good -n team-a -o jsonpath='{.spec.nodeName}')
[[ -n $node && $decision == "$node:"* ]] && pass "a-good carries DeepShare's decision ($decision)" ||
  fail "a-good: decision '$decision' on node '$node'"
refused "change the decision of a bound pod" "only the scheduler may set" \
  alice annotate pod a-good -n team-a --overwrite deepshare.io/gpus=gpu-node-2:0,1
refused "remove the decision of a bound pod" "only the scheduler may set" \
  alice annotate pod a-good -n team-a deepshare.io/decision-
refused "add a deepshare.io/ annotation to a bound pod" "only the scheduler may set" \
  alice annotate pod a-good -n team-a deepshare.io/borrowed=0
as alice label pod a-good -n team-a team=vision >/dev/null &&
  as alice annotate pod a-good -n team-a note=mine >/dev/null &&
  pass "labels and the user's own annotations of a bound pod may change" || fail "alice could not label her pod"
refused "move a bound pod (spec.nodeName)" "Forbidden" \
  alice patch pod a-good -n team-a --type=merge -p '{"spec": {"nodeName": "gpu-node-2"}}'
refused "grow a bound pod's GPUs" "Forbidden" alice patch pod a-good -n team-a --type=json \
  -p '[{"op": "replace", "path": "/spec/containers/0/resources/limits/nvidia.com~1gpu", "value": "4"}]'
refused "change a pod's schedulerName" "Forbidden" \
  alice patch pod a-good -n team-a --type=merge -p '{"spec": {"schedulerName": "default-scheduler"}}'
refused "mark a bound pod Succeeded (pods/status)" 'resource "pods/status"' \
  alice patch pod a-good -n team-a --subresource=status --type=merge -p '{"status": {"phase": "Succeeded"}}'
refused "resize a bound pod (pods/resize)" 'resource "pods/resize"' alice patch pod a-good \
  -n team-a --subresource=resize --type=merge -p '{"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}'

echo "== refused by RBAC (403)"
pod a-wait team-a deepshare 1 '{"schedulingGates": [{"name": "example.com/hold"}]}' |
  as alice create -f - >/dev/null || fail "alice's gated pod"
echo '{"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a-wait"},
  "target": {"apiVersion": "v1", "kind": "Node", "name": "gpu-node-1"}}' >"$BASE/check/binding.json"
refused "POST pods/binding" 'cannot create resource "pods/binding"' \
  alice create --raw /api/v1/namespaces/team-a/pods/a-wait/binding -f "$BASE/check/binding.json"
echo '{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a-good", "namespace": "team-a"}}' >"$BASE/check/evict.json"
refused "POST pods/eviction of her own pod" 'cannot create resource "pods/eviction"' \
  alice create --raw /api/v1/namespaces/team-a/pods/a-good/eviction -f "$BASE/check/evict.json"
refused "a PodDisruptionBudget that would refuse DeepShare's evictions" \
  'cannot create resource "poddisruptionbudgets"' alice create -f - < <(echo '{"apiVersion": "policy/v1",
  "kind": "PodDisruptionBudget", "metadata": {"name": "keep", "namespace": "team-a"},
  "spec": {"maxUnavailable": 0, "selector": {}}}')
refused "unlabel the managed namespace" 'resource "namespaces"' \
  alice label namespace team-a deepshare.io/managed-
refused "delete another team's pod" 'cannot delete resource "pods"' bob delete pod a-good -n team-a
refused "create a pod in another team's namespace" 'cannot create resource "pods"' \
  bob create -f - < <(pod b-in-a team-a deepshare 1)

echo "== a managed namespace without a DeepShare quota"
pod c-gpu team-c deepshare 1 | as carol create -f - >/dev/null || fail "carol's pod was refused by admission"
for _ in $(seq 1 100); do
  msg=$(as carol get pod c-gpu -n team-c -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
  [ -n "$msg" ] && break
  sleep 0.2
done
ev=$(as carol get events -n team-c --field-selector involvedObject.name=c-gpu,reason=FailedScheduling \
  -o jsonpath='{.items[0].note}{.items[0].message}' 2>/dev/null)
if [[ $msg == *"no DeepShare quota"* && $ev == *"no DeepShare quota"* ]] &&
  [ -z "$(kubectl get pod c-gpu -n team-c -o jsonpath='{.spec.nodeName}')" ]; then
  pass "carol's GPU pod is left unbound and she reads why (condition and FailedScheduling Event)"
  echo "      the user read: $msg"
else
  fail "carol's pod: condition '$msg', Event '$ev', node '$(kubectl get pod c-gpu -n team-c -o jsonpath='{.spec.nodeName}')'"
fi

kubectl wait --for=condition=Complete -n team-b job/b-job --timeout=60s >/dev/null &&
  pass "bob's Job completed under DeepShare" || fail "bob's Job b-job did not complete: $(kubectl get pods -A -o wide)"

echo "== GPUs as DRA devices: claims DeepShare allocates, and what a user may not do with them"
# A pod of alice's asking for GPUs through a claim made from TEMPLATE: NAME TEMPLATE [SCHEDULER]
dra_pod() {
  pod "$1" team-a "${3:-deepshare}" 0 '{"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "'"$2"'"}]}'
}
template() { # NAME COUNT [MODE]
  jq -n --arg n "$1" --argjson c "$2" --arg m "${3:-ExactCount}" '{apiVersion: "resource.k8s.io/v1",
    kind: "ResourceClaimTemplate", metadata: {name: $n, namespace: "team-a"},
    spec: {spec: {devices: {requests: [{name: "gpu", exactly: ({deviceClassName: "gpu.nvidia.com",
      allocationMode: $m} + (if $m == "All" then {} else {count: $c} end))}]}}}}'
}
template two-gpus 2 | as alice create -f - >/dev/null && template every-gpu 0 All | as alice create -f - >/dev/null ||
  fail "alice's ResourceClaimTemplates"
dra_pod a-dra two-gpus | as alice create -f - >/dev/null && dra_pod a-dra-b two-gpus | as alice create -f - >/dev/null ||
  fail "alice's DRA pods"
claim_of() { kubectl get pod "$1" -n team-a -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
if wait_phase team-a a-dra Running && wait_phase team-a a-dra-b Running; then
  ok=1 devices=
  for p in a-dra a-dra-b; do
    c=$(claim_of $p)
    node=$(kubectl get pod $p -n team-a -o jsonpath='{.spec.nodeName}')
    gpus=$(kubectl get pod $p -n team-a -o jsonpath='{.metadata.annotations.deepshare\.io/gpus}')
    got=$(kubectl get resourceclaim "$c" -n team-a -o json | jq -r '[.status.allocation.devices.results[].device] | join(",")')
    reserved=$(kubectl get resourceclaim "$c" -n team-a -o jsonpath='{.status.reservedFor[0].name}')
    want=$(sed 's/^[^:]*://; s/\([0-9][0-9]*\)/gpu-\1/g' <<<"$gpus")
    echo "      $p on $node, decision $gpus, claim $c: devices $got, reserved for $reserved"
    [ "$node" = dra-node-1 ] && [ "$got" = "$want" ] && [ "$reserved" = "$p" ] || ok=0
    devices="$devices,$got"
  done
  distinct=$(tr ',' '\n' <<<"$devices" | grep -c . )
  unique=$(tr ',' '\n' <<<"$devices" | grep . | sort -u | wc -l)
  [ "$ok" = 1 ] && [ "$distinct" = 4 ] && [ "$unique" = 4 ] &&
    pass "two DRA pods run on the DRA node; each claim names the GPUs of its decision, none twice" ||
    fail "DRA claims: see above (devices$devices)"
else
  fail "alice's DRA pods did not run: $(kubectl get pods -n team-a -o wide | grep dra); $(grep -E 'claim|dra' "$BASE/check/scheduler.log" | tail -3)"
fi
refused "a DRA pod for another scheduler" "must set spec.schedulerName: deepshare" \
  alice create -f - < <(dra_pod a-dra-other two-gpus default-scheduler)
refused "write a claim's allocation (resourceclaims/status)" 'resource "resourceclaims/status"' \
  alice patch resourceclaim "$(claim_of a-dra)" -n team-a --subresource=status --type=merge \
  -p '{"status": {"reservedFor": [{"resource": "pods", "name": "a-dra-b", "uid": "x"}]}}'
refused "publish devices (a ResourceSlice)" 'cannot create resource "resourceslices"' alice create -f - \
  < <(kubectl get resourceslice dra-node-1-gpus -o json | jq '.metadata = {name: "mine"} | .spec.nodeName = "gpu-node-1"')
# A claim created with an allocation of its own: the API drops the status on create, so the
# forged allocation is not there (and DeepShare writes its own when a pod uses the claim).
jq -n '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: "forged", namespace: "team-a"},
  spec: {devices: {requests: [{name: "gpu", exactly: {deviceClassName: "gpu.nvidia.com", count: 1}}]}},
  status: {allocation: {devices: {results: [{request: "gpu", driver: "gpu.nvidia.com",
    pool: "dra-node-1", device: "gpu-3"}]}}}}' | as alice create -f - >/dev/null &&
  [ -z "$(kubectl get resourceclaim forged -n team-a -o jsonpath='{.status.allocation}')" ] &&
  pass "a claim created with a forged allocation is stored without it" ||
  fail "alice's forged claim: $(kubectl get resourceclaim forged -n team-a -o jsonpath='{.status}')"
refused "update a claim (e.g. its finalizer)" 'cannot patch resource "resourceclaims"' \
  alice patch resourceclaim forged -n team-a --type=merge -p '{"metadata": {"finalizers": []}}'
as alice delete resourceclaim forged -n team-a --wait=false >/dev/null
# Told why, never bound: a claim for every device (allocationMode All), and a second pod naming
# a claim that is reserved for a running pod.
dra_pod a-dra-all every-gpu | as alice create -f - >/dev/null || fail "alice's pod a-dra-all"
pod a-dra-share team-a deepshare 0 '{"resourceClaims": [{"name": "gpus", "resourceClaimName": "'"$(claim_of a-dra)"'"}]}' |
  as alice create -f - >/dev/null || fail "alice's pod a-dra-share"
for case in a-dra-all:"allocationMode All" a-dra-share:"reserved for another pod"; do
  name=${case%%:*} text=${case#*:} msg=
  for _ in $(seq 1 100); do
    msg=$(as alice get pod "$name" -n team-a -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
    [ -n "$msg" ] && break
    sleep 0.2
  done
  if [[ $msg == *"$text"* ]] && [ -z "$(kubectl get pod "$name" -n team-a -o jsonpath='{.spec.nodeName}')" ]; then
    pass "$name is left unbound and alice reads why"
    echo "      the user read: $msg"
  else
    fail "$name: condition '$msg', node '$(kubectl get pod "$name" -n team-a -o jsonpath='{.spec.nodeName}')'"
  fi
done
# Nothing left behind: once the pods are gone the resource-claim controller deletes their claims.
claims="$(claim_of a-dra) $(claim_of a-dra-b)"
as alice delete pod a-dra a-dra-b a-dra-all a-dra-share -n team-a --wait=false >/dev/null
gone=0
for _ in $(seq 1 150); do
  # shellcheck disable=SC2086 # the claims' names
  [ -z "$(kubectl get resourceclaim $claims -n team-a -o name --ignore-not-found)" ] && { gone=1; break; }
  sleep 0.2
done
[ "$gone" = 1 ] && pass "the DRA pods' claims are deleted with them" ||
  fail "claims left: $(kubectl get resourceclaims -n team-a -o wide)"

echo "== from the API's own records"
as alice delete pod a-good a-cpu a-cpu2 a-wait -n team-a --wait=false >/dev/null
kubectl delete pod old -n legacy --wait=false >/dev/null
as carol delete pod c-gpu -n team-c --wait=false >/dev/null
sleep 1 # the last changes reach the watch
kill "$SCHED_PID" && wait "$SCHED_PID"
rc=$?
SCHED_PID=
kill "$WATCH_PID"
WATCH_PID=
[ "$rc" = 0 ] && grep -q '"event":"scheduler_stopped".*"api_failures":0' "$BASE/check/scheduler.log" &&
  ! grep -q '"level":"error"' "$BASE/check/scheduler.log" &&
  pass "the scheduler's RBAC was enough: none of its API calls refused, a clean stop" ||
  fail "the scheduler (exit $rc): $(grep -E '"level":"(warn|error)"' "$BASE/check/scheduler.log" | grep -v no_lease | tail -3)"
kubectl get nodes -o json >"$BASE/check/nodes.json" || die "list nodes"
if gpu_watch_check "$BASE/check/pods.watch" "$BASE/check/nodes.json" team-a,team-b,team-c >"$BASE/check/watch.txt"; then
  pass "no node over its nvidia.com/gpu, no GPU pod of a managed namespace placed but by DeepShare"
else
  fail "the pod watch"
fi
sed 's/^/      /' "$BASE/check/watch.txt"
bound=$(sed -n 's/^pods bound by DeepShare: \([0-9]*\),.*/\1/p' "$BASE/check/watch.txt")
[ "${bound:-0}" -ge 5 ] && pass "$bound pods bound by DeepShare (a-good, b-job's 2, a-dra, a-dra-b)" ||
  fail "DeepShare bound ${bound:-0} pods, not the 5 it was given"
[ "$FAILED" = 0 ] || die "$FAILED case(s) failed"
echo "PASS: nobody got around DeepShare"
