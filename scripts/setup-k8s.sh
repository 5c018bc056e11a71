#!/usr/bin/env bash
# Prepares the Kubernetes integration tests (docs/kubernetes.md): the Debian packages the
# cluster scripts call (openssl for the PKI, curl for readiness checks, ss from iproute2 for
# free ports; flock and setsid are in util-linux), then builds the real control plane, etcd
# and KWOK from their Go modules (scripts/k8s/build-tools.sh: cold 24 CPU-minutes, 88 min
# of wall time on 2 busy cores; warm well under a second; docs/kubernetes.md §2). Go >= 1.26 must be on PATH: Debian bookworm's golang
# is too old, so it is not installed here. Safe to re-run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
bash "$HERE/apt-install.sh" setup-k8s openssl curl iproute2 util-linux
start=$SECONDS
bash "$HERE/k8s/build-tools.sh" >/dev/null
echo "setup-k8s: Kubernetes tools ready ($((SECONDS - start)) s)"
