// The Kubernetes adapter without a server: Pod and Node objects as the API writes them ->
// what the driver core sees (phases, tenants, placements, GPUs held outside), and the
// hand-over's own check that the API shows the GPUs free before it binds. What needs the API
// (binding, eviction, Events) is tested on a real control plane: tests/k8s/deepshare_run_test.sh.
#include "k8s/adapter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>

#include "registry/registry.hpp"

namespace ds::k8s {
namespace {

json node(const std::string& name, int gpus, bool ready = true, bool cordoned = false) {
  return {
      {"metadata", {{"name", name}, {"uid", "node-" + name}}},
      {"spec", {{"unschedulable", cordoned}}},
      {"status",
       {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

json pod(const std::string& uid, const std::string& ns, int gpus,
         const std::string& scheduler = "deepshare") {
  json limits = {{"nvidia.com/gpu", std::to_string(gpus)}, {"cpu", "1"}};
  return {{"metadata",
           {{"uid", uid},
            {"namespace", ns},
            {"name", "p-" + uid},
            {"creationTimestamp", "2026-12-04T10:00:00Z"},
            {"ownerReferences",
             json::array(
                 {{{"kind", "Job"}, {"name", "j"}, {"uid", "j" + uid}, {"controller", true}}})}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers", json::array({{{"name", "c"}, {"resources", {{"limits", limits}}}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

json bound(json p, const std::string& node_name, const std::string& phase = "Running") {
  p["spec"]["nodeName"] = node_name;
  p["status"]["phase"] = phase;
  return p;
}

TEST(K8sPods, ReadsGpusStateAndDecision) {
  json p = bound(pod("u1", "a", 2), "gpu-node-1");
  p["metadata"]["annotations"] = {
      {kGpusAnnotation, "gpu-node-1:2,3"},
      {kDecisionAnnotation, "borrowed=1,shared=0,decided=4500,epoch=7"}};
  p["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  const auto v = pod_view(p);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->gpus, 2);
  EXPECT_EQ(v->ref(), "a/p-u1");
  EXPECT_TRUE(v->bound() && v->terminating && v->controlled && v->holds_gpus());
  EXPECT_EQ(v->decision_node, "gpu-node-1");
  EXPECT_EQ(v->decision_gpus, (std::vector<int>{2, 3}));
  EXPECT_TRUE(v->decision_borrowed);
  EXPECT_EQ(v->decision_ms, 4500);
  EXPECT_EQ(v->decision_epoch, 7u);
  EXPECT_EQ(decision_annotation(true, false, 4500, 7), "borrowed=1,shared=0,decided=4500,epoch=7");
  // requests only (the API copies them to limits; a hand-written object may not), two
  // containers, a gate.
  json q = pod("u2", "a", 0);
  q["spec"]["containers"] =
      json::array({{{"name", "x"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}},
                   {{"name", "y"}, {"resources", {{"limits", {{"nvidia.com/gpu", 3}}}}}}});
  q["spec"]["schedulingGates"] = json::array({{{"name", "wait"}}});
  const auto w = pod_view(q);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->gpus, 4);
  EXPECT_TRUE(w->gated);
  EXPECT_FALSE(w->bound());
  // malformed decision, bad quantities
  p["metadata"]["annotations"][kGpusAnnotation] = "gpu-node-1:x";
  EXPECT_EQ(pod_view(p)->decision_node, "");
  EXPECT_EQ(gpu_quantity("2k"), -1);
  EXPECT_EQ(gpu_quantity("-1"), -1);
  EXPECT_FALSE(pod_view(json::object()));
  EXPECT_EQ(gpus_annotation("n", {0, 5}), "n:0,5");
}

// An eviction's grace period: the pod's own, bounded by its tenant's (grace.hpp), so that a
// pod asking for hours cannot keep reclaimed GPUs that long.
TEST(K8sPods, EvictionGraceIsThePodsBoundedByItsTenants) {
  json p = pod("u1", "a", 1);
  EXPECT_EQ(pod_view(p)->grace_s, 30) << "the API's default when the pod names none";
  p["spec"]["terminationGracePeriodSeconds"] = 86400;
  const PodView hours = *pod_view(p);
  EXPECT_EQ(hours.grace_s, 86400);
  p["spec"]["terminationGracePeriodSeconds"] = 2;
  const PodView quick = *pod_view(p);
  GracePeriods g;
  EXPECT_EQ(g.for_pod(hours), 30);
  EXPECT_EQ(g.for_pod(quick), 2) << "a pod that asks for less gets less";
  g.default_s = 0;
  g.by_namespace["a"] = 600;  // tenant a checkpoints: up to 10 minutes
  EXPECT_EQ(g.for_pod(hours), 600);
  EXPECT_EQ(g.for_pod(quick), 2);
  p["metadata"]["namespace"] = "b";
  EXPECT_EQ(g.for_pod(*pod_view(p)), 0) << "other tenants: the default";
}

TEST(K8sPods, NodeUsableWhenReadyAndNotCordoned) {
  EXPECT_TRUE(node_view(node("n", 8))->usable());
  EXPECT_FALSE(node_view(node("n", 8, false))->usable());
  EXPECT_FALSE(node_view(node("n", 8, true, true))->usable());
  EXPECT_EQ(node_view(node("n", 8))->gpus, 8);
}

// A server nobody listens on: every call fails at once, without a network.
Kubeconfig unreachable() {
  Kubeconfig k;
  k.server = "https://127.0.0.1:9";
  return k;
}

struct Harness {
  // `dra`: a third GPU node, "dra-node", publishes 4 GPUs as DRA devices (no nvidia.com/gpu).
  explicit Harness(bool dra = false) : client(unreachable()) {
    for (int t = 0; t < 2; ++t) {
      Tenant x;
      x.id = TenantId(static_cast<std::uint32_t>(t));
      x.name = t == 0 ? "a" : "b";
      x.quota_gpus = 4;
      tenants.push_back(x);
    }
    adapter = std::make_unique<K8sAdapter>(
        client, log, journal, fence,
        std::map<std::string, TenantId>{{"a", tenants[0].id}, {"b", tenants[1].id}});
    nodes = {node("gpu-node-2", 4), node("gpu-node-1", 4), node("cpu-node", 0)};
    if (dra) {
      nodes.push_back(node("dra-node", 0));
      devices["dra-node"] = NodeDevices{"dra-node", {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}};
      adapter->use_dra(claims, devices, DraConfig{});
    }
    adapter->load_nodes(views(), kDefaultGpuMemoryMib);
    core = std::make_unique<driver::Core>(adapter->cluster(), tenants, *adapter, log, journal,
                                          driver::Timing{});
    const PolicyContext ctx{adapter->cluster(), tenants, options};
    core->set_policy(make_policy("fifo-pooled", ctx), false);
    adapter->attach(*core);
  }
  // One cycle up to the policy (no decisions applied: those would call the API).
  driver::Observation fold(const std::vector<json>& pods) {
    std::vector<std::shared_ptr<const json>> objects;
    for (const auto& p : pods) objects.push_back(std::make_shared<const json>(p));
    return fold_objects(objects);
  }
  // As the scheduler's cycle hands them over: the informer's shared, immutable objects.
  driver::Observation fold_objects(const std::vector<std::shared_ptr<const json>>& pods) {
    wall += 1000;
    core->set_time(wall, wall);
    adapter->set_cycle(pods, views(), wall, wall, clock);
    core->observe_nodes(*adapter->nodes());
    obs = *adapter->observe();
    core->fold(obs);
    adapter->sync_held();
    return obs;
  }
  // With `binder`: folds a waiting 4-GPU pod "w" of tenant a in, decides it on gpu-node-1 and
  // hands it over (sent to the binder); returns its object, the same in the cycles after.
  std::shared_ptr<const json> start_with(Binder& binder) {
    adapter->use_binder(&binder);
    auto object = std::make_shared<const json>(pod("w", "a", 4));
    fold_objects({object});
    const JobId id = *core->book().find("w");
    adapter->decided(StartJob{id, Placement{NodeAlloc{NodeId(0), 0b1111}}, false, false}, 0, false);
    EXPECT_EQ(adapter->hand_over(id), driver::Actuator::Handover::Sent);
    return object;
  }
  std::vector<NodeView> views() const {
    std::vector<NodeView> v = node_views(nodes);
    add_dra_gpus(v, devices);
    return v;
  }
  const driver::EngineJob* job(const std::string& uid) const {
    for (const auto& j : obs.jobs)
      if (j.key == uid) return &j;
    return nullptr;
  }

  Client client;
  std::FILE* null = std::fopen("/dev/null", "w");
  driver::Log log{null, true};
  driver::Journal journal;
  driver::Fence fence{log, journal};
  std::vector<Tenant> tenants;
  PolicyOptions options;
  std::vector<json> nodes;
  std::unique_ptr<K8sAdapter> adapter;
  std::unique_ptr<driver::Core> core;
  driver::DriverClock clock;
  driver::Observation obs;
  std::int64_t wall = 1'800'000'000'000;
  ClaimIndex claims;  // Harness(true): the claims the adapter reads
  NodeDeviceMap devices;
};

// A pod's nodeSelector and required node affinity, as the API defines them (node_rules.hpp).
TEST(K8sPods, NodeRulesAsTheApiDefinesThem) {
  json p = pod("u1", "a", 1);
  EXPECT_TRUE(pod_view(p)->rules.empty());
  p["spec"]["nodeSelector"] = {{"gpu", "a100"}};
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
   ["nodeSelectorTerms"] = json::array(
       {{{"matchExpressions",
          json::array({{{"key", "zone"}, {"operator", "In"}, {"values", {"z1", "z2"}}},
                       {{"key", "mem"}, {"operator", "Gt"}, {"values", {"40"}}}})}},
        {{"matchFields",
          json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"n9"}}}})}}});
  const NodeRules r = pod_view(p)->rules;
  EXPECT_FALSE(r.empty());
  EXPECT_TRUE(r.admit("n1", {{"gpu", "a100"}, {"zone", "z2"}, {"mem", "80"}}));
  EXPECT_FALSE(r.admit("n1", {{"gpu", "a100"}, {"zone", "z2"}, {"mem", "40"}})) << "Gt is strict";
  EXPECT_FALSE(r.admit("n1", {{"gpu", "a100"}, {"zone", "z3"}, {"mem", "80"}}));
  EXPECT_FALSE(r.admit("n1", {{"zone", "z2"}, {"mem", "80"}})) << "the selector's label missing";
  EXPECT_TRUE(r.admit("n9", {{"gpu", "a100"}})) << "the second term: its name";
  EXPECT_FALSE(r.admit("n9", {{"gpu", "v100"}})) << "the selector holds in every case";
  NodeRequirement absent{"taint", NodeRequirement::Op::NotIn, {"x"}, false};
  EXPECT_TRUE(absent.holds("n", {})) << "NotIn holds where the label is absent";
  absent.op = NodeRequirement::Op::DoesNotExist;
  EXPECT_FALSE(absent.holds("n", {{"taint", "y"}}));
  // An operator the API does not define: the rules cannot be read, no node admits the pod.
  json q = pod("u2", "a", 1);
  q["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
   ["nodeSelectorTerms"] = json::array(
       {{{"matchExpressions",
          json::array({{{"key", "zone"}, {"operator", "Near"}, {"values", {"z1"}}}})}}});
  const NodeRules bad = pod_view(q)->rules;
  EXPECT_NE(bad.invalid.find("Near"), std::string::npos) << bad.invalid;
  EXPECT_FALSE(bad.admit("n1", {{"zone", "z1"}}));
  json n = node("n", 8);
  n["metadata"]["labels"] = {{"gpu", "a100"}};
  EXPECT_EQ(node_view(n)->labels->at("gpu"), "a100");
}

// DeepShare binds pods itself, so a pod's nodeSelector and required node affinity become its
// job's node mask (the kubelet would reject a pod bound elsewhere); a pod no GPU node admits is
// refused with the reason.
TEST(K8sAdapter, PodsRunOnlyWhereTheirNodeRulesAllow) {
  Harness h;
  h.nodes[0]["metadata"]["labels"] = {{"gpu", "v100"}};  // gpu-node-2: the model's node 1
  h.nodes[1]["metadata"]["labels"] = {{"gpu", "a100"}};  // gpu-node-1: node 0
  json a100 = pod("s1", "a", 1);
  a100["spec"]["nodeSelector"] = {{"gpu", "a100"}};
  json v100 = pod("s2", "a", 1);
  v100["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
      ["nodeSelectorTerms"] = json::array(
          {{{"matchExpressions",
             json::array({{{"key", "gpu"}, {"operator", "In"}, {"values", {"v100", "h100"}}}})}}});
  json h100 = pod("s4", "a", 1);
  h100["spec"]["nodeSelector"] = {{"gpu", "h100"}};
  h.fold({a100, v100, pod("s3", "a", 1), h100});
  ASSERT_TRUE(h.job("s1") && h.job("s2") && h.job("s3"));
  const auto mask = [&](const char* uid) {
    return h.core->state().spec(*h.core->book().find(uid)).allowed_nodes;
  };
  EXPECT_EQ(mask("s1"), (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(mask("s2"), (std::vector<std::uint8_t>{0, 1}));
  EXPECT_TRUE(mask("s3").empty()) << "no rules: every node";
  EXPECT_FALSE(h.job("s4")) << "no GPU node has gpu=h100";
  EXPECT_EQ(h.adapter->counters().refused, 1u);
  // The policy places them accordingly.
  const Decisions d = h.core->decide();
  for (const StartJob& s : d.start) {
    const std::string& key = h.core->book()[s.job].key;
    if (key == "s1") {
      EXPECT_EQ(s.placement.front().node, NodeId(0));
    } else if (key == "s2") {
      EXPECT_EQ(s.placement.front().node, NodeId(1));
    }
  }
  EXPECT_EQ(d.start.size(), 3u);
}

// Quantities as the API writes them (node_room.hpp), in thousandths of their unit.
TEST(K8sPods, QuantitiesAsTheApiWritesThem) {
  EXPECT_EQ(quantity_milli("500m"), 500);
  EXPECT_EQ(quantity_milli("2"), 2000);
  EXPECT_EQ(quantity_milli(3), 3000);
  EXPECT_EQ(quantity_milli("0.1"), 100);
  EXPECT_EQ(quantity_milli("1.5"), 1500);
  EXPECT_EQ(quantity_milli("64Gi"), 64LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(quantity_milli("128M"), 128'000'000'000LL);
  EXPECT_EQ(quantity_milli("1e9"), 1'000'000'000'000LL);
  EXPECT_EQ(quantity_milli("1k"), 1'000'000);
  EXPECT_EQ(quantity_milli("250u"), 1) << "rounded up";
  EXPECT_EQ(quantity_milli("1Gb"), -1);
  EXPECT_EQ(quantity_milli("-1"), -1);
  EXPECT_EQ(quantity_milli(""), -1);
  EXPECT_EQ(quantity_milli("1.2.3"), -1);
  // A pod's requests: containers summed (limits where a request is absent), an init
  // container's when larger, the overhead added.
  const json spec = {
      {"containers",
       json::array(
           {{{"name", "a"}, {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}},
            {{"name", "b"}, {"resources", {{"limits", {{"cpu", "500m"}, {"memory", "1Gi"}}}}}}})},
      {"initContainers",
       json::array(
           {{{"name", "i"}, {"resources", {{"requests", {{"cpu", "4"}, {"memory", "1Mi"}}}}}}})},
      {"overhead", {{"memory", "1Mi"}}}};
  const Requests r = pod_requests(spec);
  EXPECT_EQ(r.cpu_milli, 4000) << "the init container's";
  EXPECT_EQ(r.memory_bytes, 2LL * 1024 * 1024 * 1024 + 1024 * 1024);
  EXPECT_EQ(r.pods, 1);
  EXPECT_EQ(room_refusal({64000, 64LL << 30, 110}, {63000, 0, 1}, {2000, 0, 1}),
            "pods there request 63000m of its 64000m CPU, this start 2000m");
  EXPECT_EQ(room_refusal({0, 0, 0}, {63000, 0, 1}, {2000, 0, 1}), "") << "unknown: no limit";
  // Host ports: protocol TCP and IP 0.0.0.0 unless written; they conflict on the same
  // protocol and port when the IPs are equal or either is 0.0.0.0.
  const json ports = {
      {"containers",
       json::array(
           {{{"name", "a"},
             {"ports",
              json::array({{{"containerPort", 80}},
                           {{"hostPort", 8080}},
                           {{"hostPort", 53}, {"protocol", "UDP"}, {"hostIP", "10.0.0.1"}}})}}})}};
  EXPECT_EQ(host_ports(ports), (std::vector<std::string>{"TCP/0.0.0.0/8080", "UDP/10.0.0.1/53"}));
  EXPECT_EQ(port_conflict({"TCP/10.0.0.2/8080"}, {"TCP/0.0.0.0/8080"}), "TCP/0.0.0.0/8080");
  EXPECT_EQ(port_conflict({"UDP/10.0.0.2/53"}, {"UDP/10.0.0.1/53"}), "") << "other IPs";
  EXPECT_EQ(port_conflict({"TCP/0.0.0.0/53"}, {"UDP/10.0.0.1/53"}), "") << "another protocol";
  EXPECT_EQ(port_conflict({"TCP/0.0.0.0/8081"}, {"TCP/0.0.0.0/8080"}), "");
}

// The kubelet admits a pod only where its CPU and memory requests fit the node's allocatable
// beside the pods already there (node_room.hpp): a start beside a pod that holds most of a
// node's memory moves to a node with room, a hand-over waits while the API shows none, and a
// pod that no GPU node could ever admit is refused.
TEST(K8sAdapter, StartsGoWhereTheKubeletHasRoom) {
  Harness h;
  for (auto& n : h.nodes) n["status"]["allocatable"]["memory"] = "64Gi";
  const auto sized = [](json p, const char* memory) {
    p["spec"]["containers"][0]["resources"]["limits"]["memory"] = memory;
    return p;
  };
  const json big = sized(bound(pod("big", "a", 2), "gpu-node-1"), "40Gi");
  const json next = sized(pod("next", "a", 2), "40Gi");
  const json small = sized(pod("small", "a", 2), "20Gi");
  const json huge = sized(pod("huge", "a", 1), "100Gi");
  h.fold({big, next, small, huge});
  EXPECT_FALSE(h.job("huge")) << "no GPU node allocates 100Gi";
  EXPECT_EQ(h.adapter->counters().refused, 1u);
  const JobId n = *h.core->book().find("next"), s = *h.core->book().find("small");
  // gpu-node-1 (node 0): big holds GPUs 0-1 and 40Gi; 2, 3 are free, 24Gi are left.
  const StartJob beside{n, Placement{NodeAlloc{NodeId(0), 0b1100}}, false, false};
  const auto moved = h.adapter->place(beside);
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, (Placement{NodeAlloc{NodeId(1), 0b0011}})) << "to gpu-node-2, which has room";
  const StartJob fits{s, Placement{NodeAlloc{NodeId(0), 0b1100}}, false, false};
  EXPECT_EQ(h.adapter->place(fits), fits.placement) << "20Gi fit beside 40Gi";
  // Handed over where the API shows no room (decided elsewhere): the binding waits.
  h.adapter->decided(beside, 0, false);
  EXPECT_EQ(h.adapter->hand_over(n), driver::Actuator::Handover::NotYet);
}

// A host port is the node's once a pod binds it: a pod asking the same port goes to another
// node, and the pods of a gang that bind one run one per node (the kubelet refuses a second).
TEST(K8sAdapter, PodsThatBindAHostPortRunOnePerNode) {
  Harness h;
  const auto port = [](json p) {
    p["spec"]["containers"][0]["ports"] =
        json::array({{{"containerPort", 8080}, {"hostPort", 8080}}});
    return p;
  };
  json member = port(pod("g0", "a", 1)), other = port(pod("g1", "a", 1));
  for (json* m : {&member, &other}) {
    (*m)["metadata"]["labels"][kGangLabel] = "web";
    (*m)["metadata"]["annotations"][kGangSizeAnnotation] = "2";
  }
  h.fold(
      {port(bound(pod("holder", "a", 1), "gpu-node-1")), port(pod("solo", "a", 1)), member, other});
  const JobId solo = *h.core->book().find("solo");
  const StartJob beside{solo, Placement{NodeAlloc{NodeId(0), 0b0010}}, false, false};
  EXPECT_EQ(h.adapter->place(beside), (Placement{NodeAlloc{NodeId(1), 0b0001}}))
      << "gpu-node-1's port 8080 is holder's";
  const JobId gang = *h.core->book().find("gang:a/web");
  const StartJob packed{gang, Placement{NodeAlloc{NodeId(1), 0b0110}}, false, false};
  EXPECT_FALSE(h.adapter->place(packed))
      << "one pod per node, and gpu-node-1's port is taken: no room for the second";
}

// A pod that asks for GPUs through DRA claims (dra.hpp) asks for their count, runs only on
// nodes that publish GPUs as devices (here one of three: nvidia.com/gpu pods stay off it), waits
// while its claim is not made yet, and is refused with the reason when DeepShare cannot
// allocate its claim (another DeviceClass, a claim reserved for another pod, both ways at once).
TEST(K8sAdapter, PodsAskForGpusThroughDraClaims) {
  Harness h(true);
  ASSERT_EQ(h.adapter->cluster().nodes.size(), 3u);
  EXPECT_EQ(h.adapter->cluster().nodes[0].name, "dra-node");
  EXPECT_EQ(h.adapter->cluster().nodes[0].gpus, 4);
  const auto with_claim = [](const std::string& uid, const std::string& claim) {
    json p = pod(uid, "a", 0);
    p["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
    p["spec"]["resourceClaims"] =
        json::array({{{"name", "gpus"}, {"resourceClaimTemplateName", "two-gpus"}}});
    if (!claim.empty())
      p["status"]["resourceClaimStatuses"] =
          json::array({{{"name", "gpus"}, {"resourceClaimName", claim}}});
    return p;
  };
  const auto claim_of = [](const std::string& name, const std::string& cls, int count) {
    return std::make_shared<const json>(
        json{{"metadata", {{"namespace", "a"}, {"name", name}, {"uid", "c-" + name}}},
             {"spec",
              {{"devices",
                {{"requests",
                  json::array({{{"name", "gpu"},
                                {"exactly", {{"deviceClassName", cls}, {"count", count}}}}})}}}}}});
  };
  json reserved = *claim_of("c-held", "gpu.nvidia.com", 1);
  reserved["status"] = {
      {"allocation", {{"devices", {{"results", json::array()}}}}},
      {"reservedFor", json::array({{{"resource", "pods"}, {"name", "x"}, {"uid", "other"}}})}};
  h.claims.update({claim_of("c-two", "gpu.nvidia.com", 2), claim_of("c-fpga", "fpga.x", 1),
                   std::make_shared<const json>(reserved)},
                  DraConfig{});
  json both = with_claim("both", "c-two");
  both["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
  h.fold({with_claim("d1", "c-two"), with_claim("later", ""), with_claim("fpga", "c-fpga"),
          with_claim("held", "c-held"), both, pod("n1", "a", 1)});
  ASSERT_TRUE(h.job("d1"));
  EXPECT_EQ(h.job("d1")->spec.gpus, 2) << "the claim's count";
  const auto mask = [&](const char* uid) {
    return h.core->state().spec(*h.core->book().find(uid)).allowed_nodes;
  };
  EXPECT_EQ(mask("d1"), (std::vector<std::uint8_t>{1, 0, 0})) << "the DRA node only";
  EXPECT_EQ(mask("n1"), (std::vector<std::uint8_t>{0, 1, 1})) << "the nvidia.com/gpu nodes";
  EXPECT_FALSE(h.job("later")) << "its claim is not made yet: it waits, unrefused";
  EXPECT_FALSE(h.job("fpga"));
  EXPECT_FALSE(h.job("held"));
  EXPECT_FALSE(h.job("both"));
  EXPECT_EQ(h.adapter->counters().refused, 3u) << "fpga, held, both";
  // Once its claim is listed the waiting pod is a job too.
  h.claims.update(
      {claim_of("c-two", "gpu.nvidia.com", 2), claim_of("c-later", "gpu.nvidia.com", 3)},
      DraConfig{});
  h.fold({with_claim("d1", "c-two"), with_claim("later", "c-later"), pod("n1", "a", 1)});
  ASSERT_TRUE(h.job("later"));
  EXPECT_EQ(h.job("later")->spec.gpus, 3);
  // A bound DRA pod holds its claim's GPUs of its node, as the API counts them.
  h.fold({bound(with_claim("d1", "c-two"), "dra-node"), with_claim("later", "c-later")});
  ASSERT_TRUE(h.job("d1"));
  EXPECT_EQ(h.job("d1")->spec.gpus, 2);
}

// A DRA pod another scheduler placed holds the devices its claims name: those GPUs of its node
// exactly, not any free ones (DeepShare must not allocate them again); one of DeepShare's own
// pods without its decision annotation is adopted on its claims' GPUs.
TEST(K8sAdapter, ClaimsOfPodsOutsideTheModelHoldTheirDevices) {
  Harness h(true);
  const auto allocated = [](const std::string& name, const std::vector<std::string>& devices) {
    json results = json::array();
    for (const auto& d : devices)
      results.push_back(
          {{"request", "gpu"}, {"driver", "gpu.nvidia.com"}, {"pool", "dra-node"}, {"device", d}});
    return std::make_shared<const json>(
        json{{"metadata", {{"namespace", "a"}, {"name", name}, {"uid", "c-" + name}}},
             {"spec",
              {{"devices",
                {{"requests", json::array({{{"name", "gpu"},
                                            {"exactly",
                                             {{"deviceClassName", "gpu.nvidia.com"},
                                              {"count", static_cast<int>(devices.size())}}}}})}}}}},
             {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}});
  };
  const auto on_dra = [](const std::string& uid, const std::string& claim,
                         const std::string& scheduler) {
    json p = bound(pod(uid, "a", 0, scheduler), "dra-node");
    p["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
    p["spec"]["resourceClaims"] = json::array({{{"name", "gpus"}, {"resourceClaimName", claim}}});
    return p;
  };
  h.claims.update({allocated("theirs", {"gpu-1", "gpu-2"}), allocated("ours", {"gpu-3"})},
                  DraConfig{});
  h.fold({on_dra("other", "theirs", "default-scheduler"), on_dra("mine", "ours", "deepshare")});
  const std::size_t first = h.adapter->cluster().nodes[0].first_gpu;  // dra-node
  EXPECT_TRUE(h.core->state().gpu_available(first + 0));
  EXPECT_FALSE(h.core->state().gpu_available(first + 1)) << "gpu-1: the other scheduler's claim";
  EXPECT_FALSE(h.core->state().gpu_available(first + 2)) << "gpu-2";
  const JobId mine = *h.core->book().find("mine");
  ASSERT_EQ(h.core->state().runtime(mine).placement.size(), 1u);
  EXPECT_EQ(h.core->state().runtime(mine).placement[0].gpu_mask, 0b1000u) << "gpu-3, its claim's";
}

// MPS pairs on DRA devices: a node whose devices allow several allocations may colocate
// (nodes() marks every other node unshareable), a DRA pod that declares its GPU memory is
// colocatable with that memory, and a shared start on its partner's GPU is neither moved nor
// held back by the partner's GPUs on a full node; once bound, the shared pod is not counted on
// top of its partner in the API's count of the node's GPUs (it sits on its partner's).
TEST(K8sAdapter, MpsPairsOnShareableDevices) {
  Harness h(true);
  h.devices["dra-node"].shareable = true;
  const auto claim_of = [](const std::string& name, int count) {
    return std::make_shared<const json>(json{
        {"metadata", {{"namespace", "a"}, {"name", name}, {"uid", "c-" + name}}},
        {"spec",
         {{"devices",
           {{"requests",
             json::array(
                 {{{"name", "gpu"},
                   {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", count}}}}})}}}}}});
  };
  const auto dra_pod = [](const std::string& uid, const std::string& claim, const char* memory) {
    json p = pod(uid, "a", 0);
    p["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
    p["spec"]["resourceClaims"] = json::array({{{"name", "gpus"}, {"resourceClaimName", claim}}});
    p["metadata"]["annotations"] = {{kGpuMemoryAnnotation, memory}};
    return p;
  };
  const auto on = [](json p, const std::string& gpus, bool shared = false) {
    p = bound(std::move(p), "dra-node");
    p["metadata"]["annotations"][kGpusAnnotation] = "dra-node:" + gpus;
    p["metadata"]["annotations"][kDecisionAnnotation] =
        std::string("borrowed=0,shared=") + (shared ? "1" : "0") + ",decided=1000,epoch=0";
    return p;
  };
  h.claims.update(
      {claim_of("c-part", 1), claim_of("c-big", 3), claim_of("c-pair", 1), claim_of("c-three", 3)},
      DraConfig{});
  const json partner = on(dra_pod("part", "c-part", "4000"), "0");
  json big = on(dra_pod("big", "c-big", "4000"), "1,2,3");
  h.fold({partner, big, dra_pod("pair", "c-pair", "2000"), dra_pod("three", "c-three", "bad")});
  const auto nodes = h.adapter->nodes();
  ASSERT_TRUE(nodes);
  for (const auto& n : *nodes)
    EXPECT_EQ(n.shared, n.name != "dra-node") << n.name << ": colocation only on shareable devices";
  ASSERT_TRUE(h.job("pair") && h.job("three"));
  EXPECT_TRUE(h.job("pair")->spec.colocatable);
  EXPECT_EQ(h.job("pair")->spec.gpu_memory_mib, 2000);
  EXPECT_FALSE(h.job("three")->spec.colocatable) << "its memory is not a number of MiB";
  Binder binder(unreachable(), 1);
  h.adapter->use_binder(&binder);
  const JobId pair = *h.core->book().find("pair");
  StartJob shared{pair, Placement{NodeAlloc{NodeId(0), 0b0001}}, false, true};
  shared.mps_thread_percent = 60;
  shared.mps_memory_limit_mib = 2000;
  EXPECT_EQ(h.adapter->place(shared), shared.placement) << "on its partner's GPU, not moved";
  h.adapter->decided(shared, 0, false);
  EXPECT_EQ(h.adapter->hand_over(pair), driver::Actuator::Handover::Sent)
      << "the node is full, but the pair sits on its partner's GPU";
  // The next cycle: big ended, the pair bound beside its partner.
  big["status"]["phase"] = "Succeeded";
  h.fold({partner, big, on(dra_pod("pair", "c-pair", "2000"), "0", true),
          dra_pod("three", "c-three", "bad")});
  const JobId three = *h.core->book().find("three");
  h.adapter->decided(StartJob{three, Placement{NodeAlloc{NodeId(0), 0b1110}}, false, false}, 0,
                     false);
  EXPECT_EQ(h.adapter->hand_over(three), driver::Actuator::Handover::Sent)
      << "GPUs 1-3 are free: the shared pod is not counted on top of its partner";
  binder.wait_done(10000);
}

// The deepshare policy itself pairs a best-effort DRA pod with a running one on a shareable
// device once no DRA GPU is free (tenant b: quota 0; the options of tests/k8s/mps.yaml), and
// only with the utilization and memory the pods declare: without deepshare.io/gpu-util the
// built-in interference model predicts a slowdown of 1.63 (speed 0.61 at an unknown
// utilization), beyond the default budget of 1.5, and the pod waits.
TEST(K8sAdapter, TheDeepSharePolicyPairsADeclaredBestEffortPod) {
  for (const bool declared : {true, false}) {
    Harness h(true);
    h.devices["dra-node"] = NodeDevices{"dra-node", {"gpu-0", "gpu-1"}, true};
    h.tenants[1].quota_gpus = 0;
    h.adapter = std::make_unique<K8sAdapter>(
        h.client, h.log, h.journal, h.fence,
        std::map<std::string, TenantId>{{"a", h.tenants[0].id}, {"b", h.tenants[1].id}});
    h.adapter->use_dra(h.claims, h.devices, DraConfig{});
    h.adapter->load_nodes(h.views(), 24576);
    h.core = std::make_unique<driver::Core>(h.adapter->cluster(), h.tenants, *h.adapter, h.log,
                                            h.journal, driver::Timing{});
    PolicyOptions o({{"min_runtime_s", "0"},
                     {"lend_backoff_s", "0"},
                     {"assurance_refresh_s", "1"},
                     {"sharing_min_assurance", "0"},
                     {"probation", "off"}});
    h.core->set_policy(make_policy("deepshare", PolicyContext{h.adapter->cluster(), h.tenants, o}),
                       false);
    h.adapter->attach(*h.core);
    const auto claim_of = [](const std::string& ns, const std::string& name) {
      return std::make_shared<const json>(json{
          {"metadata", {{"namespace", ns}, {"name", name}, {"uid", "c-" + name}}},
          {"spec",
           {{"devices",
             {{"requests",
               json::array(
                   {{{"name", "gpu"},
                     {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", 1}}}}})}}}}}});
    };
    const auto dra_pod = [&](const std::string& uid, const std::string& ns,
                             const std::string& claim, const char* memory) {
      json p = pod(uid, ns, 0);
      p["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
      p["spec"]["resourceClaims"] = json::array({{{"name", "gpus"}, {"resourceClaimName", claim}}});
      p["metadata"]["annotations"] = {{kGpuMemoryAnnotation, memory}};
      if (declared) p["metadata"]["annotations"][kGpuUtilAnnotation] = "30";
      return p;
    };
    const auto running_on = [&](json p, int gpu) {
      p = bound(std::move(p), "dra-node");
      p["metadata"]["annotations"][kGpusAnnotation] = "dra-node:" + std::to_string(gpu);
      p["metadata"]["annotations"][kDecisionAnnotation] =
          "borrowed=0,shared=0,decided=1000,epoch=0";
      return p;
    };
    h.claims.update({claim_of("a", "c1"), claim_of("a", "c2"), claim_of("b", "c3")}, DraConfig{});
    h.fold({running_on(dra_pod("p1", "a", "c1", "4000"), 0),
            running_on(dra_pod("p2", "a", "c2", "4000"), 1), dra_pod("s1", "b", "c3", "2000")});
    const Decisions d = h.core->decide();
    if (!declared) {
      EXPECT_TRUE(d.start.empty()) << "no pair without the utilization";
      continue;
    }
    ASSERT_EQ(d.start.size(), 1u);
    const StartJob& s = d.start.front();
    EXPECT_EQ(s.job, *h.core->book().find("s1"));
    EXPECT_TRUE(s.shared);
    ASSERT_EQ(s.placement.size(), 1u);
    EXPECT_EQ(h.adapter->cluster().nodes[s.placement[0].node.index()].name, "dra-node");
    EXPECT_EQ(std::popcount(s.placement[0].gpu_mask), 1) << "on a partner's GPU";
    EXPECT_GT(s.mps_thread_percent, 0);
    EXPECT_EQ(s.mps_memory_limit_mib, 2000);
  }
}

TEST(K8sAdapter, GpuNodesInNaturalOrder) {
  Harness h;
  ASSERT_EQ(h.adapter->cluster().nodes.size(), 2u);
  EXPECT_EQ(h.adapter->cluster().nodes[0].name, "gpu-node-1");
  EXPECT_EQ(h.adapter->cluster().total_gpus(), 8);
}

TEST(K8sAdapter, PodsToJobs) {
  Harness h;
  json mine = bound(pod("u2", "b", 2), "gpu-node-1");
  mine["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-1:0,1"},
                                     {kDecisionAnnotation, "borrowed=1,shared=0,decided=7"}};
  json ending = bound(pod("u4", "a", 1), "gpu-node-2");
  h.fold({pod("u1", "a", 1), mine, ending});
  EXPECT_EQ(h.job("u4")->phase, driver::Phase::Running);
  ending["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  h.fold({pod("u1", "a", 1), mine, bound(pod("u3", "a", 1), "gpu-node-1", "Succeeded"), ending,
          pod("u5", "a", 1, "default-scheduler")});
  ASSERT_EQ(h.obs.jobs.size(), 3u) << "the default scheduler's pod and the ended one are not jobs";
  ASSERT_TRUE(h.job("u1") && h.job("u2") && h.job("u4"));
  EXPECT_EQ(h.job("u1")->phase, driver::Phase::Waiting);
  EXPECT_EQ(h.job("u1")->spec.tenant, h.tenants[0].id);
  EXPECT_TRUE(h.job("u1")->spec.preemptible) << "a Job's pod is recreated when evicted";
  EXPECT_EQ(h.job("u2")->phase, driver::Phase::Running);
  ASSERT_TRUE(h.job("u2")->decision);
  EXPECT_TRUE(h.job("u2")->decision->borrowed);
  EXPECT_EQ(h.job("u2")->placement, (Placement{NodeAlloc{NodeId(0), 0b11}}));
  EXPECT_EQ(h.job("u4")->phase, driver::Phase::Ending);
  // The running pod is adopted with its recorded GPUs; the ending one's GPU is held outside.
  EXPECT_EQ(h.core->state().runtime(*h.core->book().find("u2")).status, JobStatus::Running);
  int unavailable = 0;
  for (std::size_t g = 4; g < 8; ++g) unavailable += !h.core->state().gpu_available(g);
  EXPECT_EQ(unavailable, 1) << "the terminating pod on gpu-node-2 still holds one GPU";
}

// The informer stores a new object for each change, so an object seen last cycle (the same
// pointer) is not read again, and a changed one (a new pointer) is: the views follow the
// objects as when every pod is read each cycle.
TEST(K8sAdapter, UnchangedPodObjectsAreNotReadAgain) {
  Harness h;
  auto waiting = std::make_shared<const json>(pod("u1", "a", 1));
  auto other = std::make_shared<const json>(pod("u2", "b", 2));
  h.fold_objects({waiting, other});
  ASSERT_TRUE(h.job("u1") && h.job("u2"));
  EXPECT_EQ(h.job("u1")->phase, driver::Phase::Waiting);
  h.fold_objects({waiting, other});  // the same objects: the views kept
  EXPECT_EQ(h.job("u1")->phase, driver::Phase::Waiting);
  EXPECT_EQ(h.job("u2")->spec.gpus, 2);
  json b = bound(pod("u1", "a", 1), "gpu-node-1");
  b["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-1:3"},
                                  {kDecisionAnnotation, "borrowed=0,shared=0,decided=7"}};
  h.fold_objects({std::make_shared<const json>(b), other});  // u1 changed: read again
  ASSERT_TRUE(h.job("u1"));
  EXPECT_EQ(h.job("u1")->phase, driver::Phase::Running);
  EXPECT_EQ(h.job("u1")->placement, (Placement{NodeAlloc{NodeId(0), 0b1000}}));
  h.fold_objects({other});  // u1 gone
  EXPECT_FALSE(h.job("u1"));
  EXPECT_TRUE(h.job("u2"));
}

TEST(K8sAdapter, PodBoundBySomeoneElseGetsFreeGpus) {
  Harness h;
  json mine = bound(pod("u1", "a", 2), "gpu-node-1");
  mine["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-1:0,1"}};
  h.fold({mine, bound(pod("u0", "b", 2), "gpu-node-1")});
  ASSERT_TRUE(h.job("u0") && h.job("u1"));
  EXPECT_EQ(h.job("u1")->placement, (Placement{NodeAlloc{NodeId(0), 0b0011}}));
  EXPECT_EQ(h.job("u0")->placement, (Placement{NodeAlloc{NodeId(0), 0b1100}}));
}

// A pod that runs on borrowed GPUs and lost its controller reference (a user removed it, or
// its Job released it after a label change) is still preemptible when a restarted scheduler
// adopts it; a bare pod without such a decision is not.
TEST(K8sAdapter, BorrowedPodStaysPreemptibleWithoutItsOwner) {
  Harness h;
  json orphan = bound(pod("u1", "a", 2), "gpu-node-1");
  orphan["metadata"].erase("ownerReferences");
  orphan["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-1:0,1"},
                                       {kDecisionAnnotation, "borrowed=1,shared=0,decided=7"}};
  json bare = bound(pod("u2", "a", 2), "gpu-node-2");
  bare["metadata"].erase("ownerReferences");
  bare["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-2:0,1"},
                                     {kDecisionAnnotation, "borrowed=0,shared=0,decided=7"}};
  h.fold({orphan, bare});
  ASSERT_TRUE(h.job("u1") && h.job("u2"));
  EXPECT_TRUE(h.job("u1")->spec.preemptible) << "its decision says it borrowed";
  EXPECT_FALSE(h.job("u2")->spec.preemptible) << "a bare pod on its own quota";
}

// A GPU node the API lists that the model lacks (added after the start) is named, so that the
// scheduler rebuilds its model; a node without GPUs is not.
TEST(K8sAdapter, NewGpuNodesAreNamed) {
  Harness h;
  EXPECT_TRUE(h.adapter->new_gpu_nodes(node_views(h.nodes)).empty());
  auto nodes = h.nodes;
  nodes.push_back(node("gpu-node-3", 8));
  nodes.push_back(node("cpu-node-2", 0));
  EXPECT_EQ(h.adapter->new_gpu_nodes(node_views(nodes)), (std::vector<std::string>{"gpu-node-3"}));
}

TEST(K8sAdapter, CordonedNodeIsNotUsable) {
  Harness h;
  h.nodes[1] = node("gpu-node-1", 4, true, true);
  h.fold({});
  EXPECT_FALSE(h.core->state().node_usable(NodeId(0)));
  EXPECT_TRUE(h.core->state().node_usable(NodeId(1)));
}

// A Node object deleted (issue #23): the node is unusable while the API does not list it, so
// nothing is placed on a node that does not exist; listed again, it is usable again.
TEST(K8sAdapter, DeletedNodeIsNotUsableUntilItComesBack) {
  Harness h;
  const auto all = h.nodes;
  h.nodes = {all[0], all[2]};  // gpu-node-1 (NodeId 0: ordered by name) deleted
  h.fold({});
  EXPECT_FALSE(h.core->state().node_usable(NodeId(0)));
  EXPECT_TRUE(h.core->state().node_usable(NodeId(1)));
  h.nodes = all;
  h.fold({});
  EXPECT_TRUE(h.core->state().node_usable(NodeId(0)));
}

// The hand-over binds only once the API shows the node's GPUs free: a terminating victim
// still holds them, so the start waits (and makes no API call).
TEST(K8sAdapter, HandOverWaitsForTheApiToFreeTheGpus) {
  Harness h;
  json victim = bound(pod("v", "b", 4), "gpu-node-1");
  victim["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  h.fold({victim, pod("w", "a", 4)});
  const JobId w = *h.core->book().find("w");
  const StartJob s{w, Placement{NodeAlloc{NodeId(0), 0b1111}}, false, false};
  h.adapter->decided(s, 0, false);
  EXPECT_EQ(h.adapter->hand_over(w), driver::Actuator::Handover::NotYet);
  EXPECT_EQ(h.adapter->counters().waits_for_gpus, 1u);
  EXPECT_EQ(h.adapter->counters().api_failures, 0u) << "no call was made";
  // Once the victim is gone the API is asked (here: no server, so the call fails).
  h.fold({pod("w", "a", 4)});
  EXPECT_EQ(h.adapter->hand_over(w), driver::Actuator::Handover::Failed);
  EXPECT_EQ(h.adapter->counters().api_failures, 1u);
}

json gang_pod(const std::string& uid, int gpus, int size, const std::string& gang = "train") {
  json p = pod(uid, "a", gpus);
  p["metadata"]["name"] = gang + "-" + uid;
  p["metadata"]["labels"] = {{kGangLabel, gang}};
  p["metadata"]["annotations"] = {{kGangSizeAnnotation, std::to_string(size)}};
  return p;
}

// A gang (issue #23): its pods are one job of their GPUs together, a candidate only once all
// its pods wait, placed as whole pods per node, and bound together once the API shows every
// node's GPUs free.
TEST(K8sAdapter, GangIsOneJobPlacedAllOrNothing) {
  Harness h;
  h.fold({gang_pod("g0", 4, 2)});
  ASSERT_EQ(h.obs.jobs.size(), 1u);
  const driver::EngineJob* g = h.job("gang:a/train");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.gpus, 8);
  EXPECT_EQ(g->ref, "a/gang:train");
  const JobId id = *h.core->book().find("gang:a/train");
  EXPECT_EQ(h.adapter->eligible(id, *g), WaitReason::Dependency) << "one of its two pods";
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Future);
  h.adapter->report_waits(10);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 1u) << "its pod is told it waits for the rest";
  json victim = bound(pod("v", "b", 4), "gpu-node-2");
  victim["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  h.fold({gang_pod("g0", 4, 2), gang_pod("g1", 4, 2), victim});
  EXPECT_EQ(h.adapter->eligible(id, *h.job("gang:a/train")), WaitReason::None);
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Pending) << "a candidate now";
  // Whole pods per node: a decision of 4 + 4 stands; one of 6 + 2 would split a pod.
  const Placement split{NodeAlloc{NodeId(0), 0b1111}, NodeAlloc{NodeId(1), 0b1111}};
  EXPECT_EQ(h.adapter->place(StartJob{id, split, false, false}), split);
  h.adapter->decided(StartJob{id, split, false, false}, 0, false);
  EXPECT_EQ(h.adapter->hand_over(id), driver::Actuator::Handover::NotYet)
      << "the victim still holds gpu-node-2's GPUs: neither pod is bound";
  EXPECT_EQ(h.adapter->counters().api_failures, 1u) << "no call but the condition was made";
  h.fold({gang_pod("g0", 4, 2), gang_pod("g1", 4, 2)});
  EXPECT_EQ(h.adapter->hand_over(id), driver::Actuator::Handover::Failed);
  EXPECT_EQ(h.adapter->counters().api_failures, 2u) << "the first bind was tried (no server)";
}

// Kueue's plain pod group (label kueue.x-k8s.io/pod-group-name, annotation
// kueue.x-k8s.io/pod-group-total-count) is a gang as it is written: a Kueue site's manifests
// need no change.
TEST(K8sAdapter, KueuePodGroupIsAGang) {
  Harness h;
  auto member = [](const std::string& uid, const std::string& count) {
    json p = pod(uid, "a", 4);
    p["metadata"]["name"] = "group-" + uid;
    p["metadata"]["labels"] = {{kKueueGroupLabel, "train"}};
    p["metadata"]["annotations"] = {{kKueueGroupCountAnnotation, count}};
    return p;
  };
  h.fold({member("k0", "2"), member("k1", "2")});
  ASSERT_EQ(h.obs.jobs.size(), 1u);
  const driver::EngineJob* g = h.job("gang:a/train");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.gpus, 8);
  const JobId id = *h.core->book().find("gang:a/train");
  EXPECT_EQ(h.adapter->eligible(id, *g), WaitReason::None) << "both pods wait";
  // A count that is no number: refused, the reason naming Kueue's annotation.
  h.fold({member("k0", "2"), member("k1", "2"), member("x0", "two")});
  EXPECT_EQ(h.adapter->counters().refused, 0u) << "x0 is another pod of the same group";
  EXPECT_EQ(h.adapter->eligible(id, *h.job("gang:a/train")), WaitReason::Dependency)
      << "three pods of a group of 2";
  const auto v = pod_view(member("x0", "two"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->gang, "train");
  EXPECT_EQ(v->gang_size, -1);
  EXPECT_STREQ(v->gang_size_key(), kKueueGroupCountAnnotation);
}

// 3-GPU pods on 4-GPU nodes: a decision of 4 + 2 GPUs holds no whole pods; the pods go where the
// model's free GPUs hold them (3 + 3), or the start is deferred.
TEST(K8sAdapter, GangPodsArePlacedWhole) {
  Harness h;
  h.fold({gang_pod("g0", 3, 2), gang_pod("g1", 3, 2)});
  const JobId id = *h.core->book().find("gang:a/train");
  const Placement uneven{NodeAlloc{NodeId(0), 0b1111}, NodeAlloc{NodeId(1), 0b0011}};
  const Placement whole{NodeAlloc{NodeId(0), 0b0111}, NodeAlloc{NodeId(1), 0b0111}};
  EXPECT_EQ(h.adapter->place(StartJob{id, uneven, false, false}), whole);
  // gpu-node-2 busy: only one pod fits, so no start.
  json other = bound(pod("o", "b", 2), "gpu-node-2");
  other["metadata"]["annotations"] = {{kGpusAnnotation, "gpu-node-2:0,1"},
                                      {kDecisionAnnotation, "borrowed=0,shared=0,decided=7"}};
  h.fold({gang_pod("g0", 3, 2), gang_pod("g1", 3, 2), other});
  EXPECT_EQ(h.adapter->place(StartJob{id, uneven, false, false}), std::nullopt);
}

// A gang the cluster can never hold, or whose pods disagree, is refused (Event + condition on
// each pod): never a job.
TEST(K8sAdapter, ImpossibleGangsAreRefused) {
  Harness h;
  h.fold({gang_pod("g0", 3, 3), gang_pod("h0", 4, 2, "mixed"), gang_pod("h1", 2, 2, "mixed")});
  EXPECT_TRUE(h.obs.jobs.empty());
  EXPECT_EQ(h.adapter->counters().refused, 2u) << "3 pods of 3 GPUs on two 4-GPU nodes; mixed GPUs";
  EXPECT_EQ(h.adapter->counters().api_failures, 6u) << "an Event and a condition per pod told";
  h.fold({gang_pod("g0", 3, 3), gang_pod("g1", 3, 3)});
  EXPECT_EQ(h.adapter->counters().refused, 2u) << "counted once";
  EXPECT_EQ(h.adapter->counters().api_failures, 8u) << "the gang's new pod is told too";
}

// A restarted scheduler adopts a running gang with the decisions its pods carry; a gang that
// lost a pod while running is no longer running (its other pods are evicted).
TEST(K8sAdapter, RunningGangIsAdoptedAndLosingAPodStopsIt) {
  Harness h;
  auto placed = [](const std::string& uid, const std::string& node) {
    json p = bound(gang_pod(uid, 4, 2), node);
    p["metadata"]["annotations"][kGpusAnnotation] = node + ":0,1,2,3";
    p["metadata"]["annotations"][kDecisionAnnotation] = "borrowed=1,shared=0,decided=9";
    return p;
  };
  h.fold({placed("g0", "gpu-node-1"), placed("g1", "gpu-node-2")});
  const driver::EngineJob* g = h.job("gang:a/train");
  ASSERT_TRUE(g && g->decision);
  EXPECT_EQ(g->phase, driver::Phase::Running);
  EXPECT_TRUE(g->decision->borrowed);
  EXPECT_EQ(g->placement, (Placement{NodeAlloc{NodeId(0), 0b1111}, NodeAlloc{NodeId(1), 0b1111}}));
  const JobId id = *h.core->book().find("gang:a/train");
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Running);
  EXPECT_TRUE(h.core->state().runtime(id).borrowed);
  // g1 relabelled out of the gang: a job of its own, adopted with its decision (still
  // preemptible: it borrowed); the gang runs on with g0.
  json out = placed("g1", "gpu-node-2");
  out["metadata"].erase("labels");
  out["metadata"].erase("ownerReferences");
  h.fold({placed("g0", "gpu-node-1"), out});
  ASSERT_TRUE(h.job("g1"));
  EXPECT_EQ(h.job("g1")->phase, driver::Phase::Running);
  EXPECT_TRUE(h.job("g1")->spec.preemptible);
  EXPECT_TRUE(h.core->state().runtime(*h.core->book().find("g1")).borrowed);
  EXPECT_EQ(h.job("gang:a/train")->phase, driver::Phase::Running);
  EXPECT_EQ(h.core->state().runtime(id).placement, (Placement{NodeAlloc{NodeId(0), 0b1111}}));
  h.fold({placed("g0", "gpu-node-1"), placed("g1", "gpu-node-2")});  // and back
  // g1 evicted by someone else; its Job makes g2.
  json evicted = placed("g1", "gpu-node-2");
  evicted["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  h.fold({placed("g0", "gpu-node-1"), evicted, gang_pod("g2", 4, 2)});
  EXPECT_EQ(h.job("gang:a/train")->phase, driver::Phase::Stopping);
  EXPECT_NE(h.core->state().runtime(id).status, JobStatus::Running);
  EXPECT_GE(h.adapter->counters().api_failures, 1u) << "g0's eviction was tried (no server)";
}

// A gang whose pods are all gone for a moment (evicted pods deleted before their Job made the
// replacements) is still the same job when they come; gone for longer, it leaves.
TEST(K8sAdapter, GangOutlivesItsPodsForAMoment) {
  Harness h;
  h.fold({gang_pod("g0", 4, 2), gang_pod("g1", 4, 2)});
  const JobId id = *h.core->book().find("gang:a/train");
  h.fold({});
  ASSERT_TRUE(h.job("gang:a/train")) << "listed without pods";
  EXPECT_EQ(h.job("gang:a/train")->phase, driver::Phase::Waiting);
  h.fold({gang_pod("g2", 4, 2), gang_pod("g3", 4, 2)});
  EXPECT_EQ(h.core->book().find("gang:a/train"), id) << "the replacements are the same job";
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Pending);
  h.fold({});
  h.wall += 31'000;
  h.fold({});
  EXPECT_FALSE(h.job("gang:a/train")) << "gone for more than 30 s";
  EXPECT_NE(h.core->state().runtime(id).status, JobStatus::Pending);
  // Pods that failed and are not replaced: the gang waits for replacements, then ends.
  json f0 = gang_pod("f0", 4, 2, "flaky"), f1 = gang_pod("f1", 4, 2, "flaky");
  h.fold({f0, f1});
  const JobId flaky = *h.core->book().find("gang:a/flaky");
  f0["status"]["phase"] = f1["status"]["phase"] = "Failed";
  h.fold({f0, f1});
  EXPECT_EQ(h.job("gang:a/flaky")->phase, driver::Phase::Waiting);
  h.wall += 31'000;
  h.fold({f0, f1});
  EXPECT_EQ(h.job("gang:a/flaky")->phase, driver::Phase::Ended);
  EXPECT_NE(h.core->state().runtime(flaky).status, JobStatus::Pending);
}

// A Job of one pod labelled as a gang of 1 keeps its key across an eviction: the replacement is
// the same job (its queueing time and restarts), not a new one.
TEST(K8sAdapter, GangOfOneIsTheSameJobAfterAnEviction) {
  Harness h;
  json p = bound(gang_pod("p0", 2, 1, "solo"), "gpu-node-1");
  p["metadata"]["annotations"][kGpusAnnotation] = "gpu-node-1:0,1";
  p["metadata"]["annotations"][kDecisionAnnotation] = "borrowed=1,shared=0,decided=9";
  h.fold({p});
  const JobId id = *h.core->book().find("gang:a/solo");
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Running);
  const Time submit = h.core->state().spec(id).submit;
  p["metadata"]["deletionTimestamp"] = "2026-12-04T10:01:00Z";
  json next = gang_pod("p1", 2, 1, "solo");
  next["metadata"]["creationTimestamp"] = "2026-12-04T10:05:00Z";
  h.fold({p, next});
  EXPECT_EQ(h.job("gang:a/solo")->phase, driver::Phase::Stopping) << "the evicted pod holds GPUs";
  h.fold({next});
  EXPECT_EQ(h.job("gang:a/solo")->phase, driver::Phase::Waiting);
  EXPECT_EQ(h.core->book().find("gang:a/solo"), id) << "the same job";
  EXPECT_EQ(h.core->state().spec(id).submit, submit) << "its place in the queue";
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Pending);
}

// The pods of an Indexed Job that runs them all at once are one gang without a label of ours
// (jobs.hpp): key "job:UID", a candidate once all its pods wait. A pod whose Job is not
// listed yet waits for it a moment, then is a job of its own; a Job that is no gang leaves
// its pods their own jobs.
TEST(K8sAdapter, IndexedJobsPodsAreOneGang) {
  Harness h;
  JobIndex jobs;
  h.adapter->use_jobs(jobs);
  const auto job_pod = [](const std::string& uid, const std::string& job) {
    json p = pod(uid, "a", 4);
    p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                     {"kind", "Job"},
                                                     {"name", "train"},
                                                     {"uid", job},
                                                     {"controller", true}}});
    return p;
  };
  const auto indexed = [](const std::string& uid, int pods) {
    return std::make_shared<const json>(json{
        {"metadata", {{"uid", uid}, {"namespace", "a"}, {"name", "train"}}},
        {"spec", {{"completionMode", "Indexed"}, {"parallelism", pods}, {"completions", pods}}}});
  };
  h.wall = 1'796'378'400'000;  // 2026-12-04T10:00:00Z, the pods' creation
  h.fold({job_pod("t0", "job-1")});
  EXPECT_TRUE(h.obs.jobs.empty()) << "its Job is not listed yet: it waits for it";
  jobs.update({indexed("job-1", 2)});
  h.fold({job_pod("t0", "job-1")});
  const driver::EngineJob* g = h.job("job:job-1");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->ref, "a/job:train");
  EXPECT_EQ(g->spec.gpus, 8);
  const JobId id = *h.core->book().find("job:job-1");
  EXPECT_EQ(h.adapter->eligible(id, *g), WaitReason::Dependency) << "one of its two pods";
  h.fold({job_pod("t0", "job-1"), job_pod("t1", "job-1")});
  ASSERT_EQ(h.obs.jobs.size(), 1u);
  EXPECT_EQ(h.adapter->eligible(id, *h.job("job:job-1")), WaitReason::None);
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Pending);
  // A work queue (one pod at a time of three): its pods are its work items, each a job of its
  // own (WorkQueueJobsItemsKeepTheirPlace below).
  const auto queue = std::make_shared<const json>(
      json{{"metadata", {{"uid", "job-2"}, {"namespace", "a"}, {"name", "queue"}}},
           {"spec", {{"parallelism", 1}, {"completions", 3}}}});
  jobs.update({indexed("job-1", 2), queue});
  h.fold({job_pod("t0", "job-1"), job_pod("t1", "job-1"), job_pod("s0", "job-2")});
  ASSERT_TRUE(h.job("job:job-2~0"));
  EXPECT_EQ(h.job("job:job-2~0")->ref, "a/job:queue~0");
  // A Job never listed: its pod is a job of its own once it is older than the wait.
  h.wall += 10'000;
  h.fold({job_pod("t0", "job-1"), job_pod("t1", "job-1"), job_pod("x0", "job-gone")});
  EXPECT_TRUE(h.job("x0"));
}

// What a user can forge on a pod of theirs: an owner reference to a Job. One to their own
// Job's gang adds a pod beyond its size: the gang waits (told so), hurting only their own
// work; one carrying the UID of a Job in another namespace joins nothing (a job of its own).
TEST(K8sAdapter, ForgedOwnerReferencesJoinNoOtherGang) {
  Harness h;
  JobIndex jobs;
  h.adapter->use_jobs(jobs);
  const auto owned = [](const std::string& uid, const std::string& ns) {
    json p = pod(uid, ns, 4);
    p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                     {"kind", "Job"},
                                                     {"name", "train"},
                                                     {"uid", "job-1"},
                                                     {"controller", true}}});
    return p;
  };
  jobs.update({std::make_shared<const json>(
      json{{"metadata", {{"uid", "job-1"}, {"namespace", "a"}, {"name", "train"}}},
           {"spec", {{"completionMode", "Indexed"}, {"parallelism", 2}, {"completions", 2}}}})});
  h.fold({owned("t0", "a"), owned("t1", "a"), owned("extra", "a"), owned("other", "b")});
  const JobId id = *h.core->book().find("job:job-1");
  EXPECT_EQ(h.adapter->eligible(id, *h.job("job:job-1")), WaitReason::Dependency)
      << "three pods for a gang of two";
  ASSERT_TRUE(h.job("other")) << "another namespace's pod is a job of its own";
  EXPECT_EQ(h.job("other")->spec.gpus, 4);
}

// A Job of one pod is a gang of one: a replacement after its pod failed is the same job (its
// place in the queue), and once its Job is finished the job ends at once.
TEST(K8sAdapter, JobOfOnePodKeepsItsPlaceAndEndsWithItsJob) {
  Harness h;
  JobIndex jobs;
  h.adapter->use_jobs(jobs);
  const auto job_pod = [](const std::string& uid) {
    json p = pod(uid, "a", 2);
    p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                     {"kind", "Job"},
                                                     {"name", "one"},
                                                     {"uid", "job-1"},
                                                     {"controller", true}}});
    return p;
  };
  json spec = {{"metadata", {{"uid", "job-1"}, {"namespace", "a"}, {"name", "one"}}},
               {"spec", {{"parallelism", 1}, {"completions", 1}}}};
  jobs.update({std::make_shared<const json>(spec)});
  h.fold({bound(job_pod("p0"), "gpu-node-1")});
  const auto found = h.core->book().find("job:job-1");
  ASSERT_TRUE(found) << "keyed by its Job";
  const JobId id = *found;
  EXPECT_EQ(h.job("job:job-1")->ref, "a/job:one");
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Running);
  const Time submit = h.core->state().spec(id).submit;
  h.fold({bound(job_pod("p0"), "gpu-node-1", "Failed"), job_pod("p1")});
  EXPECT_EQ(h.core->book().find("job:job-1"), id) << "the replacement is the same job";
  EXPECT_EQ(h.core->state().spec(id).submit, submit) << "its place in the queue";
  EXPECT_EQ(h.core->state().runtime(id).status, JobStatus::Pending);
  h.fold({bound(job_pod("p0"), "gpu-node-1", "Failed")});
  EXPECT_EQ(h.job("job:job-1")->phase, driver::Phase::Waiting) << "its Job may make another";
  spec["status"]["conditions"] = json::array({{{"type", "Failed"}, {"status", "True"}}});
  jobs.update({std::make_shared<const json>(spec)});
  h.fold({bound(job_pod("p0"), "gpu-node-1", "Failed")});
  EXPECT_EQ(h.job("job:job-1")->phase, driver::Phase::Ended) << "its Job gave up";
}

// A work-queue Job's pods are its work items (jobs.hpp): an Indexed Job's by completion index
// (key "job:UID#I"), a NonIndexed Job's by slot (work_slots.hpp, "job:UID~S"). A pod evicted
// or failed and replaced by its Job is the same job (its place in the queue, its restart
// count); an item that succeeded is done, and the Job's next pod is a new job.
TEST(K8sAdapter, WorkQueueJobsItemsKeepTheirPlace) {
  Harness h;
  JobIndex jobs;
  h.adapter->use_jobs(jobs);
  const auto item = [](const std::string& uid, const std::string& job, const std::string& name,
                       int index) {
    json p = pod(uid, "a", 2);
    p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                     {"kind", "Job"},
                                                     {"name", name},
                                                     {"uid", job},
                                                     {"controller", true}}});
    if (index >= 0)
      p["metadata"]["annotations"][kCompletionIndexAnnotation] = std::to_string(index);
    return p;
  };
  const auto job = [](const std::string& uid, const std::string& name, const char* mode) {
    return std::make_shared<const json>(
        json{{"metadata", {{"uid", uid}, {"namespace", "a"}, {"name", name}}},
             {"spec", {{"completionMode", mode}, {"parallelism", 2}, {"completions", 4}}}});
  };
  jobs.update({job("job-i", "static", "Indexed"), job("job-q", "queue", "NonIndexed")});
  // Indexed: indices 0 and 1 run, 0's pod is evicted, its replacement carries index 0.
  h.fold({bound(item("i0", "job-i", "static", 0), "gpu-node-1"),
          bound(item("i1", "job-i", "static", 1), "gpu-node-1")});
  const auto i0 = h.core->book().find("job:job-i#0");
  ASSERT_TRUE(i0) << "keyed by its index";
  EXPECT_EQ(h.job("job:job-i#0")->ref, "a/job:static#0");
  EXPECT_EQ(h.core->state().runtime(*i0).status, JobStatus::Running);
  const Time submit_i0 = h.core->state().spec(*i0).submit;
  json evicted = bound(item("i0", "job-i", "static", 0), "gpu-node-1");
  evicted["metadata"]["deletionTimestamp"] = "2026-12-04T10:05:00Z";
  h.fold({evicted, bound(item("i1", "job-i", "static", 1), "gpu-node-1"),
          item("i0b", "job-i", "static", 0)});
  EXPECT_EQ(h.job("job:job-i#0")->phase, driver::Phase::Stopping) << "the evicted pod holds GPUs";
  h.fold(
      {bound(item("i1", "job-i", "static", 1), "gpu-node-1"), item("i0b", "job-i", "static", 0)});
  EXPECT_EQ(h.core->book().find("job:job-i#0"), i0) << "the replacement is the same job";
  EXPECT_EQ(h.core->state().spec(*i0).submit, submit_i0) << "its place in the queue";
  EXPECT_EQ(h.core->state().runtime(*i0).status, JobStatus::Pending);
  EXPECT_EQ(h.core->state().runtime(*i0).preemptions, 1) << "its restart counted";
  // NonIndexed: two pods take slots 0 and 1; the pod of slot 0 fails and its Job replaces it.
  h.fold({item("q-a", "job-q", "queue", -1), item("q-b", "job-q", "queue", -1)});
  const auto q0 = h.core->book().find("job:job-q~0");
  ASSERT_TRUE(q0);
  ASSERT_TRUE(h.core->book().find("job:job-q~1"));
  EXPECT_EQ(h.job("job:job-q~0")->ref, "a/job:queue~0");
  const Time submit_q0 = h.core->state().spec(*q0).submit;
  h.fold(
      {bound(item("q-a", "job-q", "queue", -1), "gpu-node-2"), item("q-b", "job-q", "queue", -1)});
  EXPECT_EQ(h.core->state().runtime(*q0).status, JobStatus::Running);
  h.fold({bound(item("q-a", "job-q", "queue", -1), "gpu-node-2", "Failed"),
          item("q-b", "job-q", "queue", -1), item("q-c", "job-q", "queue", -1)});
  EXPECT_EQ(h.core->book().find("job:job-q~0"), q0) << "q-c took over q-a's slot";
  EXPECT_EQ(h.core->state().spec(*q0).submit, submit_q0);
  EXPECT_EQ(h.core->state().runtime(*q0).status, JobStatus::Pending);
  // q-c succeeds: item ~0 is done, though the failed q-a is still listed; the Job's next pod
  // is a new item.
  h.fold({bound(item("q-a", "job-q", "queue", -1), "gpu-node-2", "Failed"),
          item("q-b", "job-q", "queue", -1),
          bound(item("q-c", "job-q", "queue", -1), "gpu-node-2", "Succeeded"),
          item("q-d", "job-q", "queue", -1)});
  EXPECT_EQ(h.core->state().runtime(*q0).status, JobStatus::Done);
  ASSERT_TRUE(h.core->book().find("job:job-q~2")) << "a new item";
  EXPECT_NE(h.core->book().find("job:job-q~2"), q0);
  // An Indexed Job's pod without its index annotation: a pod of its own.
  h.fold({item("x", "job-i", "static", -1)});
  EXPECT_TRUE(h.job("x"));
}

// The binder (binder.hpp) sends bindings on its own threads: every submitted binding comes
// back as an outcome (here refused: no server), and queued ones can be dropped.
TEST(K8sBinder, EveryBindingComesBackAsAnOutcome) {
  Binder b(unreachable(), 2);
  for (int i = 0; i < 5; ++i)
    b.submit(BindRequest{
        "u" + std::to_string(i), "a", "p" + std::to_string(i), "gpu-node-1", {}, EventSpec{}});
  ASSERT_TRUE(b.wait_done(10000));
  EXPECT_EQ(b.in_flight(), 5u) << "until taken back";
  const auto out = b.take_outcomes();
  ASSERT_EQ(out.size(), 5u);
  for (const auto& o : out) EXPECT_TRUE(o.bind_error) << o.ref;
  EXPECT_TRUE(b.take_note_failures().empty()) << "no Event for a binding that did not take";
  EXPECT_EQ(b.in_flight(), 0u);
  EXPECT_EQ(b.drop_queued(), 0u);
}

// Notes (Events, conditions) go out on their own lane: each one that fails comes back with
// its kind and error, one whose fence window passed comes back without an error (not sent).
TEST(K8sBinder, NotesThatDidNotGoOutComeBack) {
  Binder b(unreachable(), 2);
  EventSpec spec;
  spec.regarding = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", "a"}, {"name", "p1"}};
  spec.type = "Normal";
  b.submit(Note{Note::Kind::Event, "a", "p1", spec, "", kNoDeadline});
  b.submit(Note{Note::Kind::Condition, "a", "p2", {}, "waiting", kNoDeadline});
  b.submit(Note{Note::Kind::Condition, "a", "p3", {}, "waiting", std::chrono::steady_clock::now()});
  ASSERT_TRUE(b.wait_done(10000));
  EXPECT_EQ(b.notes_queued(), 0u);
  auto out = b.take_note_failures();
  ASSERT_EQ(out.size(), 3u);
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.ref < y.ref; });
  EXPECT_EQ(out[0].kind, Note::Kind::Event);
  EXPECT_TRUE(out[0].error) << "no server";
  EXPECT_EQ(out[1].kind, Note::Kind::Condition);
  EXPECT_TRUE(out[1].error);
  EXPECT_FALSE(out[2].error) << "too late: not sent";
  EXPECT_TRUE(b.take_note_failures().empty());
}

// With a binder the waiting reasons queue beside the loop, at most N waiting for a worker: a
// pod is told only once its write is queued (the rest at a later cycle), and a deposed
// scheduler's queued notes are dropped.
TEST(K8sAdapter, WaitingReasonsQueueBesideTheLoopWithinABound) {
  Harness h;
  Binder idle(unreachable(), 0);
  h.adapter->use_binder(&idle);
  h.fold({pod("p1", "a", 4), pod("p2", "a", 4), pod("p3", "b", 4)});
  for (const char* u : {"p1", "p2", "p3"})
    h.core->state().set_wait(*h.core->book().find(u), WaitReason::Quota, h.wall);
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 2u);
  EXPECT_EQ(idle.notes_queued(), 2u) << "handed over, not sent in the loop";
  EXPECT_EQ(h.adapter->counters().api_failures, 0u);
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 2u) << "two wait already";
  EXPECT_EQ(idle.drop_queued(), 0u) << "no binding among them";
  EXPECT_EQ(idle.notes_queued(), 0u);
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 3u) << "the third, once there is room";
}

// With a binder, a hand-over returns at once: the pod counts as bound (its GPUs used) until
// the outcome comes back at the next cycle; a refused binding shows it unbound again and is
// counted as a failed call. The pod's object is the same in every cycle (the watch has not
// shown the binding): the adapter's kept view shows it unbound again once refused.
TEST(K8sAdapter, BindingsBesideTheLoopComeBackAtTheNextCycle) {
  Harness h;
  Binder binder(unreachable(), 1);
  const auto object = h.start_with(binder);
  EXPECT_EQ(h.adapter->counters().api_failures, 0u) << "not known yet";
  ASSERT_TRUE(binder.wait_done(10000));
  h.fold_objects({object});
  EXPECT_EQ(h.adapter->counters().api_failures, 1u) << "the refused binding, read at the cycle";
  EXPECT_EQ(h.adapter->counters().binds, 0u);
  EXPECT_EQ(h.adapter->counters().bind_seconds.count, 1u) << "its latency, refused or not";
  EXPECT_EQ(h.job("w")->phase, driver::Phase::Waiting) << "unbound again";
}

// A binding not answered yet (a binder without workers keeps it queued): the pod counts as
// bound, cycle after cycle, on the same object.
TEST(K8sAdapter, ABindingInFlightKeepsThePodBound) {
  Harness h;
  Binder idle(unreachable(), 0);
  const auto object = h.start_with(idle);
  for (int cycle = 0; cycle < 3; ++cycle) {
    h.fold_objects({object});
    ASSERT_TRUE(h.job("w"));
    EXPECT_EQ(h.job("w")->phase, driver::Phase::Running) << "cycle " << cycle;
  }
  EXPECT_EQ(idle.in_flight(), 1u);
  EXPECT_EQ(idle.drop_queued(), 1u);
}

// A lease that is held or not, at the test's word.
struct TestLease final : driver::Leadership {
  bool is_held = true;
  std::uint64_t at = 3;
  std::int64_t window_ms = std::numeric_limits<std::int64_t>::max();
  [[nodiscard]] bool held() const override { return is_held; }
  [[nodiscard]] std::int64_t held_for_ms() const override { return is_held ? window_ms : 0; }
  [[nodiscard]] std::uint64_t epoch() const override { return at; }
  [[nodiscard]] std::string describe() const override { return "test lease"; }
};

// A scheduler that lost its Lease sends nothing more: the hand-over and the eviction make no
// API call (fenced), and it stays deposed.
TEST(K8sAdapter, NoWriteAfterTheLeaseIsLost) {
  Harness h;
  TestLease lease;
  h.fence.set_lease(&lease);
  h.fold({pod("w", "a", 4), bound(pod("r", "b", 2), "gpu-node-2")});
  const JobId w = *h.core->book().find("w");
  h.adapter->decided(StartJob{w, Placement{NodeAlloc{NodeId(0), 0b1111}}, false, false}, 0, false);
  lease.is_held = false;
  EXPECT_EQ(h.adapter->hand_over(w), driver::Actuator::Handover::Failed);
  const JobId r = *h.core->book().find("r");
  EXPECT_EQ(h.adapter->preempt(r, *h.core->observed(r)), driver::Actuator::Preemption::Refused);
  EXPECT_EQ(h.adapter->counters().api_failures, 0u) << "no call was made";
  EXPECT_EQ(h.fence.fenced(), 2u);
  EXPECT_TRUE(h.fence.deposed());
  lease.is_held = true;  // deposed for good
  EXPECT_EQ(h.adapter->hand_over(w), driver::Actuator::Handover::Failed);
  EXPECT_EQ(h.adapter->counters().api_failures, 0u);
}

// A binding handed to the binder goes out only within the fence's window (the Lease's renew
// deadline as it was then): one still queued when it runs out is not sent (counted fenced),
// and the pod is shown unbound again.
TEST(K8sAdapter, ABindingIsNotSentAfterTheLeasesWindow) {
  Harness h;
  TestLease lease;
  lease.window_ms = 0;  // runs out at once
  h.fence.set_lease(&lease);
  Binder binder(unreachable(), 1);
  const auto object = h.start_with(binder);
  ASSERT_TRUE(binder.wait_done(10000));
  h.fold_objects({object});
  EXPECT_EQ(h.adapter->counters().api_failures, 0u) << "no call was made";
  EXPECT_EQ(h.fence.fenced(), 1u);
  EXPECT_EQ(h.job("w")->phase, driver::Phase::Waiting) << "unbound again";
}

// A bound pod whose decision carries a newer epoch than ours: another leader binds on this
// cluster, so this scheduler is deposed (its writes stop) even while its lease looks held.
TEST(K8sAdapter, NewerEpochOnAPodDeposes) {
  Harness h;
  TestLease lease;
  h.fence.set_lease(&lease);
  json mine = bound(pod("m", "a", 2), "gpu-node-1");
  mine["metadata"]["annotations"] = {
      {kGpusAnnotation, "gpu-node-1:0,1"},
      {kDecisionAnnotation, "borrowed=0,shared=0,decided=1,epoch=3"}};
  h.fold({mine});
  EXPECT_FALSE(h.fence.deposed()) << "our own epoch";
  json theirs = bound(pod("t", "b", 2), "gpu-node-1");
  theirs["metadata"]["annotations"] = {
      {kGpusAnnotation, "gpu-node-1:2,3"},
      {kDecisionAnnotation, "borrowed=0,shared=0,decided=2,epoch=4"}};
  h.fold({mine, theirs});
  EXPECT_TRUE(h.fence.deposed());
  EXPECT_FALSE(h.fence.may_send());
}

// Waiting pods are told their typed reason once per change, at most N writes per call: no
// write while a reason stays, the rest of a burst at the next call. (No server here: each
// write is an attempt that fails, counted in api_failures.)
TEST(K8sAdapter, WaitingReasonsWrittenOncePerChange) {
  Harness h;
  h.fold({pod("p1", "a", 4), pod("p2", "a", 4), pod("p3", "b", 4)});
  std::vector<JobId> ids;
  for (const char* u : {"p1", "p2", "p3"}) ids.push_back(*h.core->book().find(u));
  for (JobId id : ids) {
    ASSERT_EQ(h.core->state().runtime(id).status, JobStatus::Pending);
    h.core->state().set_wait(id, WaitReason::Quota, h.wall);
  }
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 2u) << "two per call";
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 3u) << "the third at the next call";
  h.adapter->report_waits(2);
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 3u) << "nothing while the reasons stay";
  EXPECT_EQ(h.adapter->counters().api_failures, 3u);
  h.core->state().set_wait(ids[1], WaitReason::NoFit, h.wall + 1);
  h.adapter->report_waits(2);
  EXPECT_EQ(h.adapter->counters().wait_conditions, 4u) << "p2's reason changed";
}

}  // namespace
}  // namespace ds::k8s
