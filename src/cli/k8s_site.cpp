#include "cli/k8s_site.hpp"

#include <utility>

#include "core/error.hpp"
#include "k8s/api.hpp"
#include "k8s/client.hpp"
#include "k8s/kubeconfig.hpp"

namespace ds {
namespace {

constexpr const char* kKueue = "kueue.x-k8s.io";

// Assumption 1: every page of `path`, checked as a List and named by the server's URL.
K8sList api_list(k8s::Client& c, const std::string& path, const std::string& what) {
  auto r = c.list(path);
  if (!r) throw InputError("listing " + what + " from the API server: " + r.error().str());
  return k8s_list(std::move(r).value(), c.config().server + path, "GET " + path);
}

}  // namespace

K8sSiteLists fetch_k8s_lists(const std::string& kubeconfig, const std::string& context) {
  k8s::Client c(k8s::load_kubeconfig(kubeconfig, context));
  K8sSiteLists out;
  out.server = c.config().server;
  out.lists.pods = api_list(c, "/api/v1/pods", "pods");
  out.lists.nodes = api_list(c, "/api/v1/nodes", "nodes");
  const auto version = k8s::preferred_version(c, kKueue);
  if (!version) throw InputError("asking the API server for Kueue's API: " + version.error().str());
  if (!version.value()) {
    out.notes.push_back("k8s: " + out.server + " serves no " + kKueue +
                        " (Kueue is not installed): no queues read");
    return out;
  }
  const std::string base = "/apis/" + std::string(kKueue) + "/" + *version.value();
  out.lists.clusterqueues = api_list(c, base + "/clusterqueues", "Kueue's ClusterQueues");
  out.lists.localqueues = api_list(c, base + "/localqueues", "Kueue's LocalQueues");
  return out;
}

}  // namespace ds
