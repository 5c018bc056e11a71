#!/usr/bin/env bash
# End-to-end replay on a REAL Kubernetes control plane with the REAL Kueue admitting the
# jobs (docs/kubernetes.md §6-7): a cluster of its own (4 KWOK nodes x 4 nvidia.com/gpu,
# kube-scheduler placing pods, POD_DELETE=fast), Kueue started by scripts/k8s/start-kueue.sh,
# then `deepshare k8s replay --scheduler kueue` of a Venus excerpt with the quotas of
# tests/k8s/kueue3.yaml (one ClusterQueue per tenant, one cohort, borrowing,
# reclaimWithinCohort: Any), then checks that what Kueue recorded matches what happened:
#  - one Kueue Workload per replayed Job, each admitted by its tenant's ClusterQueue and
#    Finished; every job completed;
#  - the preemptions the replay observed (pods ended before their work was done) are the
#    evictions Kueue counted for that Workload (status.schedulingStats.evictions), job by job;
#  - a job that ran once started (API startTime) no earlier than Kueue reserved its quota
#    (QuotaReserved), i.e. Kueue, not the Job controller, let it run;
#  - Kueue held jobs back: some job queued longer than 5 wall seconds (the excerpt asks for
#    more than the 16 GPUs);
# then imports the cluster's own records (`deepshare import k8s`, issue #28) and checks that
# the import finds every job the replay ran:
#  - from the API server (--kubeconfig) and from kubectl's files (--pods, --nodes, Kueue's
#    --clusterqueues, --localqueues): the same trace.csv and tenants (one importer);
#  - every replayed Job (observed.csv) has its pods in the trace, in its namespace as tenant,
#    with its GPUs; its last pod ends when the replay's record says it finished, and a job
#    never preempted is one pod that started when the replay's record says (within 1 s);
#  - each namespace's quota is its ClusterQueue's nominalQuota;
#  - `deepshare k8s run --tenants-from-api` takes the same quotas from the real Kueue's
#    ClusterQueues, and follows a raised nominalQuota without a restart;
#  - `deepshare whatif --from k8s --kubeconfig` writes its verdict and report;
# and prints `deepshare fidelity`: the real Kueue against the simulator's `kueue`
# re-implementation on the same excerpt (reported, not asserted: docs/baselines.md says how
# far apart they were when measured). About 3 minutes once the tools are built (162 s via
# ctest here, 2026-12-06).
# Needs the Venus trace in ../shared/traces, jq and the tools of scripts/k8s/build-tools.sh
# (built here if missing; Kueue's cold build is long: docs/kubernetes.md §2); skips (77)
# without trace or jq.
# Env: FROM, JOBS (the excerpt); DS_TEST_OUT=DIR keeps the outputs (the replay folder with
# its fidelity/, and check/workloads.json) in DIR.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$SRC/build/bin}
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT="from=${FROM:-1000},jobs=${JOBS:-40},min=5,max=60"
CONFIG=$SRC/tests/k8s/kueue3.yaml
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/setup-k8s.sh)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
export BASE
BASE=$(mktemp -d /tmp/dskq.XXXX)
cleanup() {
  if [ -n "${DS_TEST_OUT:-}" ] && [ -d "$BASE/out" ]; then
    mkdir -p "$DS_TEST_OUT" && cp -r "$BASE/out/." "$DS_TEST_OUT/" && cp "$CONFIG" "$DS_TEST_OUT/" &&
      { [ ! -d "$BASE/check" ] || cp -r "$BASE/check" "$DS_TEST_OUT/"; }
  fi
  [ -n "${RUN_PID:-}" ] && kill "$RUN_PID" 2>/dev/null
  "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
}
RUN_PID=
trap cleanup EXIT

echo "== what the simulator's kueue expects (no cluster involved)"
"$BIN/deepshare" excerpt --config "$CONFIG" --trace "$TRACE" --excerpt "$EXCERPT" \
  --time-scale 60 --nodes 4x4 --ensemble 8 || fail "excerpt"
NODES=4 GPUS=4 SCHEDULER=1 POD_DELETE=fast "$SRC/scripts/k8s/start-cluster.sh" || fail "cluster"
"$SRC/scripts/k8s/start-kueue.sh" || fail "start-kueue.sh"
source "$BASE/env.sh"
source "$BASE/kueue/env.sh"
echo "== replay with the real Kueue $DS_KUEUE_VERSION"
"$BIN/deepshare" k8s replay --config "$CONFIG" --trace "$TRACE" --excerpt "$EXCERPT" \
  --time-scale 60 --scheduler kueue --out "$BASE/out" --timeout 900 --quiet ||
  fail "replay (not every job completed)"
