#!/usr/bin/env bash
# Sets up, builds and runs the main job: DeepShare's policy comparison on the
# built-in workload. Extra arguments go to `deepshare demo` (e.g. --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# --force: a rerun replaces the previous demo (only DeepShare's own outputs are removed).
exec build/bin/deepshare demo --force "$@"
