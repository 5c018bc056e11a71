#!/usr/bin/env bash
# Starts a self-contained Slurm 22.05 cluster with fake GPUs on ONE machine, for
# DeepShare's controller tests, replays and local trials (docs/slurm.md).
#
# Assumptions (measured in ../shared/research/slurm-on-one-machine.md):
#  - Debian bookworm packages slurmctld slurmd slurm-client munge (scripts/setup-slurm.sh);
#    must run as root; no systemd, no cgroups, nothing in /etc/slurm or /etc/munge is used.
#  - One munged (own key + socket), one slurmctld and NODES slurmd daemons, all on
#    127.0.0.1; node i is `slurmd -N node$i` listening on its own Port=.
#  - Fake GPUs: `mknod c 195 N` character devices named in gres.conf File= (Slurm then sets
#    CUDA_VISIBLE_DEVICES); GRES gpu plus mps (SHARING=mps, default) or shard.
#  - Fast scheduling (batch_sched_delay=0, sched_interval=1, bf_interval=1, cred_expire=10).
#  - TaskProlog = scripts/slurm/task-prolog.sh: applies DeepShare's GPU pin (job Comment) to
#    the job environment, so DeepShare, not Slurm, decides which GPUs a job uses.
#  - Everything (config, state, logs, pid files, sockets) lives under BASE, which must be
#    short (unix socket paths < 108 bytes). Ports: CTLD_PORT and NODE_PORT_BASE+1..NODES;
#    when CTLD_PORT is not given a free block between 20000 and the ephemeral port range
#    (ip_local_port_range) is picked.
#
# Usage:  BASE=$(mktemp -d /tmp/dss.XXXX) NODES=4 GPUS=4 scripts/slurm/start-cluster.sh
# Then:   source $BASE/env.sh      (SLURM_CONF for sbatch/squeue/scontrol/libslurm)
# Stop:   BASE=$BASE scripts/slurm/stop-cluster.sh [--purge]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE to a short empty folder, e.g. BASE=\$(mktemp -d /tmp/dss.XXXX)}"
NODES=${NODES:-4}
GPUS=${GPUS:-4}
CPUS=${CPUS:-64}
MEM=${MEM:-256000}
SHARING=${SHARING:-mps}           # mps | shard | none
MPS_PER_GPU=${MPS_PER_GPU:-100}
SHARDS_PER_GPU=${SHARDS_PER_GPU:-4}
SCHED_PARAMS=${SCHED_PARAMS-batch_sched_delay=0,sched_interval=1,bf_interval=1}
CRED_EXPIRE=${CRED_EXPIRE:-10}
CLUSTER=${CLUSTER:-dstest}
READY_TIMEOUT=${READY_TIMEOUT:-60}
EXTRA_CONF=${EXTRA_CONF:-}

[ "$(id -u)" = 0 ] || { echo "start-cluster.sh: must run as root" >&2; exit 1; }
for b in munged mungekey slurmctld slurmd sinfo scontrol ss; do
  command -v $b >/dev/null || { echo "start-cluster.sh: missing $b (run scripts/setup-slurm.sh)" >&2; exit 1; }