for f in summary.json jobs.csv observed.csv replay.json; do
  [ -s "$BASE/out/$f" ] || fail "replay wrote no $f"
done
# The checks' files go beside the replay folder: it holds only what its manifest lists.
mkdir -p "$BASE/check"
# Kueue marks a Workload Finished after its Job completed, on its own time: wait for it.
kubectl wait --for=condition=Finished workloads.kueue.x-k8s.io --all -A --timeout=60s >/dev/null ||
  echo "note: some Workload is not Finished 60 s after the replay (checked below)"
kubectl get workloads.kueue.x-k8s.io -A -o json >"$BASE/check/workloads.json" || fail "list Workloads"

# Per Workload: its Job (ns/name), ClusterQueue, Finished, evictions, QuotaReserved (Unix s).
jq -r '.items[] | [.metadata.namespace + "/" + (.metadata.ownerReferences[0].name // "?"),
    (.status.admission.clusterQueue // "-"),
    ([.status.conditions[]? | select(.type == "Finished" and .status == "True")] | length),
    ([.status.schedulingStats.evictions[]?.count] | add // 0),
    ([.status.conditions[]? | select(.type == "QuotaReserved") | .lastTransitionTime
      | fromdateiso8601] | first // -1)] | @tsv' "$BASE/check/workloads.json" |
  sort >"$BASE/check/workloads.tsv"
# Per replayed job: Job, tenant namespace, preemptions, completed, queue (ms), API start (s).
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { split($c["k8s_job"], a, "/");
    print $c["k8s_job"] "\t" a[1] "\t" $c["preemptions"] "\t" $c["completed"] "\t" \
      $c["queue_ms"] "\t" $c["api_started_s"] }' "$BASE/out/observed.csv" |
  sort >"$BASE/check/jobs.tsv"
jobs=$(wc -l <"$BASE/check/jobs.tsv")
[ "$jobs" -gt 0 ] || fail "observed.csv lists no job"
[ "$(wc -l <"$BASE/check/workloads.tsv")" = "$jobs" ] ||
  fail "$(wc -l <"$BASE/check/workloads.tsv") Workloads for $jobs Jobs"
join -t $'\t' "$BASE/check/jobs.tsv" "$BASE/check/workloads.tsv" >"$BASE/check/joined.tsv"
[ "$(wc -l <"$BASE/check/joined.tsv")" = "$jobs" ] || fail "some Job has no Workload of its own"
# joined: job ns preemptions completed queue_ms api_started cq finished evictions reserved
awk -F'\t' '
  $4 != 1 { print "FAIL: " $1 " did not complete"; bad = 1 }
  $7 != $2 { print "FAIL: " $1 " admitted by ClusterQueue " $7 ", not " $2; bad = 1 }
  $8 != 1 { print "FAIL: Kueue does not record " $1 " as Finished"; bad = 1 }
  $3 != $9 { print "FAIL: " $1 ": " $3 " preemptions seen, Kueue evicted it " $9 " times"; bad = 1 }
  $3 == 0 && $6 >= 0 && $10 >= 0 && $6 < $10 {
    print "FAIL: " $1 " started at " $6 ", before Kueue reserved quota at " $10; bad = 1 }
  { pre += $3; if ($5 > held) held = $5 }
  END {
    if (held <= 5000 * 60) { print "FAIL: no job queued over 5 wall s (max " held " ms)"; bad = 1 }
    printf "jobs %d, preemptions (= Kueue evictions) %d, longest queue %.0f trace s\n", NR, pre, held / 1000
    exit bad }' "$BASE/check/joined.tsv" || fail "Kueue's records and the replay disagree"
echo "PASS: every Job's Workload was admitted by its tenant's ClusterQueue, ran after admission," \
  "finished, with Kueue's evictions = the preemptions seen"

echo "== import the cluster's own records: from the API server, and from kubectl's files"
C=$BASE/check
"$BIN/deepshare" import k8s --kubeconfig "$KUBECONFIG" --out "$C/import-api" 2>"$C/import-api.log" ||
  fail "import k8s --kubeconfig: $(tail -3 "$C/import-api.log")"
kubectl get pods -A -o json >"$C/pods.json" && kubectl get nodes -o json >"$C/nodes.json" &&
  kubectl get clusterqueues -o json >"$C/clusterqueues.json" &&
  kubectl get localqueues -A -o json >"$C/localqueues.json" || fail "kubectl get (for the files)"
"$BIN/deepshare" import k8s --pods "$C/pods.json" --nodes "$C/nodes.json" \
  --clusterqueues "$C/clusterqueues.json" --localqueues "$C/localqueues.json" \
  --out "$C/import-files" 2>"$C/import-files.log" || fail "import k8s --pods: $(tail -3 "$C/import-files.log")"
cmp -s "$C/import-api/trace.csv" "$C/import-files/trace.csv" ||
  fail "the API's import and the files' differ: $(diff "$C/import-api/trace.csv" "$C/import-files/trace.csv" | head -5)"
cmp -s <(grep -v '^#' "$C/import-api/cluster.yaml") <(grep -v '^#' "$C/import-files/cluster.yaml") ||
  fail "the API's cluster.yaml and the files' differ"
grep -q "^note: k8s: https://127.0.0.1:[0-9]*/api/v1/pods: [0-9]* pods" "$C/import-api.log" ||
  fail "the API import does not name the API in its notes: $(grep pods "$C/import-api.log")"
# Every replayed job in the import: observed.csv (job, namespace, GPUs, preemptions, API start
# and finish) against the trace's pods (tenant, GPUs, k8s_start_s, k8s_end_s, k8s_job).
awk -F, 'NR == FNR { if (FNR == 1) { for (i = 1; i <= NF; i++) o[$i] = i; next }
    j = $o["k8s_job"]; split(j, a, "/"); want[j] = 1; ns[j] = a[1]; gpus[j] = $o["gpus"]
    pre[j] = $o["preemptions"]; start[j] = $o["api_started_s"]; end[j] = $o["api_finished_s"]; next }
  FNR == 1 { for (i = 1; i <= NF; i++) t[$i] = i; next }
  { j = $t["k8s_job"]; if (!(j in want)) next
    pods[j]++
    if ($t["tenant"] != ns[j]) { print "FAIL: " $1 " of " j ": tenant " $t["tenant"] ", not " ns[j]; bad = 1 }
    if ($t["gpus"] != gpus[j]) { print "FAIL: " $1 " of " j ": " $t["gpus"] " GPUs, not " gpus[j]; bad = 1 }
    if (!(j in first) || $t["k8s_start_s"] < first[j]) first[j] = $t["k8s_start_s"]
    if (!(j in last) || $t["k8s_end_s"] > last[j]) last[j] = $t["k8s_end_s"] }
  function off(a, b) { return a > b ? a - b : b - a }
  END {
    for (j in want) {
      if (!(j in pods)) { print "FAIL: " j " (replayed) is not in the import"; bad = 1; continue }
      if (off(last[j], end[j]) > 1) { print "FAIL: " j " ends at " last[j] ", the replay saw " end[j]; bad = 1 }
      if (pre[j] == 0 && (pods[j] != 1 || off(first[j], start[j]) > 1)) {
        print "FAIL: " j ": " pods[j] " pods from " first[j] ", the replay saw one from " start[j]; bad = 1 }
      if (pre[j] > 0 && first[j] < start[j] - 1) { print "FAIL: " j " starts before its first run"; bad = 1 }
      n++; p += pods[j] }
    printf "import: all %d replayed jobs found (%d pods)\n", n, p
    exit bad }' "$BASE/out/observed.csv" "$C/import-api/trace.csv" || fail "the import does not match the replay"
# Each namespace's quota: its ClusterQueue's nominalQuota of nvidia.com/gpu.
jq -r --slurpfile lq "$C/localqueues.json" '.items[] | .metadata.name as $cq
  | ([.spec.resourceGroups[].flavors[].resources[] | select(.name == "nvidia.com/gpu")
      | .nominalQuota | tonumber] | add) as $q
  | $lq[0].items[] | select(.spec.clusterQueue == $cq) | "\(.metadata.namespace) \($q)"' \
  "$C/clusterqueues.json" >"$C/quotas.txt" || fail "reading the ClusterQueues"
[ -s "$C/quotas.txt" ] || fail "no LocalQueue points at a ClusterQueue"
tenants=0
while read -r ns q; do
  if cut -d, -f2 "$C/import-api/trace.csv" | grep -qx "$ns"; then
    grep -q "name: \"$ns\", quota_gpus: $q," "$C/import-api/cluster.yaml" ||
      fail "namespace $ns: quota $q of its ClusterQueue not in cluster.yaml: $(grep "$ns" "$C/import-api/cluster.yaml")"
    tenants=$((tenants + 1))
  else  # no pod of the excerpt ran there: no tenant, its quota noted as given to none
    grep -q "ClusterQueues serve no namespace with pods" "$C/import-api.log" ||
      fail "namespace $ns has no pods, and the import does not note its ClusterQueue's quota"
  fi
done <"$C/quotas.txt"
[ "$tenants" -gt 0 ] || fail "no tenant of the import has a ClusterQueue"
echo "PASS: the import (API and files alike) finds every replayed job; quotas = the ClusterQueues'"

echo "== deepshare k8s run takes its tenants from the real Kueue's ClusterQueues, live"
# A scheduler for another schedulerName (no pod names it): only its tenants are looked at.
"$BIN/deepshare" k8s run --tenants-from-api --no-leader-elect --scheduler-name quota-check \
  >"$C/k8s-run.log" 2>&1 &
RUN_PID=$!
tenants_now() { # the tenants of the last line that names them (ready, or reloaded)
  grep -E '"event":"(scheduler_ready|tenants_reloaded)"' "$C/k8s-run.log" | tail -1 |
    jq -r '.tenants // empty' | tr ',' '\n'
}
for _ in $(seq 1 150); do grep -q '"event":"scheduler_ready"' "$C/k8s-run.log" && break; sleep 0.2; done
grep -q '"event":"tenant_source","source":"kueue"' "$C/k8s-run.log" ||
  fail "deepshare k8s run did not read Kueue: $(head -5 "$C/k8s-run.log")"
while read -r ns q; do
  tenants_now | grep -qx "$ns=$q" || fail "namespace $ns: quota $q not in deepshare k8s run's tenants: $(tenants_now | tr '\n' ' ')"
done <"$C/quotas.txt"
# The operator raises a ClusterQueue's nominalQuota (the real Kueue's webhooks validate it):
# DeepShare takes it at its next cycle, without a restart.
read -r cq_ns cq_q < <(head -1 "$C/quotas.txt")
cq=$(jq -r --arg ns "$cq_ns" '.items[] | select(.metadata.namespace == $ns) | .spec.clusterQueue' \
  "$C/localqueues.json" | head -1)
kubectl get clusterqueue "$cq" -o json |
  jq '.spec.resourceGroups |= map(.flavors |= map(.resources |= map(
        if .name == "nvidia.com/gpu" then .nominalQuota = ((.nominalQuota | tonumber) + 3) else . end)))' |
  kubectl replace -f - >/dev/null || fail "raise ClusterQueue $cq's nominalQuota"
