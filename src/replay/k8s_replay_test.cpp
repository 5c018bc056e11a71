// Unit tests of the Kubernetes replay's parts without a server (src/replay/k8s_*): the
// objects it creates and the tracker that turns pod events into runs and run ends.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "replay/k8s_objects.hpp"
#include "replay/k8s_tracker.hpp"

namespace ds::k8s {
namespace {

TEST(K8sObjects, DnsLabels) {
  EXPECT_EQ(dns_label("Job_765472"), "job-765472");
  EXPECT_EQ(dns_label("--a..b--"), "a-b");
  EXPECT_EQ(dns_label("___"), "x");
  EXPECT_EQ(dns_label("abcdef", 3), "abc");
  EXPECT_EQ(dns_label("ab-cdef", 3), "ab");
  EXPECT_THROW(parse_scheduler("slurm"), InputError);
  EXPECT_EQ(parse_scheduler("kueue"), Scheduler::Kueue);
}

TEST(K8sObjects, JobPerScheduler) {
  JobRequest r{"job-1", "ewi", "1", "r7", 2, Scheduler::Default, "ewi"};
  json j = job(r);
  const json& pod = j["spec"]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 0);
  EXPECT_EQ(j["spec"]["template"]["metadata"]["labels"][kReplayLabel], "r7");
  EXPECT_EQ(j["spec"]["template"]["metadata"]["labels"][kTraceJobLabel], "1");
  EXPECT_FALSE(j["spec"].contains("suspend"));
  EXPECT_FALSE(pod.contains("schedulerName"));
  EXPECT_FALSE(j["metadata"]["labels"].contains(kQueueNameLabel));
  r.scheduler = Scheduler::Kueue;
  j = job(r);
  EXPECT_EQ(j["spec"]["suspend"], true);
  EXPECT_EQ(j["metadata"]["labels"][kQueueNameLabel], "ewi");
  r.scheduler = Scheduler::DeepShare;
  j = job(r);
  EXPECT_EQ(j["spec"]["template"]["spec"]["schedulerName"], "deepshare");
  EXPECT_FALSE(j["spec"].contains("suspend"));
}

TEST(K8sObjects, KueueQueuesShareOneCohortWithReclaim) {
  KueueSetup s;
  s.queues = {{"ewi", "ewi", 6}, {"hvq", "hvq", 4}};
  const json cq = cluster_queue(s, s.queues[1]);
  EXPECT_EQ(cq["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(cq["spec"]["cohortName"], "deepshare");
  EXPECT_EQ(cq["spec"]["preemption"]["reclaimWithinCohort"], "Any");
  EXPECT_EQ(cq["spec"]["preemption"]["withinClusterQueue"], "LowerPriority");
  const json& fl = cq["spec"]["resourceGroups"][0]["flavors"][0];
  EXPECT_EQ(fl["name"], "gpu");
  EXPECT_EQ(fl["resources"][0]["nominalQuota"], 4);
  EXPECT_FALSE(fl["resources"][0].contains("borrowingLimit"));
  EXPECT_EQ(cq["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"], "hvq");
  EXPECT_EQ(local_queue(s.queues[0])["spec"]["clusterQueue"], "ewi");
  EXPECT_FALSE(resource_flavor(s)["spec"].contains("nodeLabels"));
  s.flavor_node_labels = {{"pool", "a"}};
  EXPECT_EQ(resource_flavor(s)["spec"]["nodeLabels"]["pool"], "a");
}

TEST(K8sTracker, Rfc3339) {
  EXPECT_EQ(rfc3339_seconds("1970-01-01T00:01:40Z"), 100);
  EXPECT_EQ(rfc3339_seconds("2026-12-01T21:00:05.250Z"), rfc3339_seconds("2026-12-01T21:00:05Z"));
  EXPECT_EQ(rfc3339_seconds("yesterday"), -1);
  EXPECT_EQ(rfc3339_ms(100250), "1970-01-01T00:01:40.250Z");
}

// A pod of job `label` in some state.
json pod(const std::string& label, const std::string& uid, const std::string& node,
         const std::string& phase, bool terminating = false, bool annotated = false) {
  json p = {{"metadata",
             {{"name", "p-" + uid},
              {"namespace", "t0"},
              {"uid", uid},
              {"labels", {{kTraceJobLabel, label}}}}},
            {"spec", {{"nodeName", node}}},
            {"status", {{"phase", phase}, {"startTime", "1970-01-01T00:00:10Z"}}}};
  if (terminating) p["metadata"]["deletionTimestamp"] = "1970-01-01T00:00:20Z";
  if (annotated) p["metadata"]["annotations"][kRunUntil] = "x";
  return p;
}

struct Fixture {
  Workload w;
  driver::DriverClock clock;
  Fixture() {
    w = testing::make_workload(2, 1, 4);  // t0, t1: quota 4 each, nodes n0, n1 of 4 GPUs
    w.cluster.nodes[0].name = "a";
    w.cluster.nodes[1].name = "b";
    w.tenants[0].checkpoint_interval = seconds(600);  // 5 wall s at scale 120
    testing::add_job(w, 0, 2, 0, 2400);               // 20 wall s of work
    testing::add_job(w, 0, 3, 0, 1200);               // 10 wall s
    w.finalize();
    clock.wall0_ms = 0;
    clock.scale = 120;
  }
};

TEST(K8sTracker, RunsEndWithTheirWorkAndRestartsKeepCheckpoints) {
  Fixture f;
  PodTracker t(f.w, {"0", "1"}, 120, f.clock);
  t.submitted(0, 0, 0);
  t.submitted(1, 0, 0);
  EXPECT_FALSE(t.observe(pod("0", "u1", "", "Pending"), false, 100));
  EXPECT_FALSE(t.observe(pod("0", "u1", "a", "Pending"), false, 200));  // bound
  const auto end = t.observe(pod("0", "u1", "a", "Running"), false, 300);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->until_wall_ms, 300 + 20000);
  EXPECT_EQ(end->pod, "p-u1");
  // already annotated: nothing to write; not annotated: written again
  EXPECT_FALSE(t.observe(pod("0", "u1", "a", "Running", false, true), false, 400));
  EXPECT_TRUE(t.observe(pod("0", "u1", "a", "Running"), false, 450));
  // the second job borrows (its tenant's 2 running GPUs + 3 > quota 4)
  ASSERT_TRUE(t.observe(pod("1", "v1", "b", "Running"), false, 500));
  const auto& o = t.observed();
  EXPECT_EQ(o[0].runs[0].placement[0].gpu_mask, 0b11u);
  EXPECT_FALSE(o[0].runs[0].borrowed);
  EXPECT_EQ(o[1].runs[0].placement[0].gpu_mask, 0b111u);
  EXPECT_TRUE(o[1].runs[0].borrowed);
  EXPECT_EQ(o[0].runs[0].decided, f.clock.at(200));
  // preempted after 12.3 s of work: two 5 s checkpoints kept
  EXPECT_FALSE(t.observe(pod("0", "u1", "a", "Running", true), false, 12600));
  EXPECT_TRUE(o[0].runs[0].preempted);
  EXPECT_EQ(o[0].runs[0].end, f.clock.at(12600));
  // a new pod of the job, on node a again (the preempted run freed its GPUs)
  const auto again = t.observe(pod("0", "u2", "a", "Running"), false, 15000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->until_wall_ms, 15000 + 333 + 10000);  // overhead (40 s / 120) + 10 s left
  EXPECT_EQ(o[0].runs[1].placement[0].gpu_mask, 0b11u);
  EXPECT_EQ(t.restarts_patched(), 1u);
  // late news of the old pod changes nothing
  EXPECT_FALSE(t.observe(pod("0", "u1", "a", "Running", true), true, 15100));
  EXPECT_EQ(o[0].runs.size(), 2u);
  EXPECT_FALSE(t.observe(pod("0", "u2", "a", "Succeeded"), false, 25400));
  EXPECT_TRUE(o[0].completed);
  EXPECT_FALSE(o[0].runs[1].preempted);
  EXPECT_EQ(t.completed(), 1u);
  EXPECT_EQ(t.api_times()[0].started, 10);
}

TEST(K8sTracker, PreemptedDuringTheOverheadKeepsItsProgressAndRelistEndsVanishedRuns) {
  Fixture f;
  PodTracker t(f.w, {"0", "1"}, 120, f.clock);
  ASSERT_TRUE(t.observe(pod("0", "u1", "a", "Running"), false, 0));
  EXPECT_FALSE(t.observe(pod("0", "u1", "a", "Running"), true, 6000));  // deleted: 1 ckpt
  ASSERT_TRUE(t.observe(pod("0", "u2", "a", "Running"), false, 7000));
  EXPECT_FALSE(t.observe(pod("0", "u2", "a", "Failed"), false, 7200));  // within overhead
  const auto third = t.observe(pod("0", "u3", "a", "Running"), false, 8000);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->until_wall_ms, 8000 + 333 + 15000);
  t.relisted({"other"}, 9000);  // u3 is gone from the list
  EXPECT_TRUE(t.observed()[0].runs.back().preempted);
  EXPECT_EQ(t.observed()[0].runs.size(), 3u);
  // a pod that never ran and is deleted leaves no run
  EXPECT_FALSE(t.observe(pod("1", "w1", "", "Pending", true), true, 9100));
  EXPECT_TRUE(t.observed()[1].runs.empty());
  EXPECT_THROW(PodTracker(f.w, {"0", "0"}, 120, f.clock), InputError);
}

}  // namespace
}  // namespace ds::k8s
