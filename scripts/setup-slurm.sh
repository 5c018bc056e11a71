#!/usr/bin/env bash
# Installs the Debian packages for DeepShare's Slurm controller and its real-cluster tests
# (docs/slurm.md): slurmctld slurmd slurm-client munge libslurm-dev, and what the test
# cluster scripts call: ss (iproute2) and curl. Safe to re-run.
# Package scripts start no service in containers with policy-rc.d; nothing in /etc/slurm
# or /etc/munge is used by scripts/slurm/start-cluster.sh.
set -euo pipefail
packages=(slurmctld slurmd slurm-client munge libslurm-dev iproute2 curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-slurm: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup-slurm: all packages present"
fi
