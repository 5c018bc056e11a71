#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS] [PARALLEL]
# Builds the libFuzzer targets of the parsers (CMake preset `fuzz`: clang, ASan + UBSan) and
# runs each for SECONDS (default 60), PARALLEL targets at a time (default 2), each from a
# copy of its seeds in tests/fuzz/corpus/<target>/. A crash, a hang (> 10 s on one input),
# memory over 2 GiB, undefined behaviour or an exception other than InputError is a
# finding: the script prints it, keeps the input in build-fuzz/findings/<target>/ and exits 1.
# Turn each finding into a regression test: fix the bug, then copy the input to
# tests/fuzz/regressions/<target>/ (fuzz_regression_test replays it in every build).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
parallel=${2:-2}
targets=(csv venus helios openb native cluster_file run_folder replay_folder cluster_placement
         slurm_record slurm_gres controller_config
         slurm_sacct slurm_assoc slurm_nodes k8s_pods)

# libFuzzer's runtime (clang's compiler-rt; only a recommendation of clang in Debian).
bash scripts/apt-install.sh fuzz libclang-rt-dev
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

work=$(mktemp -d /tmp/dsfuzz.XXXX)
trap 'rm -rf "$work"' EXIT
# The targets write each input to a file here (tests/fuzz/fuzz_util.hpp), removed with $work.
export DEEPSHARE_FUZZ_TMP="$work/inputs"

run_one() {
  local t=$1 dir="$work/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/"
  if build-fuzz/bin/fuzz_"$t" "$dir/corpus" -max_total_time="$secs" -timeout=10 \
       -rss_limit_mb=2048 -max_len=8192 -artifact_prefix="$dir/artifacts/" \
       -print_final_stats=1 >"$dir/log" 2>&1; then
    local runs
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
    echo "fuzz_$t: ${runs:-?} inputs in ${secs} s, no finding"
  else
    echo "fuzz_$t: FINDING"
    tail -n 40 "$dir/log"
    mkdir -p build-fuzz/findings/"$t"
    cp "$dir"/artifacts/* build-fuzz/findings/"$t"/ 2>/dev/null || true
    echo "input kept in build-fuzz/findings/$t/"
    return 1
  fi
}

status=0
for ((i = 0; i < ${#targets[@]}; i += parallel)); do
  pids=()
  for t in "${targets[@]:i:parallel}"; do
    run_one "$t" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
done
exit $status
