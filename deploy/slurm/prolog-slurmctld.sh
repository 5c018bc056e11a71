#!/bin/sh
# Slurm PrologSlurmctld for DeepShare's partitions (slurm.conf PrologSlurmctld=; docs/slurm.md §5,
# "Only DeepShare starts a job").
#
# slurmctld runs it as SlurmUser for every job it has just allocated, before any process of
# the job runs, and waits for it. A non-zero exit makes Slurm requeue the job (a batch job:
# Restarts + 1, pending again) or kill it (an interactive one); no node is drained.
#
# It lets a job of DeepShare's run only on a start DeepShare decided for THIS run: the job's
# AdminComment (operators only) carries a pin whose restart count r equals Slurm's own
# restart count of the job. Every other path to RUNNING is refused here, by Slurm itself,
# whatever the controller is doing at that moment: a user's `scontrol requeue` of a finished
# job (Slurm starts it after cred_expire on its old GPUs; the pin is of the old run), a
# user's release of a job DeepShare preempted (the pin is of the run before the preemption),
# a node-failure or user requeue while no controller runs, a pin-less job whose parking was
# lifted. The refused job waits again; the controller parks it and decides it (a finished
# job that comes back arrives as a new job of its tenant).
# Jobs without DeepShare's record (other partitions, jobs from before the gate) are Slurm's:
# they pass. A failing `scontrol` refuses the start (fail closed: DeepShare starts it again).
#
# Trust: it reads only slurmctld's environment (SLURM_JOB_ID, SLURM_JOB_RESTART_COUNT) and
# what users cannot write (the AdminComment); the tools come from a fixed PATH, scontrol from
# SCONTROL and the cluster from SLURM_CONF_FILE below (set when the script is installed;
# scripts/slurm/start-cluster.sh writes its own).
SCONTROL=/usr/bin/scontrol
SLURM_CONF_FILE=/etc/slurm/slurm.conf
PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
unset LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT ENV BASH_ENV CDPATH
SLURM_CONF=$SLURM_CONF_FILE
export SLURM_CONF
[ -n "$SLURM_JOB_ID" ] || exit 0
info=$("$SCONTROL" show job "$SLURM_JOB_ID" 2>/dev/null) || {
  echo "deepshare prolog: job $SLURM_JOB_ID: cannot read the job; start refused" >&2
  exit 1
}
rec=$(printf '%s\n' "$info" | sed -n 's/^ *AdminComment=\(ds:[^ ]*\).*/\1/p' | head -n 1)
[ -n "$rec" ] || exit 0
restarts=${SLURM_JOB_RESTART_COUNT:-$(printf '%s\n' "$info" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p' | head -n 1)}
key() { printf '%s\n' "$rec" | tr ';:' '\n\n' | sed -n "s/^$1=//p" | head -n 1; }
r=$(key r)
if [ -n "$r" ] && [ -n "$(key g)" ] && [ "$r" = "${restarts:-0}" ]; then
  exit 0
fi
echo "deepshare prolog: job $SLURM_JOB_ID run $restarts: not started by DeepShare (pin of run ${r:-none}); start refused" >&2
exit 1
