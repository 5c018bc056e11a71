// The cluster file: a YAML description of nodes and tenants that replaces whatever an importer
// derived from a trace (--cluster FILE). docs/formats.md, "Cluster file", documents it.
//
//   nodes:
//     - {count: 16, gpus: 8, gpu_memory_gib: 24, gpu_type: A100, tenant: teamA}
//   tenants:
//     - {name: teamA, quota_gpus: 64, slo_queue_s: 300, class: guaranteed, weight: 1,
//        checkpoint_interval_s: 1800, max_slowdown: 1.5}
//     - {name: teamA-nlp, parent: teamA, quota_gpus: 16}    # a tenant tree
//
// Assumptions:
//  1. Both lists are required and non-empty. A node group needs count (>= 1) and gpus
//     (1..64); gpu_memory_gib (default 24), gpu_type (default ""), tenant (the owner VC;
//     default: shared pool) and name (node-name prefix) are optional. Nodes are named
//     <name><k>, else <tenant>-n<k>, else node<k>, k counted per prefix.
//     Optional `gpu_types: [{name, memory_gib}]` lists the GPU models of a heterogeneous
//     cluster once: every group's gpu_type must then be one of them, and its memory is the
//     model's (a gpu_memory_gib that differs is an error).
//  2. A tenant needs name and quota_gpus; the other keys default to the Tenant defaults.
//     class is "guaranteed" or "best-effort". `parent` (a tenant of the list, before or
//     after it) makes tenants a tree: a parent's quota_gpus is the guarantee of its whole
//     subtree, a sub-tenant may leave quota_gpus out (it shares its parent's), and the tree is
//     resolved into each tenant's own guarantee (model/tenant_tree.hpp); guarantees that do not
//     fit their parent or the cluster are reported in ClusterSpec::problems (and as notes).
//  3. Unknown or repeated keys are errors (a typo must not pass silently). Every error names
//     the file, line and column and the key.
//  4. Applying it: tenants and nodes are replaced, and each job's tenant is remapped by name;
//     a job whose tenant the file does not define is an error naming the tenant and the file.
//     Tenants of the trace without jobs may be left out of the file.
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"

namespace ds {

struct ClusterSpec {
  Cluster cluster;
  std::vector<Tenant> tenants;
  std::vector<std::string> problems;  // guarantees that do not fit (tenant_tree.hpp)
};

// Reads and validates a cluster file; throws InputError.
ClusterSpec read_cluster_file(const std::string& path);
// Same, from text; `name` is used in messages.
ClusterSpec parse_cluster_yaml(const std::string& name, const std::string& text);

// Replaces w's tenants and nodes by `spec`, remapping jobs' tenants by name; `name` (the
// file) is used in messages. Throws InputError. Does not re-finalize w.
void apply_cluster(Workload& w, const ClusterSpec& spec, const std::string& name);

}  // namespace ds