done
longest="$BASE/spool/node$NODES/node${NODES}_4294967295.4294967291"
[ ${#longest} -lt 108 ] || { echo "start-cluster.sh: BASE too long for unix sockets: $BASE" >&2; exit 1; }
for f in "$BASE"/ctld/*.pid "$BASE"/spool/*.pid "$BASE"/munge/*.pid; do
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "start-cluster.sh: a cluster already runs in $BASE" >&2; exit 1
  fi
done

# Free = no TCP socket in any state uses it (a client connection in TIME_WAIT also blocks a bind).
port_free() { ! ss -Htan "sport = :$1" | grep -q .; }
block_free() { # $1 = controller port; node ports follow at +100
  port_free "$1" || return 1
  for i in $(seq 1 "$NODES"); do port_free $(($1 + 100 + i)) || return 1; done
}
if [ -z "${CTLD_PORT:-}" ]; then
  # Below the kernel's ephemeral range (client ports: a block there can be taken between
  # this check and the daemons' bind, as seen in a test run).
  eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  blocks=$(((eph - 20000 - 200) / 100))
  [ "$blocks" -ge 10 ] || blocks=10
  for _ in $(seq 1 50); do
    c=$((20000 + (RANDOM % blocks) * 100)); block_free "$c" && { CTLD_PORT=$c; break; }
  done
  : "${CTLD_PORT:?no free port block found}"
fi
NODE_PORT_BASE=${NODE_PORT_BASE:-$((CTLD_PORT + 100))}
for p in $CTLD_PORT $(seq $((NODE_PORT_BASE + 1)) $((NODE_PORT_BASE + NODES))); do
  port_free "$p" || { echo "start-cluster.sh: TCP port $p is in use" >&2; exit 1; }
done

on_fail() {
  set +e; trap - ERR
  echo "start-cluster.sh failed; last log lines:" >&2
  tail -n 5 "$BASE"/log/*.log >&2 2>/dev/null
  [ "${KEEP_ON_FAIL:-0}" = 1 ] || BASE="$BASE" "$HERE/stop-cluster.sh" >&2
  exit 1
}
trap on_fail ERR

mkdir -p "$BASE"/{etc,log,state,ctld,dev,munge,spool,jobout}
rm -rf "$BASE"/state/* "$BASE"/spool/*
chmod 755 "$BASE"; chmod 700 "$BASE/munge"; chmod 1777 "$BASE/jobout"

# munge: private key and socket
[ -f "$BASE/munge/munge.key" ] || mungekey -c -k "$BASE/munge/munge.key" -b 1024
munged -f --num-threads=10 --socket="$BASE/munge/munge.sock" --key-file="$BASE/munge/munge.key" \
  --log-file="$BASE/log/munged.log" --pid-file="$BASE/munge/munged.pid" --seed-file="$BASE/munge/munged.seed"
chmod 755 "$BASE/munge"   # clients need to reach the socket; the key stays 600

last=$((GPUS - 1))
for i in $(seq 0 $last); do [ -e "$BASE/dev/nvidia$i" ] || mknod "$BASE/dev/nvidia$i" c 195 "$i"; done
install -m 755 "$HERE/task-prolog.sh" "$BASE/etc/task-prolog.sh"

case $SHARING in
  mps)   GRESTYPES=gpu,mps;   NODEGRES="gpu:$GPUS,mps:$((GPUS * MPS_PER_GPU))";;
  shard) GRESTYPES=gpu,shard; NODEGRES="gpu:$GPUS,shard:$((GPUS * SHARDS_PER_GPU))";;
  none)  GRESTYPES=gpu;       NODEGRES="gpu:$GPUS";;
  *) echo "SHARING must be mps|shard|none" >&2; exit 1;;
esac
cat > "$BASE/etc/slurm.conf" <<CONF
ClusterName=$CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$BASE/munge/munge.sock,cred_expire=$CRED_EXPIRE
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/ctld/slurmctld.pid
SlurmdPidFile=$BASE/spool/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
TaskProlog=$BASE/etc/task-prolog.sh
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
SchedulerType=sched/backfill
${SCHED_PARAMS:+SchedulerParameters=$SCHED_PARAMS}
SlurmdParameters=config_overrides
ReturnToService=1
SlurmdTimeout=10
KillWait=2
MinJobAge=3600
MaxJobCount=100000
JobRequeue=1
PreemptMode=OFF
PreemptType=preempt/none
GresTypes=$GRESTYPES
AccountingStorageType=accounting_storage/none
CONF
for i in $(seq 1 "$NODES"); do
  echo "NodeName=node$i NodeAddr=127.0.0.1 NodeHostname=localhost Port=$((NODE_PORT_BASE + i)) CPUs=$CPUS RealMemory=$MEM Gres=$NODEGRES State=UNKNOWN" >> "$BASE/etc/slurm.conf"
done
echo "PartitionName=batch Nodes=node[1-$NODES] Default=YES MaxTime=INFINITE State=UP" >> "$BASE/etc/slurm.conf"
[ -n "$EXTRA_CONF" ] && cat "$EXTRA_CONF" >> "$BASE/etc/slurm.conf"
{
  echo "NodeName=node[1-$NODES] Name=gpu File=$BASE/dev/nvidia[0-$last]"
  for i in $(seq 0 $last); do
    case $SHARING in
      mps)   echo "NodeName=node[1-$NODES] Name=mps Count=$MPS_PER_GPU File=$BASE/dev/nvidia$i";;
      shard) echo "NodeName=node[1-$NODES] Name=shard Count=$SHARDS_PER_GPU File=$BASE/dev/nvidia$i";;
    esac
  done
} > "$BASE/etc/gres.conf"
{
  echo "export SLURM_CONF=$BASE/etc/slurm.conf"
  echo "export DS_SLURM_BASE=$BASE"
  echo "export DS_SLURM_NODES=$NODES"
} > "$BASE/env.sh"
export SLURM_CONF=$BASE/etc/slurm.conf

slurmctld -f "$SLURM_CONF"
for i in $(seq 1 "$NODES"); do
  mkdir -p "$BASE/spool/node$i"
  slurmd -f "$SLURM_CONF" -N "node$i"
done
deadline=$(($(date +%s) + READY_TIMEOUT))
while :; do
  nidle=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2=="idle"' | sort -u | wc -l)
  [ "$nidle" -eq "$NODES" ] && break
  [ "$(date +%s)" -lt "$deadline" ] || { echo "cluster not ready after ${READY_TIMEOUT}s" >&2; false; }
  sleep 0.1
done
trap - ERR
echo "slurm cluster up: $NODES nodes x gpu:$GPUS (sharing=$SHARING), slurmctld 127.0.0.1:$CTLD_PORT, in $BASE"
