// The bad-input corpus of issue #28: a site's own records (`deepshare import slurm` and
// `deepshare whatif --from slurm`): every error names the file, line, column and field, and
// nothing is written. The harness: harness.hpp.
#include <cstdlib>

#include "harness.hpp"

namespace ds::bad_input {
namespace {

// A site's Slurm records (`deepshare import slurm`, issue #28).
const std::string kSacctHeader =
    "JobID|JobIDRaw|Account|User|Partition|Submit|Start|End|Elapsed|State|AllocTRES|ReqTRES\n";
const std::string kSacctJob =
    "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|2026-01-01T01:00:05|01:00:00|"
    "COMPLETED|gres/gpu=2|gres/gpu=2\n";
const std::string kAssoc = "Cluster|Account|User|GrpTRES|Share\nc|alpha||gres/gpu=4|1\n";
const std::string kNodesTxt = "NodeName=n1 Gres=gpu:a100:4(S:0) State=IDLE Partitions=gpu\n";
std::string import_slurm(const std::string& extra = "") {
  return "import slurm --sacct {d}/sacct.txt --assoc {d}/assoc.txt --nodes {d}/nodes.txt "
         "--out {d}/out " +
         extra;
}
Files slurm_files(const std::string& sacct, const std::string& assoc = kAssoc,
                  const std::string& nodes = kNodesTxt) {
  return {{"sacct.txt", sacct}, {"assoc.txt", assoc}, {"nodes.txt", nodes}};
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
    s.replace(p, from.size(), to);
  return s;
}

std::vector<Case> import_cases() {
  return {
      {"SlurmSacctTimeThatIsNoDate",
       slurm_files(kSacctHeader + "7|7|alpha|ann|gpu|2026-02-30T00:00:00|None|None|00:00:00|"
                                  "PENDING||gres/gpu=1\n"),
       import_slurm(), 2,
       "sacct.txt:2:19: field 'Submit': expected a time 'YYYY-MM-DDTHH:MM:SS' from 1869-12-31 "
       "to 2070-01-01, or Unknown"},
      {"SlurmSacctValueHoldingABar",
       slurm_files(kSacctHeader + "7|7|al|pha|ann|gpu|2026-01-01T00:00:00|None|None|00:00:00|"
                                  "PENDING||gres/gpu=1\n"),
       import_slurm(), 2,
       "sacct.txt:2:68: row has 13 fields, the header has 12 (a value holding '|'"},
      {"SlurmSacctWithoutHeader", slurm_files(kSacctJob), import_slurm(), 2,
       "sacct.txt:1:3: column '7' appears twice in the header (columns 1 and 2): the first line "
       "must be the header that sacct --parsable2"},
      {"SlurmSacctNoGpuAnywhere",
       slurm_files(kSacctHeader +
                   "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|"
                   "2026-01-01T01:00:05|01:00:00|COMPLETED|cpu=2,mem=4G|cpu=2,mem=4G\n"),
       import_slurm(), 2,
       "no job to import (1 no GPUs (CPU-only)); jobs need gres/gpu in AllocTRES or ReqTRES"},
      {"SlurmSacctBadGpuCount",
       slurm_files(kSacctHeader + "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|"
                                  "2026-01-01T01:00:05|01:00:00|COMPLETED|gres/gpu=3000000000|\n"),
       import_slurm(), 2, "field 'AllocTRES': expected a GPU count in 0..100000 for 'gres/gpu'"},
      {"SlurmAssocOfTwoClusters",
       slurm_files(kSacctHeader + kSacctJob, kAssoc + "d|beta||gres/gpu=2|1\n"), import_slurm(), 2,
       "assoc.txt:3:1: field 'Cluster': expected one cluster per file"},
      {"SlurmAssocShareNotANumber",
       slurm_files(kSacctHeader + kSacctJob, "Account|Share\nalpha|lots\n"), import_slurm(), 2,
       "assoc.txt:2:7: field 'Share': expected a fair-share value 0..1e9 or parent"},
      {"SlurmNodesThatAreACsv", slurm_files(kSacctHeader + kSacctJob, kAssoc, "name,gpus\nn1,4\n"),
       import_slurm(), 2,
       "nodes.txt:1:1: expected `scontrol show nodes` output, which starts with NodeName="},
      {"SlurmGpuMemoryOutOfRange", slurm_files(kSacctHeader + kSacctJob),
       import_slurm("--gpu-memory a100=0"), 2,
       "--gpu-memory 'a100=0': expected MODEL=GIB with GIB in 0.000976562..1024"},
      {"SlurmWithoutAssociations", slurm_files(kSacctHeader + kSacctJob),
       "import slurm --sacct {d}/sacct.txt --nodes {d}/nodes.txt --out {d}/out", 2,
       "--assoc is required"},
      {"SlurmImportWritesNativeFilesOnce", slurm_files(kSacctHeader + kSacctJob), import_slurm(), 0,
       "imported 1 jobs of 1 tenants on 1 nodes (4 GPUs)", Outputs::Ignore, "",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "out" / "trace.csv"),
                   "job_id,tenant,submit_s,duration_s,gpus,user,state,slurm_first_start_s,"
                   "slurm_start_s,slurm_end_s,slurm_time_limit_s,slurm_runs\n"
                   "7,alpha,1767225600,3600,2,ann,COMPLETED,1767225605,1767225605,1767229205,,1\n");
         EXPECT_NE(read(d / "out" / "cluster.yaml").find("gpu_type: \"a100\""), std::string::npos);
         const std::string again = std::string(DEEPSHARE_BIN) + " " +
                                   replace_all(import_slurm(), "{d}", d.string()) +
                                   " > /dev/null 2> " + (d / "again.txt").string();
         EXPECT_EQ(WEXITSTATUS(std::system(again.c_str())), 2);
         EXPECT_NE(read(d / "again.txt").find("exists already (pass --force"), std::string::npos);
       }},
      // whatif: the same readers before any simulation; k8s is refused with what to do.
      {"WhatifBadSacctRefusedBeforeAnyRun",
       slurm_files(kSacctHeader + "7|7|alpha|ann|gpu|2026-02-30T00:00:00|None|None|00:00:00|"
                                  "PENDING||gres/gpu=1\n"),
       "whatif --from slurm --sacct {d}/sacct.txt --assoc {d}/assoc.txt --nodes {d}/nodes.txt "
       "--quiet --out {d}/out",
       2, "sacct.txt:2:19: field 'Submit': expected a time"},
      {"WhatifFromKubernetesWithSlurmFiles", slurm_files(kSacctHeader + kSacctJob),
       "whatif --from k8s --sacct {d}/sacct.txt --assoc {d}/assoc.txt --nodes {d}/nodes.txt "
       "--out {d}/out",
       2, "whatif --from k8s: --sacct is an option of --from slurm"},
      {"WhatifFromNowhere", slurm_files(kSacctHeader + kSacctJob),
       "whatif --from lsf --nodes {d}/nodes.txt --out {d}/out", 2,
       "whatif --from 'lsf': expected slurm or k8s"},
  };
}