want=$(kubectl get clusterqueue "$cq" -o json | jq '[.spec.resourceGroups[].flavors[].resources[]
  | select(.name == "nvidia.com/gpu") | .nominalQuota | tonumber] | add')
[ "$want" -gt "$cq_q" ] || fail "ClusterQueue $cq's quota is $want after the raise (was $cq_q)"
for _ in $(seq 1 75); do tenants_now | grep -qx "$cq_ns=$want" && break; sleep 0.2; done
tenants_now | grep -qx "$cq_ns=$want" ||
  fail "$cq_ns's quota did not follow ClusterQueue $cq to $want: $(tenants_now | tr '\n' ' ')"
kill "$RUN_PID"
RUN_PID=
echo "PASS: deepshare k8s run's tenants are the ClusterQueues' quotas; $cq_ns followed $cq from $cq_q to $want GPUs"

echo "== whatif --from k8s --kubeconfig"
"$BIN/deepshare" whatif --from k8s --kubeconfig "$KUBECONFIG" --out "$C/whatif" --quiet \
  --threads 2 >"$C/whatif.txt" 2>&1 || fail "whatif: $(tail -5 "$C/whatif.txt")"
tail -5 "$C/whatif.txt"
for l in "as recorded by Kubernetes" "site's policy: kueue" "queueing delay:" "QoS of guaranteed" "utilisation:"; do
  grep -q "^$l" "$C/whatif/verdict.txt" || fail "verdict.txt has no line '$l'"
done
[ -s "$C/whatif/report/comparison.csv" ] || fail "whatif wrote no report/comparison.csv"
# report.html needs the web assets (scripts/setup.sh); without them whatif warns and goes on
grep -q "no HTML report" "$C/whatif.txt" || [ -s "$C/whatif/report/report.html" ] ||
  fail "whatif wrote no report.html"
echo "PASS: whatif wrote the verdict and the report from the API server"

echo "== fidelity: the real Kueue vs the simulator's kueue on the same excerpt"
"$BIN/deepshare" fidelity --replay "$BASE/out" || fail "fidelity"
echo "PASS"
