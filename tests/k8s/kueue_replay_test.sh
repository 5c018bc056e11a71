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
# and prints `deepshare fidelity`: the real Kueue against the simulator's `kueue`
# re-implementation on the same excerpt (reported, not asserted: docs/baselines.md says how
# far apart they were when measured). About 3 minutes once the tools are built.
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
  "$SRC/scripts/k8s/stop-cluster.sh" --purge >/dev/null 2>&1
}
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

echo "== fidelity: the real Kueue vs the simulator's kueue on the same excerpt"
"$BIN/deepshare" fidelity --replay "$BASE/out" || fail "fidelity"
echo "PASS"
