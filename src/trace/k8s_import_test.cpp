// The Kubernetes importer on hand-written objects (tests/fixtures/k8s/, each pod a corner case)
// and on small inline inputs for the errors.
#include "trace/k8s_import.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "trace/k8s_cluster.hpp"
#include "trace/k8s_json.hpp"
#include "trace/k8s_pods.hpp"
#include "trace/load.hpp"
#include "trace/native_writer.hpp"
#include "trace/slurm_nodes.hpp"
#include "trace/trace_test_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

std::string fixture(const std::string& name) {
  return std::string(DEEPSHARE_FIXTURES) + "/k8s/" + name;
}

K8sFiles fixture_files(bool kueue) {
  return {fixture("pods.json"), fixture("nodes.json"), kueue ? fixture("clusterqueues.json") : "",
          kueue ? fixture("localqueues.json") : ""};
}

using testing::all_notes;
using testing::job;

// 2026-12-01T00:00:00Z.
constexpr std::int64_t kDec1 = 1796083200;

TEST(K8sJson, Rfc3339IsReadStrictly) {
  EXPECT_EQ(parse_rfc3339("2026-12-01T00:00:00Z"), kDec1);
  EXPECT_EQ(parse_rfc3339("2026-12-01T09:05:00+01:00"), kDec1 + 8 * 3600 + 5 * 60);
  EXPECT_EQ(parse_rfc3339("2026-11-30T23:30:00-00:30"), kDec1);
  EXPECT_EQ(parse_rfc3339("2026-12-01T00:00:00.999999999Z"), kDec1);  // fraction dropped
  EXPECT_EQ(parse_rfc3339("2024-02-29T00:00:00z"), parse_rfc3339("2024-02-29t00:00:00Z"));
  for (const char* bad :
       {"2026-12-01 00:00:00Z", "2026-12-01T00:00:00", "2026-12-01T00:00:00+0100",
        "2026-12-01T24:00:00Z", "2026-12-01T00:00:60Z", "2026-02-29T00:00:00Z",
        "2026-12-01T00:00:00.Z", "2026-12-01T00:00:00.1234567890Z", "2026-12-01T00:00:00+24:00",
        "2026-12-01T00:00:00ZZ", "9999-12-01T00:00:00Z", "+026-12-01T00:00:00Z", "", "now"})
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
}

TEST(K8sPods, FinishedPodsWithGpusAndTheSkippedByReason) {
  const K8sPodsRead r = read_k8s_pods(read_k8s_list(fixture("pods.json"), "kubectl get pods"));
  EXPECT_EQ(r.items, 10u);
  const std::map<std::string, std::size_t> skipped = {{"pending", 1},
                                                      {"still running", 1},
                                                      {"in phase Unknown", 1},
                                                      {"no GPUs (CPU-only)", 1},
                                                      {"finished without starting", 1}};
  EXPECT_EQ(r.skipped, skipped);
  std::map<std::string, K8sPod> by;
  for (const auto& p : r.pods) by[p.name] = p;
  ASSERT_EQ(by.size(), 5u);  // h100 is read here, dropped by the import (no such node)
  const K8sPod& a = by.at("team-a/train-1");
  EXPECT_EQ(a.ns, "team-a");
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.start_s, kDec1 + 9 * 3600 + 30);  // status.startTime
  EXPECT_EQ(a.end_s, kDec1 + 10 * 3600 + 30);
  EXPECT_EQ(a.node, "gn1");
  EXPECT_EQ(a.job, "");
  const K8sPod& b = by.at("team-a/train-2");
  EXPECT_EQ(b.gpus, 1);  // requests only
  EXPECT_EQ(b.phase, "Failed");
  EXPECT_EQ(b.gpu_type, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(b.submit_s, kDec1 + 8 * 3600 + 5 * 60);  // +01:00
  EXPECT_EQ(b.start_s, kDec1 + 8 * 3600 + 6 * 60);   // no startTime: the container's
  const K8sPod& x = by.at("team-b/job-x-7fk2p");
  EXPECT_EQ(x.gpus, 3);  // containers 1 + 1 (one as a JSON number), the init container 3
  EXPECT_EQ(x.job, "team-b/job-x");
  EXPECT_EQ(x.end_s - x.start_s, 1200);  // the last container's end
  EXPECT_EQ(by.at("team-c/done").gpu_type, "Tesla-T4");
}

