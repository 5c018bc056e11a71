# Shared by the tests of tests/k8s that publish GPUs as DRA devices (sourced, not a command;
# kubectl and jq on PATH, a cluster with a KWOK node gpu-node-1 to copy):
#
# dra_node NAME COUNT [shareable]
#   A KWOK node NAME without nvidia.com/gpu (a copy of gpu-node-1's registration) and the
#   ResourceSlice a GPU driver (gpu.nvidia.com) would publish for it: COUNT devices gpu-0...,
#   each with its `index` attribute; `shareable`: each device allows several allocations
#   (allowMultipleAllocations: two claims may hold it, as for MPS).
# gpu_device_class [CONFIG_JSON]
#   The DeviceClass gpu.nvidia.com (the driver's devices), with CONFIG_JSON as its opaque
#   configuration for the driver when given (e.g. its sharing settings).
dra_node() {
  local name=$1 count=$2 multi=false
  [ "${3:-}" = shareable ] && multi=true
  kubectl get node gpu-node-1 -o json | jq --arg n "$name" '.metadata = {name: $n,
      labels: (.metadata.labels + {"kubernetes.io/hostname": $n} | del(.["nvidia.com/gpu.count"])),
      annotations: .metadata.annotations} | .spec = {}
    | del(.status.capacity["nvidia.com/gpu"], .status.allocatable["nvidia.com/gpu"], .status.conditions)' |
    kubectl create -f - >/dev/null || return 1
  jq -n --arg n "$name" --argjson c "$count" --argjson m "$multi" '{apiVersion: "resource.k8s.io/v1",
    kind: "ResourceSlice", metadata: {name: ($n + "-gpus")},
    spec: {driver: "gpu.nvidia.com", nodeName: $n, pool: {name: $n, generation: 1, resourceSliceCount: 1},
      devices: [range($c) | {name: "gpu-\(.)", attributes: {index: {int: .}}}
                + (if $m then {allowMultipleAllocations: true} else {} end)]}}' |
    kubectl create -f - >/dev/null
}
gpu_device_class() {
  jq -n --argjson cfg "${1:-null}" '{apiVersion: "resource.k8s.io/v1", kind: "DeviceClass",
    metadata: {name: "gpu.nvidia.com"},
    spec: ({selectors: [{cel: {expression: "device.driver == \"gpu.nvidia.com\""}}]}
      + (if $cfg == null then {} else {config: [{opaque: {driver: "gpu.nvidia.com", parameters: $cfg}}]} end))}' |
    kubectl create -f - >/dev/null
}
