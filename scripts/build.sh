#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds the optimized binaries.
# Result: build/bin/deepshare
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
