// The tenants of `deepshare k8s run` (tenants.hpp).
#include "k8s/tenants.hpp"

#include "core/error.hpp"
#include "replay/k8s_objects.hpp"
#include "trace/k8s_cluster.hpp"
#include "trace/k8s_json.hpp"

namespace ds::k8s {

const char* to_string(TenantSource s) {
  switch (s) {
    case TenantSource::Given:
      return "given";
    case TenantSource::Kueue:
      return "kueue";
    case TenantSource::ConfigMap:
      return "configmap";
  }
  return "?";
}

NamespaceQuotas configmap_quotas(const json& cm) {
  NamespaceQuotas out;
  const std::string where = std::string("ConfigMap ") + kTenantsConfigMap;
  auto data = cm.find("data");
  if (data == cm.end() || data->is_null()) return out;  // no tenant (yet)
  if (!data->is_object()) throw InputError(where + ": data is not a map");
  for (const auto& [ns, value] : data->items()) {
    if (dns_label(ns) != ns)
      throw InputError(where + ": key '" + ns + "' is not a namespace name (a DNS label)");
    const std::string v = value.is_string() ? value.get<std::string>() : std::string();
    if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(where + ": " + ns + ": '" + v + "' is not a GPU count (e.g. \"8\")");
    out.quotas.emplace_back(ns, std::stoi(v));
  }
  return out;
}

NamespaceQuotas kueue_quotas(const std::vector<json>& cluster_queues,
                             const std::vector<json>& local_queues) {
  const K8sQueues q = read_k8s_queues(K8sList{"clusterqueues", json{{"items", cluster_queues}}},
                                      K8sList{"localqueues", json{{"items", local_queues}}});
  std::vector<std::string> namespaces;
  for (const auto& [ns, cq] : q.queue_of_namespace) namespaces.push_back(ns);
  // The importer's mapping; no pod history here, so a shared ClusterQueue is split evenly.
  const K8sTenants t = k8s_tenants(namespaces, std::vector<double>(namespaces.size(), 0.0), &q, 0);
  NamespaceQuotas out;
  out.notes = t.notes;
  for (const Tenant& x : t.tenants) out.quotas.emplace_back(x.name, x.quota_gpus);
  return out;
}

TenantBook::TenantBook(std::vector<Tenant> tenants, std::vector<std::string> namespaces)
    : tenants_(std::move(tenants)),
      namespaces_(std::move(namespaces)),
      listed_(tenants_.size(), true) {
  if (tenants_.size() != namespaces_.size())
    throw std::invalid_argument("TenantBook: one namespace per tenant");
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    tenants_[t].id = TenantId(static_cast<std::uint32_t>(t));
}

bool TenantBook::apply(const NamespaceQuotas& q) {
  bool changed = false;
  std::vector<bool> listed(tenants_.size(), false);
  for (const auto& [ns, gpus] : q.quotas) {
    std::size_t t = 0;
    while (t < namespaces_.size() && namespaces_[t] != ns) ++t;
    if (t == namespaces_.size()) {
      Tenant x;
      x.id = TenantId(static_cast<std::uint32_t>(t));
      x.name = ns;
      tenants_.push_back(x);
      namespaces_.push_back(ns);
      listed.push_back(false);
      listed_.push_back(false);
      tenants_[t].quota_gpus = -1;  // set below, counted as a change
    }
    listed[t] = true;
    if (tenants_[t].quota_gpus != gpus || !listed_[t]) changed = true;
    tenants_[t].quota_gpus = gpus;
    tenants_[t].cls = gpus > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
  }
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    if (!listed[t] && listed_[t]) {  // dropped: its running pods stay, nothing new
      tenants_[t].quota_gpus = 0;
      tenants_[t].cls = TenantClass::BestEffort;
      changed = true;
    }
  listed_ = std::move(listed);
  return changed;
}

std::map<std::string, TenantId> TenantBook::active() const {
  std::map<std::string, TenantId> out;
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    if (listed_[t]) out.emplace(namespaces_[t], tenants_[t].id);
  return out;
}

std::string TenantBook::summary() const {
  std::string s;
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    if (listed_[t])
      s += (s.empty() ? "" : ",") + namespaces_[t] + "=" + std::to_string(tenants_[t].quota_gpus);
  return s;
}

}  // namespace ds::k8s