// A site's Kubernetes objects (`deepshare import k8s`, issue #28): what kubectl saves.
const std::string kPod =
    R"({"metadata":{"namespace":"team-a","name":"train","creationTimestamp":)"
    R"("2026-01-01T00:00:00Z"},"spec":{"containers":[{"name":"c","resources":{"limits":)"
    R"({"nvidia.com/gpu":"2"}}}]},"status":{"phase":"Succeeded","startTime":)"
    R"("2026-01-01T00:00:05Z","containerStatuses":[{"name":"c","state":{"terminated":)"
    R"({"startedAt":"2026-01-01T00:00:05Z","finishedAt":"2026-01-01T01:00:05Z"}}}]}})";
const std::string kNodesJson =
    R"({"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"n1","labels":)"
    R"({"nvidia.com/gpu.product":"A100"}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]})";
std::string list_of(const std::string& items) {
  return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
}
Files k8s_files(const std::string& pods, const std::string& nodes = kNodesJson) {
  return {{"pods.json", pods}, {"nodes.json", nodes}};
}
std::string import_k8s(const std::string& extra = "") {
  return "import k8s --pods {d}/pods.json --nodes {d}/nodes.json --out {d}/out " + extra;
}
std::string with(std::string s, const std::string& from, const std::string& to) {
  return s.replace(s.find(from), from.size(), to);
}

