# The Kubernetes tests' check of the API's own record (source it; needs jq):
#   gpu_watch_check WATCH NODES_JSON [SCHEDULER]
# WATCH: the output of `kubectl get pods -A --watch --output-watch-events -o json`, kept for
# the whole run (every change of every pod, in the order the API server sent them);
# NODES_JSON: `kubectl get nodes -o json` (allocatable nvidia.com/gpu per node); SCHEDULER:
# the schedulerName whose bindings are counted (default deepshare).
# The watch is replayed in order: the GPUs bound per node to pods that have not ended (a pod
# being deleted still holds them, as the kubelet does) against the node's allocatable.
# Prints, one per line:
#   peak nvidia.com/gpu bound per node: NODE=N ...
#   pods bound by SCHEDULER: N, evicted through the Eviction API: M
#   OVER NODE: SUM > ALLOCATABLE at NS/POD EVENT     (each moment a node was over)
#   UNDECIDED NS/POD      (bound by SCHEDULER without deepshare.io/gpus naming its node)
# Returns 1 when a line OVER or UNDECIDED was printed, 2 when the watch cannot be read.
gpu_watch_check() {
  local watch=$1 nodes=$2 scheduler=${3:-deepshare} out
  out=$(jq -rs --slurpfile nodes "$nodes" --arg sched "$scheduler" '
  ($nodes[0].items | map({key: .metadata.name, value: (.status.allocatable["nvidia.com/gpu"] // "0" | tonumber)})
   | from_entries) as $cap
  | reduce .[] as $e ({held: {}, peak: {}, over: [], evicted: {}, undecided: {}, bound: {}};
      ($e.object) as $p | ($p.metadata.uid) as $u | ($p.spec.nodeName // "") as $n
      | ([$p.spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add) as $g
      | .held[$u] = (if $e.type == "DELETED" or $n == "" or $p.status.phase == "Succeeded"
                       or $p.status.phase == "Failed" then null else {node: $n, gpus: $g} end)
      | if any($p.status.conditions[]?; .type == "DisruptionTarget" and .reason == "EvictionByEvictionAPI")
        then .evicted[$u] = true else . end
      | if $n != "" and $p.spec.schedulerName == $sched then
          .bound[$u] = true
          | (if (($p.metadata.annotations["deepshare.io/gpus"] // "") | startswith($n + ":")) then .
             else .undecided[$u] = ($p.metadata.namespace + "/" + $p.metadata.name) end)
        else . end
      | if $n == "" then . else
          ([.held[] | select(. != null and .node == $n) | .gpus] | add // 0) as $sum
          | .peak[$n] = ([(.peak[$n] // 0), $sum] | max)
          | if $sum > ($cap[$n] // 0) then .over += ["\($n): \($sum) > \($cap[$n] // 0) at \($p.metadata.namespace)/\($p.metadata.name) \($e.type)"] else . end
        end)
  | "peak nvidia.com/gpu bound per node: \(.peak | to_entries | map("\(.key)=\(.value)") | join(" "))",
    "pods bound by \($sched): \(.bound | length), evicted through the Eviction API: \(.evicted | length)",
    (.over[] | "OVER " + .),
    (.undecided | to_entries[] | "UNDECIDED " + .value)' "$watch") || return 2
  printf '%s\n' "$out"
  ! printf '%s\n' "$out" | grep -q '^\(OVER\|UNDECIDED\) '
}
