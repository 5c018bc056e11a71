#!/usr/bin/env bash
# The paper's testbed experiment on the 16-GPU test cluster (issue #13, docs/slurm.md §12):
# one time-scaled multi-tenant Venus excerpt (tests/slurm/venus3.yaml: ewi/wor/hvq with
# quotas 6/6/4 on 4 nodes x 4 fake GPUs; borrowing, reclaim and MPS sharing) replayed on a
# real Slurm cluster under each policy (a fresh cluster per policy), each compared with the
# simulator's prediction for the same excerpt (`deepshare fidelity`: one simulation and the
# jittered ensemble, with the start latency, jitter and overhang that replay measured).
# Writes OUT/<policy>/ (the replay's outputs, its fidelity/ inside), OUT/<policy>.config.yaml,
# OUT/<policy>.replay.txt, OUT/<policy>.fidelity.txt and OUT/table.md (avg JCT, avg queueing
# delay, QoS compliance of entitled jobs: real vs. simulated). A replay folder holds only
# what the replay wrote (its manifest.json lists it; `fidelity` checks it), so the config
# and the logs sit beside it. Needs root, Slurm and the
# Venus trace (exit 77 without them).
# Usage: bench/slurm_testbed.sh OUT [POLICY...]   (default: deepshare kueue fifo-pooled)
# Env: EXCERPT (default from=1000,jobs=300,min=5,max=90), SCALE=120, BIN=build/bin,
#   TIMEOUT=1200 (wall seconds per replay), DS_SLURM_TMP; REPLAY=0: no replay, only the
#   fidelity check and the table again from OUT (e.g. after a change to the simulator).
#   Timing-sensitive: the replays measure the start latency and overhang of the machine as
#   it is, and the simulations use them.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BIN=${BIN:-$SRC/build/bin}
OUT=${1:?usage: bench/slurm_testbed.sh OUT [POLICY...]}
shift
POLICIES=("$@")
[ ${#POLICIES[@]} -gt 0 ] || POLICIES=(deepshare kueue fifo-pooled)
TRACE=${TRACE:-$SRC/../shared/traces/venus-sept/venus_sept_23859_jobs.csv}
EXCERPT=${EXCERPT:-from=1000,jobs=300,min=5,max=90}
SCALE=${SCALE:-120}
REPLAY=${REPLAY:-1}
[ "$REPLAY" = 0 ] || [ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ "$REPLAY" = 0 ] || command -v slurmctld >/dev/null || { echo "SKIP: Slurm not installed"; exit 77; }
[ -f "$TRACE" ] || { echo "SKIP: no Venus trace at $TRACE"; exit 77; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
BASE=
trap '[ -n "$BASE" ] && "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1' EXIT
fail=0
for p in "${POLICIES[@]}"; do
  if [ "$REPLAY" = 0 ]; then
    "$BIN/deepshare" fidelity --replay "$OUT/$p" --config "$OUT/$p.config.yaml" \
      > "$OUT/$p.fidelity.txt" || fail=1
    continue
  fi
  # The same tenants for every policy; DeepShare's own option only for DeepShare.
  sed -e "s/^policy: .*/policy: $p/" "$SRC/tests/slurm/venus3.yaml" |
    { [ "$p" = deepshare ] && cat || grep -v '^options:'; } > "$OUT/$p.config.yaml"
  echo "== $p: replay (excerpt $EXCERPT, time scale $SCALE)"
  export BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/dst.XXXX")
  NODES=4 GPUS=4 "$SRC/scripts/slurm/start-cluster.sh" >/dev/null || exit 1
  source "$BASE/env.sh"
  "$BIN/deepshare" slurm replay --config "$OUT/$p.config.yaml" --trace "$TRACE" \
    --excerpt "$EXCERPT" --time-scale "$SCALE" --out "$OUT/$p" --work-dir "$BASE/jobout/r" \
    --timeout "${TIMEOUT:-1200}" --quiet | tee "$OUT/$p.replay.txt" || fail=1
  echo "load at the end of the replay: $(cat /proc/loadavg)" | tee -a "$OUT/$p.replay.txt"
  "$SRC/scripts/slurm/stop-cluster.sh" --purge >/dev/null 2>&1
  BASE=
  "$BIN/deepshare" fidelity --replay "$OUT/$p" > "$OUT/$p.fidelity.txt" || fail=1
done
# One row per policy: real vs. the single simulation vs. the ensemble (its mean and range).
python3 - "$OUT" "${POLICIES[@]}" > "$OUT/table.md" <<'EOF'
import json, sys
out, policies = sys.argv[1], sys.argv[2:]
print("| policy | wall s | avg JCT real / sim / ens. mean (range) | avg queueing real / sim / "
      "ens. mean (range) | QoS real / sim / ens. mean (range) | preemptions real / sim / ens. |")
print("|---|---|---|---|---|---|")
for p in policies:
    try:
        f = json.load(open(f"{out}/{p}/fidelity/fidelity.json"))
    except OSError:
        print(f"| {p} | no fidelity.json | | | | |")
        continue
    e = f["ensemble"]
    r = lambda k: f'{e[k]["mean"]:.1f} ({e[k]["min"]:.1f}-{e[k]["max"]:.1f})'
    q = lambda k: f'{100*e[k]["mean"]:.1f} % ({100*e[k]["min"]:.1f}-{100*e[k]["max"]:.1f})'
    print(f'| {p} | {f["replay_wall_s"]:.0f} | {f["real_avg_jct_s"]:.1f} / {f["sim_avg_jct_s"]:.1f} / '
          f'{r("avg_jct_s")} | {f["real_avg_queue_s"]:.1f} / {f["sim_avg_queue_s"]:.1f} / '
          f'{r("avg_queue_s")} | {100*f["real_qos_compliance"]:.1f} % / '
          f'{100*f["sim_qos_compliance"]:.1f} % / {q("qos_compliance")} | '
          f'{f["real_preemptions"]} / {f["sim_preemptions"]} / '
          f'{e["preemptions"]["min"]:.0f}-{e["preemptions"]["max"]:.0f} |')
EOF
cat "$OUT/table.md"
exit $fail