TEST(K8sNodes, GpusModelsAndMemory) {
  const K8sCluster c =
      read_k8s_nodes(read_k8s_list(fixture("nodes.json"), "kubectl get nodes"), GpuMemoryRule({}));
  std::map<std::string, Node> by;
  for (const auto& n : c.cluster.nodes) by[n.name] = n;
  ASSERT_EQ(by.size(), 3u);  // cpu1 has no GPU
  EXPECT_EQ(by["gn1"].gpus, 8);
  EXPECT_EQ(by["gn1"].gpu_type, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(by["gn1"].gpu_memory_mib, 81920);      // the label
  EXPECT_EQ(by["gn2"].gpus, 4);                    // capacity when allocatable has none
  EXPECT_EQ(by["gn2"].gpu_memory_mib, 16 * 1024);  // the table (T4)
  EXPECT_EQ(by["gn3"].gpu_type, "");
  EXPECT_EQ(by["gn3"].gpu_memory_mib, 24 * 1024);  // assumed, noted
  std::string notes;
  for (const auto& n : c.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("skipped 1 nodes without GPUs"));
  EXPECT_THAT(notes, HasSubstr("nodes without a GPU model is not known: assumed 24 GiB on 1"));
  EXPECT_THAT(notes, HasSubstr("1 nodes were cordoned when dumped, kept as capacity (e.g. 'gn3')"));
}

TEST(K8sImport, TheWholeSiteWithoutKueue) {
  const K8sImport imp = import_k8s(fixture_files(false));
  const Workload& w = imp.workload;
  ASSERT_EQ(w.jobs.size(), 4u);
  ASSERT_EQ(imp.recorded.size(), 4u);
  EXPECT_EQ(w.jobs[0].name, "team-a/train-2");  // submit order: 08:05 UTC
  EXPECT_EQ(w.jobs[3].name, "team-c/done");
  const JobSpec& a100 = job(w, "team-a/train-2");
  EXPECT_EQ(a100.gpu_type, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(w.truth[a100.id.index()].state, FinalState::Failed);
  EXPECT_EQ(w.truth[a100.id.index()].work, seconds(600));
  EXPECT_EQ(w.truth[job(w, "team-b/job-x-7fk2p").id.index()].state, FinalState::Completed);
  EXPECT_EQ(job(w, "team-b/job-x-7fk2p").submit, seconds(kDec1 + 9 * 3600 + 10 * 60));
  EXPECT_EQ(w.tenants[job(w, "team-c/done").tenant.index()].name, "team-c");
  EXPECT_EQ(imp.recorded[3].node, "gn2");
  EXPECT_EQ(imp.recorded[3].start_s, kDec1 + 11 * 3600 + 60);
  // 14 GPUs among 3 namespaces: 5, 5, 4 (largest remainder, ties to the first).
  ASSERT_EQ(w.tenants.size(), 3u);
  EXPECT_EQ(w.tenants[0].name, "team-a");
  EXPECT_EQ(w.tenants[0].quota_gpus, 5);
  EXPECT_EQ(w.tenants[1].quota_gpus, 5);
  EXPECT_EQ(w.tenants[2].quota_gpus, 4);
  EXPECT_EQ(w.tenants[2].cls, TenantClass::Guaranteed);
  const std::string notes = all_notes(w);
  EXPECT_THAT(notes, HasSubstr("skipped pods: 1 asking for a GPU model no node has, 1 finished "
                               "without starting, 1 in phase Unknown, 1 no GPUs (CPU-only), 1 "
                               "pending, 1 still running"));
  EXPECT_THAT(notes, HasSubstr("the 3 namespaces share the 14 GPUs evenly as quotas"));
  EXPECT_THAT(notes, HasSubstr("1 pods belong to Jobs: each pod is a job of its own"));
}

TEST(K8sImport, KueueQuotas) {
  const K8sImport imp = import_k8s(fixture_files(true));
  const Workload& w = imp.workload;
  std::map<std::string, Tenant> by;
  for (const auto& t : w.tenants) by[t.name] = t;
  ASSERT_EQ(by.size(), 3u);  // namespaces with pods only (ops has a LocalQueue, no pod)
  // cq-research: 6 (a100) + 2 (t4) GPUs for team-a (7,800 GPU-s) and team-b (3,600): 5.47 and
  // 2.53 -> 5 and 3.
  EXPECT_EQ(by["team-a"].quota_gpus, 5);
  EXPECT_EQ(by["team-b"].quota_gpus, 3);
  EXPECT_EQ(by["team-c"].quota_gpus, 0);  // no LocalQueue
  EXPECT_EQ(by["team-c"].cls, TenantClass::BestEffort);
  const std::string notes = all_notes(w);
  EXPECT_THAT(notes, HasSubstr("1 ClusterQueues serve several namespaces"));
  EXPECT_THAT(notes, HasSubstr("2 ClusterQueues serve no namespace with pods: their quotas (6 "
                               "GPUs) are not given to any tenant"));
  EXPECT_THAT(notes, HasSubstr("1 namespaces with pods have no LocalQueue: best-effort"));
}

// What import writes reads back as the same workload (native trace + cluster file).
TEST(K8sImport, NativeFilesReadBackAsTheSameWorkload) {
  const Workload w = import_k8s(fixture_files(true)).workload;
  TempDir dir;
  const std::string trace = dir.write("trace.csv", native_trace_csv(w, {{"extra", {"x"}}}));
  const std::string cluster = dir.write("cluster.yaml", cluster_file_yaml(w, "c"));
  LoadOptions lo;
  lo.format = "native";
  lo.cluster_file = cluster;
  const Workload back = load_trace(trace, lo);
  ASSERT_EQ(back.jobs.size(), w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_EQ(w.jobs[i].name, back.jobs[i].name);
    EXPECT_EQ(w.jobs[i].gpus, back.jobs[i].gpus);
    EXPECT_EQ(w.jobs[i].gpu_type, back.jobs[i].gpu_type);
    EXPECT_EQ(w.jobs[i].submit, back.jobs[i].submit);
    EXPECT_EQ(w.truth[i].work, back.truth[i].work);
    EXPECT_EQ(w.truth[i].state, back.truth[i].state);
  }
  ASSERT_EQ(back.tenants.size(), w.tenants.size());
  for (std::size_t i = 0; i < w.tenants.size(); ++i) {
    EXPECT_EQ(back.tenants[i].name, w.tenants[i].name);
    EXPECT_EQ(back.tenants[i].quota_gpus, w.tenants[i].quota_gpus);
    EXPECT_EQ(back.tenants[i].cls, w.tenants[i].cls);
  }
  ASSERT_EQ(back.cluster.total_gpus(), w.cluster.total_gpus());
}

// Inline objects for the errors: a List of one pod (fields replaced by `patch`).
std::string pods_list(const std::string& pod) {
  return R"({"apiVersion":"v1","kind":"List","items":[)" + pod + "]}";
}
std::string a_pod(const std::string& created = "2026-12-01T09:00:00Z",
                  const std::string& gpus = "\"2\"",
                  const std::string& end = "2026-12-01T10:00:00Z") {
  return R"({"metadata":{"namespace":"ns","name":"p","creationTimestamp":")" + created +
         R"("},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":)" + gpus +
         R"(}}}]},"status":{"phase":"Succeeded","startTime":"2026-12-01T09:00:10Z",)"
         R"("containerStatuses":[{"name":"c","state":{"terminated":{"startedAt":)"
         R"("2026-12-01T09:00:10Z","finishedAt":")" +
         end + R"("}}}]}})";
}

