#!/bin/sh
# Slurm TaskProlog: applies DeepShare's GPU pin to the job's environment.
# DeepShare writes the pin into the job's Comment before it releases the job:
#   ds:r=<restart>;b=<0|1>;s=<0|1>;g=<gpu indices on this node, comma-separated>;m=<mps %>
# (see src/slurm/pin.hpp). A pin whose restart count differs from SLURM_RESTART_COUNT is
# stale (left from a run before a requeue) and ignored. Lines "export K=V" printed here
# are added to the task environment by slurmstepd.
c=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Comment=\(ds:[^ ]*\).*/\1/p' | head -n 1)
[ -n "$c" ] || exit 0
r=$(echo "$c" | sed -n 's/.*[:;]r=\([0-9]*\).*/\1/p')
[ "${r:-0}" = "${SLURM_RESTART_COUNT:-0}" ] || exit 0
g=$(echo "$c" | sed -n "s/.*;g=\([^;]*\).*/\1/p" | tr '/' '\n' | sed -n "s/^$SLURMD_NODENAME@//p")
m=$(echo "$c" | sed -n 's/.*;m=\([0-9]*\).*/\1/p')
if [ -n "$g" ]; then
  echo "export CUDA_VISIBLE_DEVICES=$g"
  echo "export GPU_DEVICE_ORDINAL=$g"
  echo "export DEEPSHARE_GPUS=$g"
fi
if [ -n "$m" ] && [ "$m" != 100 ]; then echo "export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$m"; fi
exit 0
