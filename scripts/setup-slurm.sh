#!/usr/bin/env bash
# Installs the Debian packages for DeepShare's Slurm controller and its real-cluster tests
# (docs/slurm.md): slurmctld slurmd slurm-client munge libslurm-dev, and what the test
# cluster scripts call: ss (iproute2) and curl. Safe to re-run.
# Package scripts start no service in containers with policy-rc.d; nothing in /etc/slurm
# or /etc/munge is used by scripts/slurm/start-cluster.sh.
set -euo pipefail
packages=(slurmctld slurmd slurm-client munge libslurm-dev iproute2 curl)
bash "$(dirname "$0")/apt-install.sh" setup-slurm "${packages[@]}"
