// `deepshare import k8s --kubeconfig` and `whatif --from k8s --kubeconfig`: the Lists the
// Kubernetes importer reads (trace/k8s_import.hpp), straight from the API server with the
// project's client (k8s/client.hpp) instead of from files kubectl saved. One importer: only
// where the Lists come from differs.
//
// Assumptions:
//  1. GET /api/v1/pods and /api/v1/nodes, every page (limit/continue: Client::list); each List
//     is named by the server's URL and path in messages ("https://h:6443/api/v1/pods: pod
//     'ns/p' (item 3): field ...").
//  2. Kueue's ClusterQueues and LocalQueues when the API server serves kueue.x-k8s.io (its
//     preferred version, from discovery); not served: no queues (noted), as without the files.
//  3. The kubeconfig is the one `deepshare k8s` commands read (k8s/kubeconfig.hpp): no
//     plugins run. An API error (unreachable, 403 Forbidden...) is an InputError naming the
//     request and the API's own message.
#pragma once

#include <string>
#include <vector>

#include "trace/k8s_import.hpp"

namespace ds {

struct K8sSiteLists {
  K8sLists lists;
  std::string server;              // for messages: "https://127.0.0.1:6443"
  std::vector<std::string> notes;  // assumption 2's
};

// Reads `kubeconfig` (its `context`, empty: current-context) and lists the objects.
K8sSiteLists fetch_k8s_lists(const std::string& kubeconfig, const std::string& context);

}  // namespace ds
