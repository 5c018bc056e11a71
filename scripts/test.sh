#!/usr/bin/env bash
# Sets up, builds and runs every test:
#  1. the optimized build (gcc) and its full test suite,
#  2. the same suite built with clang under AddressSanitizer + UndefinedBehaviorSanitizer,
#  3. the clang-format check.
# Tests that need ../shared/traces skip with a message when it is absent.
# Set DEEPSHARE_SKIP_ASAN=1 to skip step 2 during local iteration.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

bash scripts/setup.sh

echo "== release build (gcc) and tests"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

if [ "${DEEPSHARE_SKIP_ASAN:-0}" != "1" ]; then
  echo "== ASan + UBSan build (clang) and tests"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$jobs"
fi

echo "== clang-format check"
bash scripts/format.sh --check
echo "all checks passed"
