// The Kubernetes importer from its pods: `kubectl get pods -A -o json`, imported with small
// fixed nodes (two GPU models) and Kueue queues (a fair-sharing weight), and without the
// queues (the even split), so
// that the model check, the tenants' quotas and the workload's own checks run too; then the
// native files written from the result.
#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "trace/k8s_import.hpp"
#include "trace/native_writer.hpp"

DEEPSHARE_FUZZ_TARGET(k8s_pods) {
  using namespace ds::fuzz;
  const std::string dir = fresh_folder();
  ds::K8sFiles f;
  f.pods = write(dir, "pods.json", std::string_view(reinterpret_cast<const char*>(data), size));
  f.nodes = write(dir, "nodes.json",
                  R"({"kind":"List","items":[)"
                  R"({"metadata":{"name":"n1","labels":{"nvidia.com/gpu.product":"A100"}},)"
                  R"("status":{"allocatable":{"nvidia.com/gpu":"4"}}},)"
                  R"({"metadata":{"name":"n2","labels":{"nvidia.com/gpu.product":"T4"}},)"
                  R"("status":{"capacity":{"nvidia.com/gpu":"2"}}}]})");
  const std::string cq = write(
      dir, "cq.json",
      R"({"kind":"List","items":[{"metadata":{"name":"cq"},"spec":{"resourceGroups":[)"
      R"({"flavors":[{"name":"a100","resources":[{"name":"nvidia.com/gpu","nominalQuota":"4"}]}]}],)"
      R"("fairSharing":{"weight":"500m"}}}]})");
  const std::string lq = write(dir, "lq.json",
                               R"({"kind":"List","items":[{"metadata":{"name":"q","namespace":)"
                               R"("team-a"},"spec":{"clusterQueue":"cq"}}]})");
  for (const bool kueue : {false, true}) {
    f.clusterqueues = kueue ? cq : "";
    f.localqueues = kueue ? lq : "";
    try {
      const ds::K8sImport imp = ds::import_k8s(f);
      (void)ds::native_trace_csv(imp.workload);
      (void)ds::cluster_file_yaml(imp.workload);
    } catch (const ds::InputError&) {
      expected_error();
    }
  }
  return 0;
}
