# Shared by the scripts/k8s/ cluster scripts (sourced; needs BASE). Not a command.

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { [ -f "$BASE/run/$1.pid" ] && cat "$BASE/run/$1.pid" 2>/dev/null; }
# Free = no TCP socket in any state uses it (a connection in TIME_WAIT also blocks a bind).
port_free() { ! ss -Htan "sport = :$1" | grep -q .; }

# sign_cert DIR NAME SUBJECT [EXTENSION...]: DIR/NAME.{key,crt} signed by BASE/pki/ca.
# A server certificate is one with a subjectAltName; any other is a client certificate.
sign_cert() {
  local dir=$1 name=$2 subj=$3 ext
  shift 3
  ext=$(mktemp)
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" "$@" >"$ext"
  grep -q '^subjectAltName' "$ext" && echo "extendedKeyUsage=serverAuth" >>"$ext"
  grep -q '^extendedKeyUsage' "$ext" || echo "extendedKeyUsage=clientAuth" >>"$ext"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$BASE/pki/ca.crt" -CAkey "$BASE/pki/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" \
    -out "$dir/$name.crt" -days 30 -extfile "$ext" 2>/dev/null
  rm -f "$ext" "$dir/$name.csr"
  chmod 600 "$dir/$name.key"
}

# write_kubeconfig FILE USER CERT KEY [embed]: one cluster, one user, one context.
# With `embed` the certificates are inlined (-data fields), else referenced by path.
write_kubeconfig() {
  local file=$1 user=$2 crt=$3 key=$4 embed=${5:-} ca=$BASE/pki/ca.crt api
  api=${API:-$(sed -n 's/^export DS_K8S_API=//p' "$BASE/env.sh" 2>/dev/null)}
  [ -n "$api" ] || { echo "no API address: $BASE/env.sh missing (start-cluster.sh)" >&2; return 1; }
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters:"
    echo "- name: deepshare-test"
    echo "  cluster:"
    echo "    server: $api"
    if [ "$embed" = embed ]; then
      echo "    certificate-authority-data: $(base64 -w0 "$ca")"
    else
      echo "    certificate-authority: $ca"
    fi
    echo "users:"
    echo "- name: $user"
    echo "  user:"
    if [ "$embed" = embed ]; then
      echo "    client-certificate-data: $(base64 -w0 "$crt")"
      echo "    client-key-data: $(base64 -w0 "$key")"
    else
      echo "    client-certificate: $crt"
      echo "    client-key: $key"
    fi
    echo "contexts:"
    echo "- name: $user@deepshare-test"
    echo "  context:"
    echo "    cluster: deepshare-test"
    echo "    user: $user"
    echo "current-context: $user@deepshare-test"
  } >"$file"
  chmod 600 "$file"
}

# client_kubeconfig NAME SUBJECT FILE: a client certificate under pki/ and its kubeconfig.
client_kubeconfig() {
  [ -f "$BASE/pki/$1.crt" ] || sign_cert "$BASE/pki" "$1" "$2"
  write_kubeconfig "$3" "$1" "$BASE/pki/$1.crt" "$BASE/pki/$1.key"
}

# component NAME COMMAND...: writes run/NAME.sh, which runs COMMAND with its log in log/.
component() {
  local name=$1
  shift
  { echo "#!/usr/bin/env bash"
    printf 'exec'; printf ' %q' "$@"; printf ' >>%q 2>&1\n' "$BASE/log/$name.log"; } >"$BASE/run/$name.sh"
  chmod 755 "$BASE/run/$name.sh"
}

# start_component NAME: runs run/NAME.sh in its own session (it outlives the caller, e.g. a
# CTest fixture); its pid goes to run/NAME.pid.
start_component() {
  echo "== start $(date +%T)" >>"$BASE/log/$1.log"
  setsid "$BASE/run/$1.sh" </dev/null >/dev/null 2>&1 &
  echo $! >"$BASE/run/$1.pid"
}

