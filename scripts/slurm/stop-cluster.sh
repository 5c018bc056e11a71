#!/usr/bin/env bash
# Stops the cluster that start-cluster.sh started in BASE: cancels its jobs, then ends
# only the daemons whose pid files lie in BASE (slurmd, slurmctld, slurmdbd, MariaDB,
# munged: TERM, then KILL after ~15 s).
# Usage: BASE=$BASE scripts/slurm/stop-cluster.sh [--purge]   (--purge removes BASE)
set -uo pipefail
: "${BASE:?set BASE}"
export SLURM_CONF=$BASE/etc/slurm.conf
pid_of() { [ -f "$1" ] && cat "$1" 2>/dev/null; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

if [ -f "$SLURM_CONF" ] && alive "$(pid_of "$BASE/ctld/slurmctld.pid")"; then
  jobs=$(timeout 5 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    timeout 5 scancel $jobs 2>/dev/null
    for _ in $(seq 1 40); do
      [ -z "$(timeout 5 squeue -h -t R,CG,S -o %A 2>/dev/null)" ] && break; sleep 0.2
    done
  fi
fi
# a slurmstepd left behind is found through its step socket inside BASE
for s in "$BASE"/spool/node*/*_*.*; do
  [ -S "$s" ] || continue
  for p in $(ss -xlpn 2>/dev/null | awk -v p="$s" '$5==p' | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    kill -TERM "$p" 2>/dev/null
  done
done
pids=""
for f in "$BASE"/spool/slurmd-*.pid "$BASE/ctld/slurmctld.pid" "$BASE/ctld/slurmdbd.pid" \
  "$BASE/db/mysqld.pid" "$BASE/munge/munged.pid"; do
  p=$(pid_of "$f"); alive "$p" && { kill -TERM "$p"; pids="$pids $p"; }
done
left=""
for _ in $(seq 1 75); do
  left=""; for p in $pids; do alive "$p" && left="$left $p"; done
  [ -z "$left" ] && break; sleep 0.2
done
for p in $left; do kill -KILL "$p" 2>/dev/null; done
[ "${1:-}" = "--purge" ] && rm -rf "$BASE"
echo "stopped cluster in $BASE"
