#!/usr/bin/env bash
# Venus identity check: simulates the Venus trace with every registered policy (and the
# option profiles whose code paths differ: Lucid's fidelity mode, Kueue's fair sharing,
# the pooled scopes, strict FIFO), at loads 1.0 and 1.5, and writes each run's outputs to
# OUT/<case>/. Compare two such folders (e.g. before and after a change) with --compare:
# every file must be byte-identical except the `wall_seconds` line of summary.json.
# Usage: bench/venus_identity.sh OUT            (run, with build/bin/deepshare)
#        BIN=DIR bench/venus_identity.sh OUT    (run with DIR/deepshare, e.g. another build's)
#        bench/venus_identity.sh --compare A B  (exit 1 and list the cases that differ)
# Two binaries:  BIN=/work/main/build/bin bench/venus_identity.sh /tmp/a
#                bench/venus_identity.sh /tmp/b && bench/venus_identity.sh --compare /tmp/a /tmp/b
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--compare" ]; then
  a=$2 b=$3 bad=0 n=0
  for d in "$a"/*/; do
    c=$(basename "$d")
    for f in summary.json jobs.csv tenants.csv timeseries.csv; do
      [ -f "$a/$c/$f" ] || continue
      n=$((n + 1))
      if ! cmp -s <(grep -v '"wall_seconds"' "$a/$c/$f") <(grep -v '"wall_seconds"' "$b/$c/$f"); then
        echo "differs: $c/$f"
        bad=1
      fi
    done
  done
  [ $bad = 0 ] && echo "identical: $n files"
  exit $bad
fi

out=${1:?usage: bench/venus_identity.sh OUT | --compare A B}
trace=../shared/traces/venus-sept/venus_sept_23859_jobs.csv
[ -f "$trace" ] || { echo "venus_identity: $trace not found; nothing to check"; exit 0; }
bin=${BIN:-build/bin}/deepshare
[ -x "$bin" ] || { echo "venus_identity: no $bin"; exit 1; }
mkdir -p "$out"
cases=()
mapfile -t policies < <("$bin" policies | awk '{print $1}')
for p in "${policies[@]}"; do cases+=("$p|$p"); done
cases+=("lucid-fidelity|lucid --set fidelity=lucid"
  "lucid-pooled|lucid --set scope=pooled"
  "kueue-fair|kueue --set fair_sharing=on"
  "kueue-strict|kueue --set queueing=strict"
  "fifo-pooled-strict|fifo-pooled --set backfill=off"
  "srtf-pooled|srtf --set scope=pooled"
  "tiresias-pooled|tiresias --set scope=pooled"
  "qssf-fidelity|qssf --set fidelity=lucid"
  "sjf-pooled|sjf --set scope=pooled")
for load in 1.0 1.5; do
  for c in "${cases[@]}"; do
    name=${c%%|*} args=${c#*|}
    # shellcheck disable=SC2086
    nice -n 10 "$bin" simulate --quiet --trace "$trace" --load-factor "$load" --policy $args \
      --out "$out/$name@$load" >/dev/null
  done
done
echo "venus_identity: $(ls "$out" | wc -l) runs in $out"
