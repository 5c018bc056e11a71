#!/usr/bin/env bash
# Sets up, builds and runs every test:
#  1. the optimized build (gcc) and its full test suite, with the real-Slurm integration
#     tests (tests/slurm, label `slurm`: each starts and stops its own local cluster) and
#     the real-Kubernetes ones (tests/k8s, label `k8s`: one local control plane for the
#     run, built from Go modules by scripts/setup-k8s.sh into ~/.cache/deepshare-k8s),
#  2. the same suite built with clang under AddressSanitizer + UndefinedBehaviorSanitizer (the
#     build begins beside the release tests, at the lowest CPU priority: the real-cluster
#     tests spend most of their time waiting on the clusters they start),
#  3. a 60-s fuzz smoke of every parser (libFuzzer, scripts/fuzz.sh; docs/formats.md),
#  4. the clang-format check.
# Tests that need ../shared/traces skip with a message when it is absent.
# Set DEEPSHARE_SKIP_ASAN=1 / DEEPSHARE_SKIP_FUZZ=1 to skip step 2 / 3 during local iteration.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

bash scripts/setup.sh
bash scripts/setup-slurm.sh
bash scripts/setup-k8s.sh

# The Slurm tests keep their clusters under DS_SLURM_TMP; one left behind by a killed test
# (CTest timeout) is stopped here on exit, by its pid files (scripts/slurm/stop-cluster.sh).
DS_SLURM_TMP=$(mktemp -d /tmp/dsci.XXXX)
# Readable by the unprivileged users of the adversarial test (mktemp makes it 0700).
chmod 755 "$DS_SLURM_TMP"
export DS_SLURM_TMP
stop_slurm_leftovers() {
  for b in "$DS_SLURM_TMP"/*/; do
    [ -d "$b" ] && BASE=${b%/} bash scripts/slurm/stop-cluster.sh --purge >/dev/null 2>&1
  done
  rm -rf "$DS_SLURM_TMP"
  # the Kubernetes fixture's cluster, if CTest was killed before its cleanup test ran
  [ -d build/k8s-cluster ] && BASE=build/k8s-cluster bash scripts/k8s/stop-cluster.sh --purge >/dev/null 2>&1
  true
}
asan_build=""  # the ASan build beside the release tests (its own process group)
stop_leftovers() {
  [ -n "$asan_build" ] && kill -- -"$asan_build" 2>/dev/null
  stop_slurm_leftovers
}
trap stop_leftovers EXIT

# When a test fails, its own failing lines are repeated at the very end of the log, where
# a CI excerpt that keeps only a log's head and tail still shows them.
failed_checks() {
  local log
  log=$(ls -t "$1"/Testing/Temporary/LastTest*.log 2>/dev/null | head -1)
  [ -n "$log" ] || return 0
  echo "== the failing lines of the failed tests (all of it: $log)"
  grep -E '^FAIL|^\[  FAILED  \]|: Failure$|runtime error:|ERROR: AddressSanitizer' "$log" |
    grep -v '^\[  FAILED  \] *[0-9]* tests\?,' | head -20 | cut -c1-400
}

echo "== release build (gcc) and tests"
cmake --preset release -DDEEPSHARE_SLURM_TESTS=ON -DDEEPSHARE_K8S_TESTS=ON >/dev/null
cmake --build --preset release -j "$jobs"
if [ "${DEEPSHARE_SKIP_ASAN:-0}" != "1" ]; then
  # nice 19: whenever a test needs the CPU it gets it first (CFS weight 15 against 1024).
  cmake --preset asan >/dev/null
  setsid -w nice -n 19 cmake --build --preset asan -j "$jobs" > build-asan/build.log 2>&1 &
  asan_build=$!
fi
ctest --preset release -j "$jobs" || { failed_checks build; exit 1; }

if [ "${DEEPSHARE_SKIP_ASAN:-0}" != "1" ]; then
  echo "== ASan + UBSan build (clang; begun beside the release tests) and tests"
  if ! wait "$asan_build"; then
    asan_build=""
    tail -n 40 build-asan/build.log
    echo "the ASan build failed (all of it: build-asan/build.log)"
    exit 1
  fi
  asan_build=""
  cmake --build --preset asan -j "$jobs"  # nothing left to do, unless the tree changed meanwhile
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$jobs" || { failed_checks build-asan; exit 1; }
fi

if [ "${DEEPSHARE_SKIP_FUZZ:-0}" != "1" ]; then
  # libFuzzer targets of the CSV reader, the four importers and the cluster file (clang,
  # ASan + UBSan): a 60-s smoke each, two at a time; any finding fails the run.
  echo "== fuzz smoke (scripts/fuzz.sh: 60 s per parser)"
  bash scripts/fuzz.sh "${DEEPSHARE_FUZZ_SECONDS:-60}" 2
fi

echo "== clang-format check"
bash scripts/format.sh --check
echo "all checks passed"
