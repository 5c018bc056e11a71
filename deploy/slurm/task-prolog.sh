#!/bin/sh
# Slurm TaskProlog for DeepShare's nodes (slurm.conf TaskProlog=; docs/slurm.md §2).
#
# Whole-GPU jobs need nothing from here: they hold gres/gpu on exactly the GPUs DeepShare
# chose, and Slurm's gpu plugin sets CUDA_VISIBLE_DEVICES from that allocation. A job that
# DeepShare colocates on another job's GPUs (MPS) holds DeepShare's gpushare slot GRES of
# those GPUs instead, which has no Slurm plugin; this prolog turns that allocation into
# CUDA_VISIBLE_DEVICES, and adds the MPS limits of DeepShare's pin.
#
# Trust: it reads only what Slurm records and users cannot write: the job's allocated GRES
# (`scontrol show job -d`) and the pin in its AdminComment (operators only). It never reads
# the job's Comment or environment. A pin written for another run of the job (its restart
# count r differs from Slurm's Restarts) is ignored.
# Lines "export K=V" / "unset K" printed here change the task's environment (slurmstepd).
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
case $gres in *gpushare:*) ;; *) exit 0 ;; esac

# gpushare:g2:1(IDX:2),gpushare:g3:1(IDX:3) -> 2,3 (the slot index is the GPU index)
idx=$(printf '%s\n' "$gres" | tr ',' '\n' | sed -n 's/^gpushare:g\([0-9][0-9]*\):.*/\1/p' | paste -sd, -)
[ -n "$idx" ] || exit 0
echo "export CUDA_VISIBLE_DEVICES=$idx"
echo "export GPU_DEVICE_ORDINAL=$idx"
echo "export DEEPSHARE_SHARED=1"

pin=$(printf '%s\n' "$info" | sed -n 's/^ *AdminComment=\(ds:[^ ]*\).*/\1/p' | head -n 1)
restarts=$(printf '%s\n' "$info" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p' | head -n 1)
key() { printf '%s\n' "$pin" | tr ';:' '\n\n' | sed -n "s/^$1=//p" | head -n 1; }
[ -n "$pin" ] && [ "$(key r)" = "${restarts:-0}" ] || exit 0
m=$(key m)
case $m in '' | *[!0-9]*) ;; *) [ "$m" -ge 1 ] && [ "$m" -le 100 ] && echo "export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$m" ;; esac
l=$(key l)
case $l in
  '' | *[!0-9]*) ;;
  *) echo "export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=$(printf '%s\n' "$idx" | tr ',' '\n' | sed "s/\$/=${l}M/" | paste -sd, -)" ;;
esac
exit 0