TEST(K8sImport, ClearErrorsNameFilePodAndField) {
  TempDir dir;
  const std::string nodes =
      dir.write("nodes.json", R"({"items":[{"metadata":{"name":"n1"},"status":{"allocatable":)"
                              R"({"nvidia.com/gpu":"4"}}}]})");
  auto pods = [&](const std::string& text) {
    return input_error([&] {
      (void)import_k8s(K8sFiles{dir.write("pods.json", text), nodes, "", ""});
    });
  };
  EXPECT_THAT(pods(pods_list(a_pod()) + "x"),
              HasSubstr("pods.json: not JSON (parse error at line 1, column "));
  EXPECT_THAT(pods("[]"), HasSubstr("pods.json: no 'items' list; expected the output of `kubectl "
                                    "get pods -A -o json` (a List"));
  EXPECT_THAT(pods(""), HasSubstr("pods.json: file is empty"));
  EXPECT_THAT(pods(pods_list(R"({"metadata":{"name":"p"}})")),
              HasSubstr("pods.json: item 0: field 'metadata.namespace': expected a string (the "
                        "field is missing)"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01 09:00:00"))),
              HasSubstr("pods.json: pod 'ns/p' (item 0): field 'metadata.creationTimestamp': "
                        "expected an RFC 3339 time such as 2026-12-01T09:00:00Z"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "\"-1\""))),
              HasSubstr("pod 'ns/p' (item 0): field "
                        "'spec.containers[0].resources.limits.nvidia.com/gpu': expected a whole "
                        "GPU count in 0..100000, got '\"-1\"'"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "\"99999999999999999999\""))),
              HasSubstr("expected a whole GPU count in 0..100000, got '\"99999999999999999999\"'"));
  // A JSON number past int64 is a float to the parser: refused as one.
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "99999999999999999999"))),
              HasSubstr("expected a whole GPU count in 0..100000, got '1e+20'"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "100001"))),
              HasSubstr("expected a whole GPU count in 0..100000, got '100001'"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "\"500m\""))),
              HasSubstr("expected a whole GPU count in 0..100000, got '\"500m\"'"));
  EXPECT_THAT(pods(pods_list(a_pod("2026-12-01T09:00:00Z", "\"2\"", "2026-12-01T08:00:00Z"))),
              HasSubstr("field 'status.containerStatuses': expected an end (finishedAt) not "
                        "before the start, got an end 3610 s before it"));
  std::string phase = a_pod();
  phase.replace(phase.find("Succeeded"), 9, "Done");
  EXPECT_THAT(pods(pods_list(phase)),
              HasSubstr("field 'status.phase': expected Pending, Running, Succeeded, Failed or "
                        "Unknown, got 'Done'"));
  EXPECT_THAT(pods(pods_list(a_pod() + "," + a_pod())),
              HasSubstr("pod 'ns/p' is listed twice (items 0 and 1)"));
  EXPECT_THAT(pods(pods_list(R"({"metadata":{"namespace":"ns","name":"p",)"
                             R"("creationTimestamp":"2026-12-01T09:00:00Z"},)"
                             R"("status":{"phase":"Pending"}})")),
              HasSubstr("pods.json: no pod to import (1 pending); pods need to have finished"));
  // Many containers adding up past the cluster limit.
  std::string many = a_pod();
  const std::string c = R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"60000"}}})";
  many.replace(many.find("[{\"name\":\"c\""), 0, "[" + c + "," + c + "],\"x\":");
  EXPECT_THAT(pods(pods_list(many)),
              HasSubstr("field 'spec.containers': expected GPUs adding up to at most 100000"));
}