std::vector<Case> k8s_cases() {
  return {
      {"K8sPodsNotJson", k8s_files("pods:\n- name: x\n"), import_k8s(), 2,
       "pods.json: not JSON (parse error at line 1, column 1"},
      {"K8sPodsWithoutNamespace", k8s_files(list_of(with(kPod, R"("namespace":"team-a",)", ""))),
       import_k8s(), 2,
       "pods.json: item 0: field 'metadata.namespace': expected a string (the field is missing)"},
      {"K8sPodsTimeWithoutZone",
       k8s_files(list_of(with(kPod, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00"))), import_k8s(),
       2,
       "pods.json: pod 'team-a/train' (item 0): field 'metadata.creationTimestamp': expected an "
       "RFC 3339 time such as 2026-12-01T09:00:00Z"},
      {"K8sPodsNegativeGpus", k8s_files(list_of(with(kPod, R"("2"})", R"(-2})"))), import_k8s(), 2,
       "field 'spec.containers[0].resources.limits.nvidia.com/gpu': expected a whole GPU count in "
       "0..100000, got '-2'"},
      {"K8sNodesWithoutGpus",
       k8s_files(list_of(kPod), list_of(R"({"metadata":{"name":"n1"},"status":{}})")), import_k8s(),
       2, "nodes.json: no node with GPUs"},
      {"K8sQueuesAlone", k8s_files(list_of(kPod)), import_k8s("--clusterqueues {d}/nodes.json"), 2,
       "--clusterqueues and --localqueues go together"},
      {"K8sImportWritesNativeFiles", k8s_files(list_of(kPod)), import_k8s(), 0,
       "imported 1 jobs of 1 tenants on 1 nodes (4 GPUs)", Outputs::Ignore, "",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "out" / "trace.csv"),
                   "job_id,tenant,submit_s,duration_s,gpus,state,k8s_start_s,k8s_end_s,k8s_node,"
                   "k8s_job\n"
                   "team-a/train,team-a,1767225600,3600,2,COMPLETED,1767225605,1767229205,,\n");
         EXPECT_NE(read(d / "out" / "cluster.yaml").find("quota_gpus: 4, class: guaranteed"),
                   std::string::npos);
       }},
      {"K8sPodsAffinityAgainstNodeSelector",
       k8s_files(list_of(with(
           kPod, R"("spec":{)",
           R"("spec":{"nodeSelector":{"nvidia.com/gpu.product":"A100"},"affinity":{"nodeAffinity":)"
           R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{)"
           R"("matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":)"
           R"(["T4"]}]}]}}},)"))),
       import_k8s(), 2,
       "pods.json: pod 'team-a/train' (item 0): field 'spec.affinity.nodeAffinity': expected the "
       "GPU model of spec.nodeSelector ('A100'), got 'T4'"},
      {"K8sPodsAffinityWithoutValues",
       k8s_files(list_of(with(
           kPod, R"("spec":{)",
           R"("spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
           R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",)"
           R"("operator":"In"}]}]}}},)"))),
       import_k8s(), 2,
       "nodeSelectorTerms[0].matchExpressions[0].values': expected a non-empty array of GPU "
       "models (operator In)"},
      {"K8sClusterQueueBadWeight",
       {{"pods.json", list_of(kPod)},
        {"nodes.json", kNodesJson},
        {"cq.json",
         list_of(R"({"metadata":{"name":"cq"},"spec":{"fairSharing":{"weight":"-2"}}})")},
        {"lq.json", list_of(R"({"metadata":{"name":"q","namespace":"team-a"},"spec":)"
                            R"({"clusterQueue":"cq"}})")}},
       import_k8s("--clusterqueues {d}/cq.json --localqueues {d}/lq.json"),
       2,
       "cq.json: ClusterQueue 'cq' (item 0): field 'spec.fairSharing.weight': expected a weight "
       "such as 1, 0.5 or 500m, in 0..1e9, got '\"-2\"'"},
      {"K8sGpuMemoryWithoutGib", k8s_files(list_of(kPod)), import_k8s("--gpu-memory a100"), 2,
       "--gpu-memory 'a100': expected MODEL=GIB"},
      {"K8sGpuMemoryOverridesTheTable", k8s_files(list_of(kPod)),
       import_k8s("--gpu-memory a100=80"), 0, "imported 1 jobs", Outputs::Ignore, "",
       [](const fs::path& d) {
         EXPECT_NE(read(d / "out" / "cluster.yaml").find("gpu_memory_gib: 80"), std::string::npos);
       }},
      {"K8sKubeconfigAndFiles", k8s_files(list_of(kPod)), import_k8s("--kubeconfig {d}/nodes.json"),
       2,
       "--pods: --kubeconfig reads the objects from the API server; give files (--pods, "
       "--nodes...) or --kubeconfig, not both"},
      {"K8sContextWithoutKubeconfig", k8s_files(list_of(kPod)), import_k8s("--context admin"), 2,
       "--context: names a context of --kubeconfig, which is not given"},
      {"WhatifFromSlurmWithKubeconfig", k8s_files(list_of(kPod)),
       "whatif --from slurm --kubeconfig {d}/nodes.json --quiet --out {d}/out", 2,
       "whatif --from slurm: --kubeconfig is an option of --from k8s"},
      {"WhatifFromKubernetesWithoutPods", k8s_files(list_of(kPod)),
       "whatif --from k8s --nodes {d}/nodes.json --quiet --out {d}/out", 2,
       "--pods: a file is required"},
      {"WhatifBadPodsRefusedBeforeAnyRun",
       k8s_files(list_of(with(kPod, "2026-01-01T00:00:00Z", "yesterday"))),
       "whatif --from k8s --pods {d}/pods.json --nodes {d}/nodes.json --quiet --out {d}/out", 2,
       "field 'metadata.creationTimestamp': expected an RFC 3339 time"},
  };
}

INSTANTIATE_TEST_SUITE_P(SiteRecords, BadInput, ::testing::ValuesIn(import_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(KubernetesObjects, BadInput, ::testing::ValuesIn(k8s_cases()), case_name);

}  // namespace
}  // namespace ds::bad_input
