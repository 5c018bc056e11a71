#!/usr/bin/env bash
# Regenerates docs/results.md (and the results table in README.md) from scratch:
# every registered policy x Venus load, DeepShare's ablations, the openb scenarios,
# predictor and interference-model accuracy, and single-core wall times.
# Needs ../shared/traces; takes a few minutes on 2 cores. Raw runs go to out/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
cmake --build build --target predictor_eval interference_eval >/dev/null
exec python3 scripts/results.py "$@"