# stop_component NAME [SECONDS]: TERM, then KILL after SECONDS (default 15); by pid file only.
stop_component() {
  local p i
  p=$(pid_of "$1") || return 0
  alive "$p" || { rm -f "$BASE/run/$1.pid"; return 0; }
  kill -TERM "$p" 2>/dev/null
  for i in $(seq 1 $((${2:-15} * 5))); do alive "$p" || break; sleep 0.2; done
  alive "$p" && kill -KILL "$p" 2>/dev/null
  for i in $(seq 1 25); do alive "$p" || break; sleep 0.2; done
  rm -f "$BASE/run/$1.pid"
}

# wait_http NAME URL [CURL ARGS...]: until URL answers 2xx; fails if NAME's process died.
wait_http() {
  local name=$1 url=$2 deadline=$(($(date +%s) + ${READY_TIMEOUT:-120}))
  shift 2
  until curl -sf -o /dev/null --max-time 5 "$@" "$url"; do
    alive "$(pid_of "$name")" || { echo "$name exited (log: $BASE/log/$name.log)" >&2; return 1; }
    [ "$(date +%s)" -lt "$deadline" ] || { echo "$name not ready at $url" >&2; return 1; }
    sleep 0.2
  done
}

# node_json NAME: a Node as a kubelet registers it (status included), for KWOK to manage.
node_json() {
  cat <<JSON
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1",
   "labels": {"kubernetes.io/hostname": "$1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "type": "kwok", "nvidia.com/gpu.count": "$GPUS"},
   "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
 "status": {
   "capacity": {"cpu": "$NODE_CPU", "memory": "$NODE_MEMORY", "pods": "110", "nvidia.com/gpu": "$GPUS"},
   "allocatable": {"cpu": "$NODE_CPU", "memory": "$NODE_MEMORY", "pods": "110", "nvidia.com/gpu": "$GPUS"}}}
JSON
}

# nodes_schedulable: how many of our nodes are Ready and carry no taint.
nodes_schedulable() {
  "$K8SBIN/kubectl" get nodes -o \
    jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.taints}{"\n"}{end}' \
    2>/dev/null | awk -v p="$NODE_PREFIX" 'index($1, p) == 1 && $2 == "True" && NF == 2' | wc -l
}

# rss_total: resident memory of the running components, in MiB (from /proc).
rss_total() {
  local f p kb=0 k
  for f in "$BASE"/run/*.pid; do
    p=$(cat "$f" 2>/dev/null) || continue
    k=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
    kb=$((kb + ${k:-0}))
  done
  echo $((kb / 1024))
}

# write_scheduler_config FILE: kube-scheduler's KubeSchedulerConfiguration (ours) for
# SCHEDULER_PACKING=gpu (score nodes by allocated nvidia.com/gpu, most first: bin-packing,
# as the Kubernetes docs' "resource bin packing" configures it), SCHEDULER_BACKOFF_S and
# SCHEDULER_QPS (its client's rate limit, queries per second, burst twice that; the
# defaults are 50 and 100).
# With --config, the file carries what the deprecated flags would (kubeconfig, leader election).
write_scheduler_config() {
  {
    echo "apiVersion: kubescheduler.config.k8s.io/v1"
    echo "kind: KubeSchedulerConfiguration"
    echo "clientConnection:"
    echo "  kubeconfig: $BASE/run/scheduler.kubeconfig"
    if [ -n "${SCHEDULER_QPS:-}" ]; then
      echo "  qps: $SCHEDULER_QPS"
      echo "  burst: $((SCHEDULER_QPS * 2))"
    fi
    echo "leaderElection:"
    echo "  leaderElect: false"
    if [ -n "${SCHEDULER_BACKOFF_S:-}" ]; then
      echo "podInitialBackoffSeconds: $SCHEDULER_BACKOFF_S"
      echo "podMaxBackoffSeconds: $SCHEDULER_BACKOFF_S"
    fi
    if [ "${SCHEDULER_PACKING:-spread}" = gpu ]; then
      echo "profiles:"
      echo "- schedulerName: default-scheduler"
      echo "  pluginConfig:"
      echo "  - name: NodeResourcesFit"
      echo "    args:"
      echo "      scoringStrategy:"
      echo "        type: MostAllocated"
      echo "        resources:"
      echo "        - {name: nvidia.com/gpu, weight: 1}"
    fi
  } >"$1"
}
