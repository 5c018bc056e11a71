#!/usr/bin/env bash
# The scenario matrix of issue #15: every scenario (Venus x4 loads with and without profiles,
# the built-in generator, openb) x every baseline and DeepShare, DeepShare's ablations per
# scenario and the misprediction sweep (its target cases also as jittered ensembles). Writes
# the "Scenario matrix" section of docs/results.md and out/scenarios/report.html; raw runs in
# out/scenarios/ (reused unless --force). Options: see scripts/scenarios.py --help. About 11
# minutes on 2 cores (703 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec python3 scripts/scenarios.py "$@"
