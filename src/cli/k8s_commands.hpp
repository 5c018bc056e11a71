// `deepshare k8s replay` (docs/kubernetes.md §7): the time-scaled replay on a real
// Kubernetes cluster. Only in builds with the Kubernetes client (DEEPSHARE_HAVE_K8S).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace ds {

// Adds the subcommands; `add_action` records what each one runs (as in commands.cpp).
void register_k8s_commands(CLI::App& app,
                           const std::function<void(CLI::App*, std::function<int()>)>& add_action);

}  // namespace ds
