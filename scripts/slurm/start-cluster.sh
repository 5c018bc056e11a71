#!/usr/bin/env bash
# Starts a self-contained Slurm 22.05 cluster with fake GPUs on ONE machine, for
# DeepShare's controller tests, replays and local trials (docs/slurm.md §5).
#
# Assumptions (measured in ../shared/research/slurm-on-one-machine.md):
#  - Debian bookworm packages (scripts/setup-slurm.sh); must run as root; no systemd, no
#    cgroups; nothing in /etc/slurm, /etc/munge or /etc/mysql is used.
#  - One munged (own key + socket), one slurmctld and NODES slurmd daemons, all on
#    127.0.0.1; node i is `slurmd -N node$i` listening on its own Port=.
#  - Fake GPUs: `mknod c 195 N` character devices named in gres.conf File=. DeepShare's GPU
#    layout (docs/slurm.md §2): one gres/gpu type per GPU index (g0..gN, so that DeepShare
#    can ask Slurm for exactly the GPUs it chose) and, with SHARING=slot, one gpushare slot
#    per GPU (the GRES a job colocated on another job's GPU holds).
#  - GATE=1: DeepShare's submission gate (deploy/slurm/job_submit.lua, JobSubmitPlugins=lua)
#    TaskProlog (deploy/slurm/task-prolog.sh) and PrologSlurmctld (deploy/slurm/prolog-slurmctld.sh:
#    only DeepShare starts a job of its partition) for partition DS_PARTITION.
#  - ACCOUNTING=1: a private MariaDB and slurmdbd, AccountingStorageEnforce=associations;
#    ACCOUNTS="alpha:8,beta:8,scav:0" creates those accounts with GrpTRES=gres/gpu=N and
#    associates root with them; tests add their own users.
#  - OTHER_PARTITION=NAME [OTHER_NODES=node[3-4]]: a second, non-DeepShare partition on
#    (some of) the same nodes.
#  - NODE_FEATURES="a100 a100 v100 v100": Slurm Features of node1, node2, ... ('-': none), e.g.
#    GPU models (the controller's gpu_models reads them; docs/slurm.md "GPU models"). GPU_MODEL
#    (default a100) is the gate's gpu_model list, e.g. "a100, v100".
#  - NODE_CPUS="8 8 64 64", NODE_MEMORY="16000 16000 64000 64000": CPUs and RealMemory (MiB)
#    of node1, node2, ... ('-' or missing: CPUS, MEM), e.g. for jobs only some nodes can hold
#    (docs/slurm.md "What Slurm must also find on a node"); NODE_TMP="50000 50000 400000 -":
#    their TmpDisk (MiB; '-' or missing: not set).
#  - Fast scheduling (batch_sched_delay=0, sched_interval=1, bf_interval=1, cred_expire=10).
#  - GRES_LAYOUT=index (default: DeepShare's one type per GPU index, above) or plain (a stock
#    site's `Name=gpu File=.../nvidia[0-N]`, no types, no gpushare: native Slurm runs,
#    deploy/slurm/native/). PARTITION_OPTS: more options for the DS_PARTITION line (e.g.
#    TRESBillingWeights="GRES/gpu=1.0"). EXTRA_CONF: a file appended to slurm.conf; a key it
#    sets replaces this script's own line for that key (PreemptType, SchedulerParameters...).
#  - Everything (config, state, logs, pid files, sockets, database) lives under BASE, which
#    must be short (unix socket paths < 108 bytes). Ports: CTLD_PORT (+1 slurmdbd, +2
#    MariaDB) and NODE_PORT_BASE+1..NODES; without CTLD_PORT a free block between 20000 and
#    the ephemeral port range (ip_local_port_range) is picked.
#
# Usage:  BASE=$(mktemp -d /tmp/dss.XXXX) NODES=4 GPUS=4 scripts/slurm/start-cluster.sh
# Then:   source $BASE/env.sh      (SLURM_CONF for sbatch/squeue/scontrol/libslurm)
# Stop:   BASE=$BASE scripts/slurm/stop-cluster.sh [--purge]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DEPLOY=$(cd "$HERE/../../deploy/slurm" && pwd)
: "${BASE:?set BASE to a short empty folder, e.g. BASE=\$(mktemp -d /tmp/dss.XXXX)}"
NODES=${NODES:-4}
GPUS=${GPUS:-4}
CPUS=${CPUS:-64}
MEM=${MEM:-256000}
SHARING=${SHARING:-slot}          # slot | none
GRES_LAYOUT=${GRES_LAYOUT:-index} # index | plain
PARTITION_OPTS=${PARTITION_OPTS:-}
GPU_MODEL=${GPU_MODEL:-a100}      # what users may write in --gres=gpu:MODEL:N
NODE_FEATURES=${NODE_FEATURES:-}  # per node, space-separated ('-': none)
NODE_CPUS=${NODE_CPUS:-}          # per node, space-separated ('-': CPUS)
NODE_MEMORY=${NODE_MEMORY:-}      # per node, space-separated ('-': MEM)
NODE_TMP=${NODE_TMP:-}            # TmpDisk (MiB) per node, space-separated ('-': none)
GATE=${GATE:-1}
DS_PARTITION=${DS_PARTITION:-batch}
OTHER_PARTITION=${OTHER_PARTITION:-}
OTHER_NODES=${OTHER_NODES:-node[1-$NODES]}
ACCOUNTING=${ACCOUNTING:-0}
ACCOUNTS=${ACCOUNTS:-}
KILL_WAIT=${KILL_WAIT:-2}
SCHED_PARAMS=${SCHED_PARAMS-batch_sched_delay=0,sched_interval=1,bf_interval=1}
CRED_EXPIRE=${CRED_EXPIRE:-10}
CLUSTER=${CLUSTER:-dstest}
READY_TIMEOUT=${READY_TIMEOUT:-60}
EXTRA_CONF=${EXTRA_CONF:-}

