// Importer for Alibaba's 2023 GPU cluster trace ("openb", FGD, USENIX ATC'23).
//
// Assumptions (docs/formats.md, "openb", says the same for users):
//  1. The trace is a pod list (openb_pod_list_*.csv: name, cpu_milli, memory_mib, num_gpu,
//     gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time; times
//     in seconds) and a node list beside it (openb_node_list_gpu_node.csv, else
//     openb_node_list_all_node.csv: sn, cpu_milli, memory_mib, gpu, model).
//  2. A job is a pod with num_gpu >= 1; CPU-only pods are skipped and counted in notes.
//     submit = creation_time; work = deletion_time - scheduled_time, or - creation_time when
//     scheduled_time is empty (pods still pending at the end). A non-numeric time or a
//     negative work is an error naming the row. gpu_spec, when not empty, is the GPU models
//     the pod may run on ("V100M16|V100M32": one of them, FGD's convention): JobSpec::gpu_type,
//     matched against the nodes' model.
//  3. gpu_milli is the share of one GPU a 1-GPU pod asks for: it becomes JobSpec::gpu_milli
//     when num_gpu == 1 and gpu_milli < 1000; multi-GPU pods get whole GPUs (counted in notes
//     when they asked for less).
//  4. pod_phase: Succeeded -> Completed, Failed -> Failed, anything else (Running, Pending)
//     -> Other. The trace has no user column: jobs have no user.
//  5. Tenants: one per QoS class present, in the order LS, Guaranteed, Burstable, BE. LS and
//     Guaranteed are guaranteed-class tenants, Burstable and BE best-effort (quota 0). The
//     cluster's GPUs are split between the guaranteed-class tenants in proportion to their
//     GPU demand (GPU-time: sum of gpus x gpu_milli/1000 x work), by largest remainder so the
//     quotas sum to the cluster's GPUs exactly (equal split when no demand).
//  6. Nodes: one per node-list row with gpu >= 1 (GPU-less rows are counted in notes), named by
//     sn, gpu_type = model, all in the shared pool. GPU memory by model (GiB): T4 16, P100 16,
//     V100M16 16, V100M32 32, A10 24; G2, G3 and any other model are undisclosed: 24 (noted).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/workload.hpp"

namespace ds {

struct OpenbOptions {
  std::string node_list;             // empty: search beside the pod list
  bool cluster_from_caller = false;  // true: the node list is optional (a cluster file follows)
};

Workload load_openb(const std::string& path, const OpenbOptions& options = {});

// GPU memory in MiB of an openb GPU model; 0 when the model is not known.
std::int64_t openb_gpu_memory_mib(std::string_view model);

}  // namespace ds
