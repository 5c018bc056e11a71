// Where a pod's own rules let it run (docs/kubernetes.md §8, "Where a pod may run"): its
// spec.nodeSelector and its required node affinity
// (spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution), read as the
// API defines them and as the kubelet checks them when it admits a bound pod (a pod bound to
// a node they exclude is rejected there: status Failed, reason NodeAffinity; the kubelet's
// AdmissionCheck, pkg/scheduler/eventhandlers.go and pkg/kubelet/lifecycle/predicate.go of
// Kubernetes v1.37.2). DeepShare binds
// pods itself, so these rules become the job's node mask (JobSpec::allowed_nodes), as
// feasibility does on the Slurm face.
//  - nodeSelector: every key=value among the node's labels;
//  - nodeSelectorTerms: any term whose requirements all hold (a term without requirements
//    holds on no node); matchExpressions on labels with In, NotIn, Exists, DoesNotExist, Gt,
//    Lt (integers), matchFields on metadata.name with In, NotIn.
// Preferred affinity, pod (anti-)affinity, topology spread and taints are not read (the
// kubelet does not check them at admission, but for NoExecute taints); nor are host ports,
// which it does check.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ds::k8s {

using Labels = std::unordered_map<std::string, std::string>;

struct NodeRequirement {
  enum class Op { In, NotIn, Exists, DoesNotExist, Gt, Lt };
  std::string key;
  Op op = Op::In;
  std::vector<std::string> values;
  bool field = false;  // matchFields: key is metadata.name
  [[nodiscard]] bool holds(const std::string& node, const Labels& labels) const;
};

struct NodeRules {
  std::vector<std::pair<std::string, std::string>> selector;  // spec.nodeSelector
  std::vector<std::vector<NodeRequirement>> terms;  // required nodeSelectorTerms (any of them)
  bool affinity = false;  // required node affinity given (an empty list of terms holds nowhere)
  std::string invalid;    // why a rule cannot be read ("" when all can)
  [[nodiscard]] bool empty() const { return selector.empty() && !affinity && invalid.empty(); }
  // Whether the rules let the pod run on node `name` with `labels`.
  [[nodiscard]] bool admit(const std::string& name, const Labels& labels) const;
};

// The rules of a pod's spec.
NodeRules node_rules(const nlohmann::json& spec);

}  // namespace ds::k8s