[ "$(id -u)" = 0 ] || { echo "start-cluster.sh: must run as root" >&2; exit 1; }
need="munged mungekey slurmctld slurmd sinfo scontrol ss"
[ "$ACCOUNTING" = 1 ] && need="$need slurmdbd sacctmgr mariadbd mariadb-install-db mariadb-admin"
for b in $need; do
  command -v $b >/dev/null || { echo "start-cluster.sh: missing $b (run scripts/setup-slurm.sh)" >&2; exit 1; }
done
[ "$GATE" = 0 ] || [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/job_submit_lua.so ] ||
  { echo "start-cluster.sh: job_submit_lua.so missing (slurm-wlm-basic-plugins)" >&2; exit 1; }
longest="$BASE/spool/node$NODES/node${NODES}_4294967295.4294967291"
[ ${#longest} -lt 108 ] || { echo "start-cluster.sh: BASE too long for unix sockets: $BASE" >&2; exit 1; }
for f in "$BASE"/ctld/*.pid "$BASE"/spool/*.pid "$BASE"/munge/*.pid "$BASE"/db/*.pid; do
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "start-cluster.sh: a cluster already runs in $BASE" >&2; exit 1
  fi
done

# Free = no TCP socket in any state uses it (a client connection in TIME_WAIT also blocks a bind).
port_free() { ! ss -Htan "sport = :$1" | grep -q .; }
block_free() { # $1 = controller port; +1 slurmdbd, +2 MariaDB; node ports follow at +100
  for p in "$1" $(($1 + 1)) $(($1 + 2)); do port_free "$p" || return 1; done
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
DBD_PORT=$((CTLD_PORT + 1))
DB_PORT=$((CTLD_PORT + 2))
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
chmod 755 "$BASE" "$BASE/etc"; chmod 700 "$BASE/munge"; chmod 1777 "$BASE/jobout"

# munge: private key and socket
[ -f "$BASE/munge/munge.key" ] || mungekey -c -k "$BASE/munge/munge.key" -b 1024
munged -f --num-threads=10 --socket="$BASE/munge/munge.sock" --key-file="$BASE/munge/munge.key" \
  --log-file="$BASE/log/munged.log" --pid-file="$BASE/munge/munged.pid" --seed-file="$BASE/munge/munged.seed"
chmod 755 "$BASE/munge"   # clients need to reach the socket; the key stays 600

last=$((GPUS - 1))
for i in $(seq 0 $last); do [ -e "$BASE/dev/nvidia$i" ] || mknod "$BASE/dev/nvidia$i" c 195 "$i"; done

# accounting: private MariaDB + slurmdbd
if [ "$ACCOUNTING" = 1 ]; then
  mkdir -p "$BASE/db"
  mariadb-install-db --no-defaults --datadir="$BASE/db/data" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >"$BASE/log/mariadb-install.log" 2>&1
  # setsid + background: mariadbd does not daemonize itself
  setsid mariadbd --no-defaults --datadir="$BASE/db/data" --user=root --socket="$BASE/db/mysqld.sock" \
    --port="$DB_PORT" --bind-address=127.0.0.1 --pid-file="$BASE/db/mysqld.pid" \
    --log-error="$BASE/log/mariadb.log" --innodb-buffer-pool-size=32M --skip-name-resolve \
    --innodb-log-file-size=16M </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 300); do
    mariadb-admin --no-defaults --socket="$BASE/db/mysqld.sock" ping >/dev/null 2>&1 && break; sleep 0.1
  done
  mariadb --no-defaults --socket="$BASE/db/mysqld.sock" -uroot -e \
    "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'dstest'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  cat > "$BASE/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$BASE/munge/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$BASE/log/slurmdbd.log
PidFile=$BASE/ctld/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=dstest
StorageLoc=slurm_acct_db
CONF
  chmod 600 "$BASE/etc/slurmdbd.conf"
fi

case $GRES_LAYOUT in
  index|plain) ;;
  *) echo "GRES_LAYOUT must be index|plain" >&2; exit 1 ;;
esac
[ "$GRES_LAYOUT" = plain ] && SHARING=none
case $SHARING in
  slot) GRESTYPES=gpu,gpushare ;;
  none) GRESTYPES=gpu ;;
  *) echo "SHARING must be slot|none" >&2; exit 1 ;;
esac
if [ "$GRES_LAYOUT" = plain ]; then
  NODEGRES=gpu:$GPUS
else
  NODEGRES=$(for i in $(seq 0 $last); do
    printf 'gpu:g%d:1,' "$i"
    [ "$SHARING" = slot ] && printf 'gpushare:g%d:1,' "$i"
  done)
  NODEGRES=${NODEGRES%,}
fi
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
KillWait=$KILL_WAIT
MinJobAge=3600
MaxJobCount=100000
JobRequeue=1
PreemptMode=OFF
PreemptType=preempt/none
GresTypes=$GRESTYPES
CONF
if [ "$GATE" = 1 ]; then
  install -m 644 "$DEPLOY/job_submit.lua" "$BASE/etc/job_submit.lua"
  # the installed prolog names this cluster's slurm.conf and scontrol (it trusts no job env)
  sed -e "s|^SLURM_CONF_FILE=.*|SLURM_CONF_FILE=$BASE/etc/slurm.conf|" \
    -e "s|^SCONTROL=.*|SCONTROL=$(command -v scontrol)|" "$DEPLOY/task-prolog.sh" > "$BASE/etc/task-prolog.sh"
  chmod 755 "$BASE/etc/task-prolog.sh"
  sed -e "s|^SLURM_CONF_FILE=.*|SLURM_CONF_FILE=$BASE/etc/slurm.conf|" \
    -e "s|^SCONTROL=.*|SCONTROL=$(command -v scontrol)|" "$DEPLOY/prolog-slurmctld.sh" > "$BASE/etc/prolog-slurmctld.sh"
  chmod 755 "$BASE/etc/prolog-slurmctld.sh"
  cat > "$BASE/etc/deepshare_gate.conf" <<CONF
partitions = $DS_PARTITION
gpus_per_node = $GPUS
gpu_model = $GPU_MODEL
gpu_memory_mib = 24576
max_gpus = $((NODES * GPUS))
operators = 0
require_association = $([ "$ACCOUNTING" = 1 ] && echo yes || echo no)
CONF
  printf 'JobSubmitPlugins=lua\nTaskProlog=%s\nPrologSlurmctld=%s\n' "$BASE/etc/task-prolog.sh" \
    "$BASE/etc/prolog-slurmctld.sh" >> "$BASE/etc/slurm.conf"
fi
if [ "$ACCOUNTING" = 1 ]; then
  cat >> "$BASE/etc/slurm.conf" <<CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$BASE/munge/munge.sock
AccountingStorageTRES=$(echo "$GRESTYPES" | sed 's/[a-z]*/gres\/&/g')
AccountingStorageEnforce=associations
CONF
else
  echo "AccountingStorageType=accounting_storage/none" >> "$BASE/etc/slurm.conf"
fi
read -r -a features <<< "$NODE_FEATURES"
read -r -a node_cpus <<< "$NODE_CPUS"
read -r -a node_mem <<< "$NODE_MEMORY"
read -r -a node_tmp <<< "$NODE_TMP"
for i in $(seq 1 "$NODES"); do
  f=${features[$((i - 1))]:--}
  c=${node_cpus[$((i - 1))]:--}; [ "$c" = - ] && c=$CPUS
  m=${node_mem[$((i - 1))]:--}; [ "$m" = - ] && m=$MEM
  t=${node_tmp[$((i - 1))]:--}
  echo "NodeName=node$i NodeAddr=127.0.0.1 NodeHostname=localhost Port=$((NODE_PORT_BASE + i)) CPUs=$c RealMemory=$m$([ "$t" = - ] || echo " TmpDisk=$t") Gres=$NODEGRES$([ "$f" = - ] || echo " Features=$f") State=UNKNOWN" >> "$BASE/etc/slurm.conf"
done
echo "PartitionName=$DS_PARTITION Nodes=node[1-$NODES] Default=YES MaxTime=INFINITE State=UP${PARTITION_OPTS:+ $PARTITION_OPTS}" >> "$BASE/etc/slurm.conf"
[ -n "$OTHER_PARTITION" ] && echo "PartitionName=$OTHER_PARTITION Nodes=$OTHER_NODES MaxTime=INFINITE State=UP" >> "$BASE/etc/slurm.conf"
if [ -n "$EXTRA_CONF" ]; then
  # Its keys replace this script's lines (slurmctld takes the last of repeated keys, but logs
  # an error for each).
  for key in $(sed -n 's/^\([A-Za-z]*\)=.*/\1/p' "$EXTRA_CONF"); do
    sed -i "/^$key=/d" "$BASE/etc/slurm.conf"
  done
  cat "$EXTRA_CONF" >> "$BASE/etc/slurm.conf"
fi
{
  if [ "$GRES_LAYOUT" = plain ]; then
    echo "NodeName=node[1-$NODES] Name=gpu File=$BASE/dev/nvidia[0-$last]"
  else for i in $(seq 0 $last); do
    echo "NodeName=node[1-$NODES] Name=gpu Type=g$i File=$BASE/dev/nvidia$i"
    [ "$SHARING" = slot ] && echo "NodeName=node[1-$NODES] Name=gpushare Type=g$i File=$BASE/dev/nvidia$i"
  done; fi
} > "$BASE/etc/gres.conf"
{
  echo "export SLURM_CONF=$BASE/etc/slurm.conf"
  echo "export DS_SLURM_BASE=$BASE"
  echo "export DS_SLURM_NODES=$NODES"
  echo "export DS_SLURM_CLUSTER=$CLUSTER"
} > "$BASE/env.sh"
export SLURM_CONF=$BASE/etc/slurm.conf

if [ "$ACCOUNTING" = 1 ]; then
  slurmdbd   # finds slurmdbd.conf next to $SLURM_CONF
  for _ in $(seq 1 150); do ss -Hltn "sport = :$DBD_PORT" | grep -q . && break; sleep 0.1; done
  sacctmgr -i add cluster "$CLUSTER" >/dev/null
fi
slurmctld -f "$SLURM_CONF"
if [ "$ACCOUNTING" = 1 ] && [ -n "$ACCOUNTS" ]; then
  # GrpTRES=gres/gpu needs the TRES, which slurmctld registers from AccountingStorageTRES
  for _ in $(seq 1 150); do
    sacctmgr -nP show tres 2>/dev/null | grep -q '^gres|gpu|' && break; sleep 0.1
  done
  for a in ${ACCOUNTS//,/ }; do
    sacctmgr -i add account "${a%%:*}" Cluster="$CLUSTER" GrpTRES=gres/gpu="${a##*:}" >/dev/null
  done
  accts=$(for a in ${ACCOUNTS//,/ }; do printf '%s,' "${a%%:*}"; done)
  sacctmgr -i add user root Account="${accts%,}" Cluster="$CLUSTER" >/dev/null
fi
for i in $(seq 1 "$NODES"); do
  mkdir -p "$BASE/spool/node$i"
  slurmd -f "$SLURM_CONF" -N "node$i"
done
deadline=$(($(date +%s) + READY_TIMEOUT))
while :; do
  nidle=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2=="idle"{print $1}' | sort -u | wc -l)
  [ "$nidle" -eq "$NODES" ] && break
  [ "$(date +%s)" -lt "$deadline" ] || { echo "cluster not ready after ${READY_TIMEOUT}s" >&2; false; }
  sleep 0.1
done
trap - ERR
echo "slurm cluster up: $NODES nodes x $GPUS GPUs (sharing=$SHARING, gate=$GATE, accounting=$ACCOUNTING), slurmctld 127.0.0.1:$CTLD_PORT, in $BASE"
