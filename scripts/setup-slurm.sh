#!/usr/bin/env bash
# Installs the Debian packages for DeepShare's Slurm controller and its real-cluster tests
# (docs/slurm.md): slurmctld slurmd slurm-client munge libslurm-dev (the controller),
# slurm-wlm-basic-plugins (job_submit_lua.so: the submission gate), slurmdbd and
# mariadb-server (accounting: tenants are Slurm accounts), lua5.1 (the gate's unit test),
# and what the test cluster scripts call: ss (iproute2) and curl. Safe to re-run.
# Package scripts start no service in containers with policy-rc.d; nothing in /etc/slurm,
# /etc/munge or /etc/mysql is used by scripts/slurm/start-cluster.sh.
set -euo pipefail
packages=(slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libslurm-dev slurmdbd
  mariadb-server lua5.1 iproute2 curl)
bash "$(dirname "$0")/apt-install.sh" setup-slurm "${packages[@]}"
