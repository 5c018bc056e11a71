// The pods of a Kubernetes cluster: `kubectl get pods -A -o json` (docs/formats.md, "k8s").
//
// Assumptions:
//  1. Each pod is a job of its own, named NAMESPACE/NAME, its namespace the tenant. Pods a Job
//     owns (metadata.ownerReferences kind Job) are kept per pod too: a Job's parallel pods and
//     its retries after a failure each ran and held GPUs (counted in a note); the Job itself
//     is not read.
//  2. Submit = metadata.creationTimestamp; start = status.startTime, else the earliest
//     startedAt of the containers' state.terminated (or state.running); end = the latest
//     finishedAt of the containers' state.terminated (the pod ends with its last container).
//     Work = end - start. What the API recorded (start, end, node) is kept beside the job.
//  3. Only finished pods are imported: phase Succeeded (COMPLETED) and Failed (FAILED).
//     Pending, Running and Unknown pods, finished pods that never started or have no end time,
//     and pods without GPUs are skipped, each counted by reason.
//  4. GPUs: the pod's effective request, as the scheduler counts it: the larger of the sum over
//     spec.containers and the largest of spec.initContainers, each container's
//     resources.limits "nvidia.com/gpu" (else its requests; extended resources have
//     limits = requests).
//  5. A required GPU model: spec.nodeSelector "nvidia.com/gpu.product" (GPU feature
//     discovery's label on the nodes), else the node affinity that requires one:
//     spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, when every
//     one of its nodeSelectorTerms (they are alternatives) has a matchExpression on that key
//     with operator In, and they name one model between them. Several models (In [a, b], or
//     terms naming different ones) cannot be one DeepShare constraint: the pod is imported
//     without a model and counted (a note). Other operators (NotIn, Exists...) and preferred
//     affinity are not read. A nodeSelector and an affinity naming different models is an
//     error (no node could have run the pod).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ds {

struct K8sPod {
  std::string name;  // NAMESPACE/NAME
  std::string ns;
  std::string phase;     // Succeeded | Failed
  std::string gpu_type;  // required model; empty: any
  std::string node;      // spec.nodeName
  std::int64_t gpus = 0;
  std::int64_t submit_s = 0;
  std::int64_t start_s = 0;
  std::int64_t end_s = 0;
  std::string job;      // NAMESPACE/NAME of the batch/v1 Job that owns it; empty: none
  bool any_of = false;  // its affinity allows several GPU models (assumption 5)
};

struct K8sPodsRead {
  std::vector<K8sPod> pods;                    // in file order
  std::map<std::string, std::size_t> skipped;  // reason -> pods
  std::size_t items = 0;
};

struct K8sList;

// Throws InputError (file or API, pod, field, what was expected) on bad input.
K8sPodsRead read_k8s_pods(const K8sList& pods);

}  // namespace ds
