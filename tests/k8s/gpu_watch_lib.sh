# Shared by the tests of tests/k8s (sourced, not a command): checks, from the API's own record
# of every pod, that no node ever had more nvidia.com/gpu bound than it has.
#
# gpu_watch_check WATCH NODES_JSON [MANAGED]
#   WATCH       the output of `kubectl get pods -A --watch --output-watch-events -o json`, kept
#               for the whole run (the changes in the order the API server sent them)
#   NODES_JSON  `kubectl get nodes -o json` (allocatable nvidia.com/gpu per node)
#   MANAGED     optional, namespaces separated by commas whose GPU pods only DeepShare may place
# Replays the watch in order: the GPUs bound per node to pods that have not ended (a pod being
# deleted still holds them, as the kubelet does), against the node's allocatable. Prints
#   peak nvidia.com/gpu bound per node: NODE=N ...
#   pods bound by DeepShare: N, evicted through the Eviction API: M
#   OVER NODE: SUM > ALLOCATABLE at NS/NAME EVENT    a node over its nvidia.com/gpu
#   UNDECIDED NS/NAME      bound by DeepShare without its decision (deepshare.io/gpus) for that node
#   BYPASS NS/NAME SCHED   a GPU pod (nvidia.com/gpu or DRA claims) of a MANAGED namespace bound
#                          by another scheduler (or preset)
# and returns 1 when any OVER, UNDECIDED or BYPASS line was printed.
gpu_watch_check() {
  local watch=$1 nodes=$2 managed=${3:-} report
  report=$(jq -rs --slurpfile nodes "$nodes" --arg managed "$managed" '
  ($nodes[0].items | map({key: .metadata.name, value: (.status.allocatable["nvidia.com/gpu"] // "0" | tonumber)})
   | from_entries) as $cap
  | ($managed | split(",") | map(select(. != ""))) as $managed
  | reduce .[] as $e ({held: {}, peak: {}, over: [], evicted: {}, undecided: {}, bound: {}, bypass: {}};
      ($e.object) as $p | ($p.metadata.uid) as $u | ($p.spec.nodeName // "") as $n
      | ([$p.spec.containers[].resources | .limits["nvidia.com/gpu"] // .requests["nvidia.com/gpu"] // "0"
          | tonumber] | add) as $g
      | .held[$u] = (if $e.type == "DELETED" or $n == "" or $p.status.phase == "Succeeded"
                       or $p.status.phase == "Failed" then null else {node: $n, gpus: $g} end)
      | if any($p.status.conditions[]?; .type == "DisruptionTarget" and .reason == "EvictionByEvictionAPI")
        then .evicted[$u] = true else . end
      | if $n != "" and $p.spec.schedulerName == "deepshare" then
          .bound[$u] = true
          | (if (($p.metadata.annotations["deepshare.io/gpus"] // "") | startswith($n + ":")) then .
             else .undecided[$u] = ($p.metadata.namespace + "/" + $p.metadata.name) end)
        else . end
      | if $n != "" and ($g > 0 or (($p.spec.resourceClaims // []) | length) > 0)
           and ($p.spec.schedulerName != "deepshare")
           and ($managed | index($p.metadata.namespace)) != null
        then .bypass[$u] = ($p.metadata.namespace + "/" + $p.metadata.name + " " + $p.spec.schedulerName)
        else . end
      | if $n == "" then . else
          ([.held[] | select(. != null and .node == $n) | .gpus] | add // 0) as $sum
          | .peak[$n] = ([(.peak[$n] // 0), $sum] | max)
          | if $sum > ($cap[$n] // 0) then .over += ["\($n): \($sum) > \($cap[$n] // 0) at \($p.metadata.namespace)/\($p.metadata.name) \($e.type)"] else . end
        end)
  | "peak nvidia.com/gpu bound per node: \(.peak | to_entries | map("\(.key)=\(.value)") | join(" "))",
    "pods bound by DeepShare: \(.bound | length), evicted through the Eviction API: \(.evicted | length)",
    (.over[] | "OVER " + .),
    (.undecided | to_entries[] | "UNDECIDED " + .value),
    (.bypass | to_entries[] | "BYPASS " + .value)' "$watch") || { echo "gpu_watch_check: cannot read $watch"; return 1; }
  echo "$report"
  ! grep -qE '^(OVER|UNDECIDED|BYPASS) ' <<<"$report"
}