TEST(K8sImport, NodeAndQueueErrors) {
  TempDir dir;
  const std::string pods = dir.write("pods.json", pods_list(a_pod()));
  auto with_nodes = [&](const std::string& text) {
    return input_error([&] {
      (void)import_k8s(K8sFiles{pods, dir.write("nodes.json", text), "", ""});
    });
  };
  EXPECT_THAT(with_nodes(R"({"items":[{"metadata":{"name":"n"},"status":{"allocatable":)"
                         R"({"nvidia.com/gpu":"65"}}}]})"),
              HasSubstr("nodes.json: node 'n' (item 0): field 'status.allocatable.nvidia.com/gpu': "
                        "expected at most 64 GPUs"));
  EXPECT_THAT(
      with_nodes(R"({"items":[{"metadata":{"name":"n"},"status":{"capacity":{"cpu":"4"}}}]})"),
      HasSubstr("nodes.json: no node with GPUs"));
  EXPECT_THAT(with_nodes(R"({"items":[{"metadata":{"name":"n","labels":{"nvidia.com/gpu.memory":)"
                         R"("lots"}},"status":{"allocatable":{"nvidia.com/gpu":"1"}}}]})"),
              HasSubstr("field 'metadata.labels.nvidia.com/gpu.memory': expected a whole GPU "
                        "count in 0..1048576, got '\"lots\"'"));
  const std::string nodes =
      dir.write("n.json", R"({"items":[{"metadata":{"name":"n1"},"status":{"allocatable":)"
                          R"({"nvidia.com/gpu":"4"}}}]})");
  auto with_queues = [&](const std::string& cq, const std::string& lq) {
    return input_error([&] {
      (void)import_k8s(K8sFiles{pods, nodes, dir.write("cq.json", cq), dir.write("lq.json", lq)});
    });
  };
  const std::string lq = R"({"items":[{"metadata":{"name":"q","namespace":"ns"},)"
                         R"("spec":{"clusterQueue":"cq"}}]})";
  EXPECT_THAT(
      with_queues(
          R"({"items":[{"metadata":{"name":"cq"},"spec":{"resourceGroups":[{"flavors":)"
          R"([{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":-3}]}]}]}}]})",
          lq),
      HasSubstr("cq.json: ClusterQueue 'cq' (item 0): field "
                "'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota': expected a whole "
                "GPU count in 0..1000000, got '-3'"));
  EXPECT_THAT(with_queues(R"({"items":[{"metadata":{"name":"other"}}]})", lq),
              HasSubstr("lq.json: LocalQueue 'ns/q' (item 0): field 'spec.clusterQueue': expected "
                        "a ClusterQueue of "));
  EXPECT_THAT(input_error([&] {
                (void)import_k8s(K8sFiles{pods, nodes, "cq.json", ""});
              }),
              HasSubstr("--clusterqueues and --localqueues go together"));
}

