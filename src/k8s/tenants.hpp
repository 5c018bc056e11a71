// The tenants of `deepshare k8s run` and their quotas, re-read while it runs
// (docs/kubernetes.md §8 "Tenants and quotas"). A namespace is a tenant. Where the quotas come
// from (TenantSource):
//  - Given: the configuration's tenants or --tenants NS=GPUS (fixed: a change is a restart);
//  - Kueue (when kueue.x-k8s.io/v1beta2 is served): read-only, the GPUs of each ClusterQueue's
//    nominalQuota (spec.resourceGroups[].flavors[].resources "nvidia.com/gpu", every flavor)
//    go to the namespaces whose LocalQueues point at it: the importer's own mapping
//    (trace/k8s_cluster.hpp read_k8s_queues + k8s_tenants: a ClusterQueue serving several
//    namespaces is split evenly among them). Cohorts, borrowing and lending limits are not
//    read: nominalQuota is the guarantee, and lending idle quota is DeepShare's own policy;
//  - ConfigMap (no Kueue): `deepshare-tenants` in the scheduler's namespace (the Lease's,
//    deepshare-system), each data key a namespace and its value the GPUs guaranteed:
//      data: {team-a: "8", team-b: "4"}
// Live: the objects are watched; a change applies at the next cycle without a restart
// (TenantBook::apply), as `deepshare slurm run` re-reads its accounts: quotas change in place,
// a new namespace becomes a new tenant, and a namespace no longer listed keeps its running
// pods but gets quota 0 and no new pod (its pods are refused with the reason). Objects that do
// not parse keep the quotas in force (logged once per change).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "k8s/client.hpp"
#include "model/tenant.hpp"

namespace ds::k8s {

enum class TenantSource : std::uint8_t { Given, Kueue, ConfigMap };
const char* to_string(TenantSource s);

inline constexpr const char* kTenantsConfigMap = "deepshare-tenants";

// Namespace -> guaranteed GPUs, in the order listed; notes say what was assumed.
struct NamespaceQuotas {
  std::vector<std::pair<std::string, int>> quotas;
  std::vector<std::string> notes;
};
// A ConfigMap's data (throws InputError naming the key that is no namespace or no count).
NamespaceQuotas configmap_quotas(const json& configmap);
// Kueue's ClusterQueues and LocalQueues (items of each) -> the namespaces of the LocalQueues.
NamespaceQuotas kueue_quotas(const std::vector<json>& cluster_queues,
                             const std::vector<json>& local_queues);

// The tenants in force: ids never change (a tenant's id is its position), quotas do.
class TenantBook {
 public:
  // The tenants given at start (their namespaces alongside).
  TenantBook(std::vector<Tenant> tenants, std::vector<std::string> namespaces);
  // Applies `q`: true when a quota changed or a tenant was added (the policy is rebuilt).
  bool apply(const NamespaceQuotas& q);
  [[nodiscard]] const std::vector<Tenant>& tenants() const { return tenants_; }
  [[nodiscard]] const std::vector<std::string>& namespaces() const { return namespaces_; }
  // The namespaces that are tenants now (not those dropped from the source).
  [[nodiscard]] std::map<std::string, TenantId> active() const;
  // "ns=GPUS,..." of the active tenants (log context).
  [[nodiscard]] std::string summary() const;

 private:
  std::vector<Tenant> tenants_;
  std::vector<std::string> namespaces_;
  std::vector<bool> listed_;
};

}  // namespace ds::k8s
