#!/usr/bin/env bash
# The accounts, QOS and quotas of native Slurm on a shared GPU cluster (slurm.conf.fragment;
# docs/slurm.md §14): one account per tenant with Fairshare = its quota, its own QOS holding
# the quota (GrpTRES=gres/gpu=Q) that may preempt QOS scavenger, and QOS scavenger for the
# jobs beyond the quota (lowest priority, requeued when preempted, no backfill reservations).
#
# Why the quota sits on the account's QOS and not on the account's association: an
# association's GrpTRES counts every job of the account, its scavenger jobs too, so borrowed
# GPUs would hold the account's own in-quota jobs back (resource_limits.shtml "Hierarchy":
# a QOS limit takes precedence over the association's).
#
# Usage: setup-accounts.sh CLUSTER ACCOUNT:QUOTA... [-- USER...]
#   e.g. setup-accounts.sh dstest ewi:6 wor:6 hvq:4 -- root
# Users listed after `--` are added to every account. Idempotent for new names only
# (sacctmgr refuses to add what exists). Needs sacctmgr and a running slurmdbd.
set -euo pipefail
cluster=${1:?usage: setup-accounts.sh CLUSTER ACCOUNT:QUOTA... [-- USER...]}
shift
accounts=() users=()
while [ $# -gt 0 ]; do
  [ "$1" = -- ] && { shift; users=("$@"); break; }
  accounts+=("$1"); shift
done
[ ${#accounts[@]} -gt 0 ] || { echo "setup-accounts.sh: no ACCOUNT:QUOTA given" >&2; exit 2; }
# GrpTRES=gres/gpu needs the TRES, which slurmctld registers from AccountingStorageTRES.
for _ in $(seq 1 150); do
  sacctmgr -nP show tres 2>/dev/null | grep -q '^gres|gpu|' && break; sleep 0.1
done
sacctmgr -i add qos scavenger Priority=0 PreemptMode=requeue Flags=NoReserve GraceTime=0 >/dev/null
names=()
for a in "${accounts[@]}"; do
  name=${a%%:*} quota=${a##*:}
  case $quota in ''|*[!0-9]*) echo "setup-accounts.sh: '$a' is not ACCOUNT:QUOTA" >&2; exit 2 ;; esac
  sacctmgr -i add qos "$name" Priority=1 GrpTRES=gres/gpu="$quota" Preempt=scavenger >/dev/null
  sacctmgr -i add account "$name" Cluster="$cluster" Fairshare="$quota" QOS="$name,scavenger" \
    DefaultQOS="$name" >/dev/null
  names+=("$name")
done
if [ ${#users[@]} -gt 0 ]; then
  list=$(IFS=,; echo "${names[*]}")
  for u in "${users[@]}"; do
    sacctmgr -i add user "$u" Account="$list" Cluster="$cluster" >/dev/null
  done
fi
echo "native accounts: ${names[*]} (QOS with GrpTRES, scavenger preemptible)"