// Inline Lists as the API returns them: no file, named by the server's URL.
K8sList api_list(const std::string& path, const std::string& items) {
  return parse_k8s_list(R"({"kind":"List","metadata":{},"items":[)" + items + "]}",
                        "https://127.0.0.1:6443" + path, "GET " + path);
}
// A finished pod of 1 GPU with `spec` merged in (nodeSelector, affinity).
std::string pod_with(const std::string& name, const std::string& spec) {
  std::string p = a_pod();
  p.replace(p.find(R"("name":"p")"), 10, R"("name":")" + name + R"(")");
  p.replace(p.find(R"("spec":{)") + 8, 0, spec + ",");
  return p;
}
std::string affinity(const std::string& terms) {
  return R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
         R"({"nodeSelectorTerms":[)" +
         terms + "]}}}";
}
std::string term(const std::string& op, const std::string& values) {
  return R"({"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]},)"
         R"({"key":"nvidia.com/gpu.product","operator":")" +
         op + R"(","values":[)" + values + "]}]}";
}

TEST(K8sPods, NodeAffinityRequiresAModelLikeTheNodeSelector) {
  const std::string selector = R"("nodeSelector":{"nvidia.com/gpu.product":"A100"})";
  const K8sPodsRead r = read_k8s_pods(api_list(
      "/api/v1/pods",
      pod_with("one", affinity(term("In", R"("A100")"))) + "," +
          pod_with("same", affinity(term("In", R"("A100")") + "," + term("In", R"("A100")"))) +
          "," + pod_with("two", affinity(term("In", R"("A100","T4")"))) + "," +
          pod_with("alternatives",
                   affinity(term("In", R"("A100")") + "," + term("In", R"("T4")"))) +
          "," +
          pod_with("open", affinity(term("In", R"("A100")") + R"(,{"matchExpressions":[]})")) +
          "," + pod_with("notin", affinity(term("NotIn", R"("T4")"))) + "," +
          pod_with("both", selector + "," + affinity(term("In", R"("A100")")))));
  std::map<std::string, K8sPod> by;
  for (const auto& p : r.pods) by[p.name] = p;
  ASSERT_EQ(by.size(), 7u);
  EXPECT_EQ(by["ns/one"].gpu_type, "A100");
  EXPECT_EQ(by["ns/same"].gpu_type, "A100");
  EXPECT_EQ(by["ns/both"].gpu_type, "A100");
  for (const char* any : {"ns/two", "ns/alternatives"}) {
    EXPECT_EQ(by[any].gpu_type, "") << any;
    EXPECT_TRUE(by[any].any_of) << any;  // noted by the import
  }
  for (const char* open : {"ns/open", "ns/notin"}) {
    EXPECT_EQ(by[open].gpu_type, "") << open;
    EXPECT_FALSE(by[open].any_of) << open;
  }
  auto error = [](const std::string& pod) {
    return input_error([&] { (void)read_k8s_pods(api_list("/api/v1/pods", pod)); });
  };
  EXPECT_THAT(error(pod_with("x", R"("nodeSelector":{"nvidia.com/gpu.product":"T4"},)" +
                                      affinity(term("In", R"("A100")")))),
              HasSubstr("https://127.0.0.1:6443/api/v1/pods: pod 'ns/x' (item 0): field "
                        "'spec.affinity.nodeAffinity': expected the GPU model of "
                        "spec.nodeSelector ('T4'), got 'A100'"));
  EXPECT_THAT(error(pod_with("x", affinity(term("In", "")))),
              HasSubstr("field 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                        "Execution.nodeSelectorTerms[0].matchExpressions[1].values': expected a "
                        "non-empty array of GPU models (operator In)"));
  EXPECT_THAT(error(pod_with("x", affinity(term("In", "7")))),
              HasSubstr("expected GPU models as non-empty strings, got '7'"));
  EXPECT_THAT(error(pod_with("x", R"("affinity":{"nodeAffinity":{"requiredDuringScheduling)"
                                  R"(IgnoredDuringExecution":{"nodeSelectorTerms":{}}}})")),
              HasSubstr("nodeSelectorTerms': expected an array"));
}

