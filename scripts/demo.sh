#!/usr/bin/env bash
# Sets up, builds and runs the main job: DeepShare's policy comparison on the
# built-in workload. Extra arguments go to `deepshare demo` (e.g. --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec build/bin/deepshare demo "$@"
