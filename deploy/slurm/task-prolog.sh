#!/bin/sh
# Slurm TaskProlog for DeepShare's nodes (slurm.conf TaskProlog=; docs/slurm.md §2).
#
# A job holding gres/gpu on the GPUs DeepShare chose gets CUDA_VISIBLE_DEVICES from Slurm's
# gpu plugin. A job holding only DeepShare's gpushare slots of some GPUs (it is colocated
# on another job's GPUs, or ran so before) gets it from here: the slot GRES has no Slurm
# plugin. A colocated job (pin s=1) also gets the MPS limits of DeepShare's pin.
#
# Trust: it reads only what Slurm records and users cannot write: the job's allocated GRES
# (`scontrol show job -d`) and the pin in its AdminComment (operators only). It never reads
# the job's Comment or environment. A pin written for another run of the job (its restart
# count r differs from Slurm's Restarts) is ignored.
# Its own environment is the job's (slurmstepd runs it as the job's user with the task's
# environment), so it trusts none of it but SLURM_JOB_ID and SLURMD_NODENAME: the tools come
# from a fixed PATH, scontrol from SCONTROL and the cluster from SLURM_CONF_FILE below (set
# when the script is installed; scripts/slurm/start-cluster.sh writes its own), never from the
# job's PATH or SLURM_CONF.
# Lines "export K=V" / "unset K" printed here change the task's environment (slurmstepd).
SCONTROL=/usr/bin/scontrol
SLURM_CONF_FILE=/etc/slurm/slurm.conf
PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
unset LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT ENV BASH_ENV CDPATH
IFS=' 	
'
SLURM_CONF=$SLURM_CONF_FILE
export SLURM_CONF
scontrol() { "$SCONTROL" "$@"; }
[ -n "$SLURM_JOB_ID" ] || exit 0
info=$(scontrol show job -d "$SLURM_JOB_ID" 2>/dev/null) || exit 0
node=${SLURMD_NODENAME:-$(hostname -s)}

# This node's allocation line: "   Nodes=node[1-2] CPU_IDs=0 Mem=100 GRES=gpushare:g0:1(IDX:0),..."
gres=""
for line in $(printf '%s\n' "$info" | sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=\([^ ]*\).*/\1|\2/p'); do
  hosts=${line%%|*}
  for h in $(scontrol show hostnames "$hosts" 2>/dev/null); do
    [ "$h" = "$node" ] && gres=${line#*|}
  done
done
# gpushare:g2:1(IDX:2),gpushare:g3:1(IDX:3) -> 2,3 (a slot's index is its GPU's index)
slots=$(printf '%s\n' "$gres" | tr ',' '\n' | sed -n 's/^gpushare:g\([0-9][0-9]*\):[1-9].*/\1/p' | paste -sd, -)
gpus=$(printf '%s\n' "$gres" | tr ',' '\n' | sed -n 's/^gpu:g\([0-9][0-9]*\):[1-9].*/\1/p' | paste -sd, -)
if [ -n "$slots" ] && [ -z "$gpus" ]; then
  echo "export CUDA_VISIBLE_DEVICES=$slots"
  echo "export GPU_DEVICE_ORDINAL=$slots"
fi
idx=${gpus:-$slots}
[ -n "$idx" ] || exit 0

# MPS settings of a colocated job, from DeepShare's pin for this run
pin=$(printf '%s\n' "$info" | sed -n 's/^ *AdminComment=\(ds:[^ ]*\).*/\1/p' | head -n 1)
restarts=$(printf '%s\n' "$info" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p' | head -n 1)
key() { printf '%s\n' "$pin" | tr ';:' '\n\n' | sed -n "s/^$1=//p" | head -n 1; }
[ -n "$pin" ] && [ "$(key r)" = "${restarts:-0}" ] && [ "$(key s)" = 1 ] || exit 0
echo "export DEEPSHARE_SHARED=1"
m=$(key m)
case $m in '' | *[!0-9]*) ;; *) [ "$m" -ge 1 ] && [ "$m" -le 100 ] && echo "export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$m" ;; esac
l=$(key l)
case $l in
  '' | *[!0-9]*) ;;
  *) echo "export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=$(printf '%s\n' "$idx" | tr ',' '\n' | sed "s/\$/=${l}M/" | paste -sd, -)" ;;
esac
exit 0