// The import from Lists as the API returns them (cli/k8s_site.hpp fetches them): items
// without kind, messages naming the API's URL; Kueue's fair-sharing weights; --gpu-memory.
TEST(K8sImport, ListsFromTheApiWithKueueWeightsAndGpuMemory) {
  K8sLists lists;
  lists.pods = api_list("/api/v1/pods",
                        pod_with("a", R"("x":1)") + "," +
                            pod_with("b", R"("x":1)")
                                .replace(pod_with("b", R"("x":1)").find(R"("ns")"), 4, R"("nb")"));
  lists.nodes = api_list(
      "/api/v1/nodes",
      R"({"metadata":{"name":"g1","labels":{"nvidia.com/gpu.product":"A100"}},)"
      R"("status":{"allocatable":{"nvidia.com/gpu":"4"}}},)"
      R"({"metadata":{"name":"g2","labels":{"nvidia.com/gpu.product":"L40S",)"
      R"("nvidia.com/gpu.memory":"46068"}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}},)"
      R"({"metadata":{"name":"g3"},"status":{"allocatable":{"nvidia.com/gpu":"2"}}})");
  auto cq = [](const std::string& name, const std::string& weight) {
    return R"({"metadata":{"name":")" + name +
           R"("},"spec":{"resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":)"
           R"("nvidia.com/gpu","nominalQuota":"4"}]}]}])" +
           (weight.empty() ? "" : R"(,"fairSharing":{"weight":)" + weight + "}") + "}}";
  };
  auto lq = [](const std::string& ns, const std::string& cq) {
    return R"({"metadata":{"name":"q","namespace":")" + ns + R"("},"spec":{"clusterQueue":")" + cq +
           R"("}})";
  };
  lists.clusterqueues =
      api_list("/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
               cq("c1", R"("500m")") + "," + cq("c2", "") + "," + cq("c3", R"("0")"));
  lists.localqueues =
      api_list("/apis/kueue.x-k8s.io/v1beta2/localqueues", lq("ns", "c1") + "," + lq("nb", "c2"));
  K8sImportOptions options;
  options.gpu_memory = {"a100=80", "*=32"};
  const K8sImport imp = import_k8s(lists, options);
  const Workload& w = imp.workload;
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.name, "https://127.0.0.1:6443/api/v1/pods");
  std::map<std::string, Tenant> t;
  for (const auto& x : w.tenants) t[x.name] = x;
  EXPECT_DOUBLE_EQ(t["ns"].weight, 0.5);  // 500m
  EXPECT_DOUBLE_EQ(t["nb"].weight, 1);    // Kueue's default
  EXPECT_EQ(t["ns"].quota_gpus, 4);
  std::map<std::string, Node> n;
  for (const auto& x : w.cluster.nodes) n[x.name] = x;
  EXPECT_EQ(n["g1"].gpu_memory_mib, 80 * 1024);  // the override over the table's 40
  EXPECT_EQ(n["g2"].gpu_memory_mib, 46068);      // the label
  EXPECT_EQ(n["g3"].gpu_memory_mib, 32 * 1024);  // *=GIB: no model
  const std::string notes = all_notes(w);
  EXPECT_THAT(notes, HasSubstr("k8s: https://127.0.0.1:6443/api/v1/pods: 2 pods"));
  EXPECT_THAT(notes, HasSubstr("1 ClusterQueues have fair-sharing weight 0"));
  // Without the overrides: the table, and the default noted with the option to set it.
  const K8sImport plain = import_k8s(lists);
  EXPECT_THAT(all_notes(plain.workload),
              HasSubstr("GPU memory of nodes without a GPU model is not known: assumed 24 GiB on "
                        "1 nodes (label nvidia.com/gpu.memory absent; set it with --gpu-memory "
                        "'*=GIB')"));
  // Errors name the API's URL and the object.
  K8sLists bad = lists;
  bad.clusterqueues = api_list("/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
                               cq("c1", R"("heavy")") + "," + cq("c2", ""));
  EXPECT_THAT(input_error([&] { (void)import_k8s(bad); }),
              HasSubstr("https://127.0.0.1:6443/apis/kueue.x-k8s.io/v1beta2/clusterqueues: "
                        "ClusterQueue 'c1' (item 0): field 'spec.fairSharing.weight': expected a "
                        "weight such as 1, 0.5 or 500m, in 0..1e9, got '\"heavy\"'"));
  EXPECT_THAT(input_error([&] { (void)import_k8s(lists, {{"a100"}}); }),
              HasSubstr("--gpu-memory 'a100': expected MODEL=GIB"));
  EXPECT_THAT(input_error([&] {
                (void)k8s_list(nlohmann::json::array(), "https://h/api/v1/pods",
                               "GET /api/v1/pods");
              }),
              HasSubstr("https://h/api/v1/pods: no 'items' list; expected the output of `GET "
                        "/api/v1/pods`"));
}

TEST(K8sCluster, KueueWeightsAreQuantities) {
  EXPECT_EQ(parse_k8s_weight("1"), 1.0);
  EXPECT_EQ(parse_k8s_weight("2.5"), 2.5);
  EXPECT_EQ(parse_k8s_weight("500m"), 0.5);
  EXPECT_EQ(parse_k8s_weight(".5"), 0.5);
  EXPECT_EQ(parse_k8s_weight("0"), 0.0);
  for (const char* bad : {"", "m", "-1", "1e3", "1.", "1k", "0x10", " 1", "1000000001", "a"})
    EXPECT_FALSE(parse_k8s_weight(bad).has_value()) << bad;
}

}  // namespace
}  // namespace ds
