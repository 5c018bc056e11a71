// GPUs as DRA devices (dra.hpp) without a server: ResourceSlices -> each node's GPUs,
// ResourceClaims -> what DeepShare can allocate (or why not), a pod's claims, and the
// allocation written into a claim. The writes themselves run on a real API server
// (tests/k8s/dra_test.sh).
#include "k8s/dra.hpp"

#include <gtest/gtest.h>

namespace ds::k8s {
namespace {

json slice(const std::string& node, const std::string& driver, std::int64_t generation,
           const std::vector<std::pair<std::string, int>>& devices) {
  json d = json::array();
  for (const auto& [name, index] : devices) {
    json dev = {{"name", name}};
    if (index >= 0) dev["attributes"] = {{"index", {{"int", index}}}};
    d.push_back(dev);
  }
  return {{"metadata", {{"name", node + "-" + driver}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", generation}, {"resourceSliceCount", 1}}},
            {"devices", d}}}};
}

json claim(const json& requests) {
  return {{"metadata", {{"namespace", "a"}, {"name", "c"}, {"uid", "cu"}}},
          {"spec", {{"devices", {{"requests", requests}}}}}};
}

json gpus(const std::string& name, int count) {
  return {{"name", name}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", count}}}};
}

TEST(Dra, SlicesGiveEachNodeItsGpusInIndexOrder) {
  const std::vector<json> slices = {
      slice("n1", "gpu.nvidia.com", 2, {{"gpu-b", 1}, {"gpu-a", 0}, {"gpu-c", 2}}),
      slice("n1", "gpu.nvidia.com", 1, {{"old", 0}}),                     // an older generation
      slice("n2", "nic.example.com", 1, {{"nic-0", 0}}),                  // another driver
      slice("n3", "gpu.nvidia.com", 1, {{"gpu-1", -1}, {"gpu-0", -1}})};  // no index: by name
  const NodeDeviceMap m = read_slices(slices, "gpu.nvidia.com");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("n1").devices, (std::vector<std::string>{"gpu-a", "gpu-b", "gpu-c"}));
  EXPECT_EQ(m.at("n1").pool, "n1");
  EXPECT_EQ(m.at("n3").devices, (std::vector<std::string>{"gpu-0", "gpu-1"}));
  EXPECT_FALSE(m.count("n2"));
  EXPECT_FALSE(m.at("n1").shareable) << "its devices allow one allocation each";
  json shared = slice("n4", "gpu.nvidia.com", 1, {{"gpu-0", 0}, {"gpu-1", 1}});
  for (auto& d : shared["spec"]["devices"]) d["allowMultipleAllocations"] = true;
  EXPECT_TRUE(read_slices({shared}, "gpu.nvidia.com").at("n4").shareable);
  shared["spec"]["devices"][1].erase("allowMultipleAllocations");
  EXPECT_FALSE(read_slices({shared}, "gpu.nvidia.com").at("n4").shareable) << "all or none";
}

TEST(Dra, ClaimsOfGpusByCountAreAllocatableAndOthersRefusedWithTheReason) {
  const DraConfig cfg;
  json ok = claim(json::array({gpus("train", 2), gpus("eval", 1)}));
  ok["spec"]["devices"]["config"] = json::array(
      {{{"requests", {"train"}}, {"opaque", {{"driver", "gpu.nvidia.com"}, {"parameters", {}}}}}});
  const ClaimAsk a = read_claim(ok, cfg);
  EXPECT_TRUE(a.refusal.empty()) << a.refusal;
  EXPECT_EQ(a.gpus, 3);
  ASSERT_EQ(a.requests.size(), 2u);
  EXPECT_EQ(a.requests[1].name, "eval");
  ASSERT_EQ(a.config.size(), 1u);
  EXPECT_EQ(a.config[0]["source"], "FromClaim") << "the claim's own configuration";
  json one = gpus("g", 1);
  one["exactly"].erase("count");
  EXPECT_EQ(read_claim(claim(json::array({one})), cfg).gpus, 1) << "count defaults to 1";

  const auto refusal = [&](json request) {
    return read_claim(claim(json::array({std::move(request)})), cfg).refusal;
  };
  json all = gpus("g", 1);
  all["exactly"]["allocationMode"] = "All";
  EXPECT_NE(refusal(all).find("allocationMode All"), std::string::npos);
  json other = gpus("g", 1);
  other["exactly"]["deviceClassName"] = "fpga.example.com";
  EXPECT_NE(refusal(other).find("DeviceClass fpga.example.com"), std::string::npos);
  json sel = gpus("g", 1);
  sel["exactly"]["selectors"] = json::array({{{"cel", {{"expression", "true"}}}}});
  EXPECT_NE(refusal(sel).find("selectors"), std::string::npos);
  json admin = gpus("g", 1);
  admin["exactly"]["adminAccess"] = true;
  EXPECT_NE(refusal(admin).find("admin access"), std::string::npos);
  EXPECT_NE(refusal({{"name", "g"}, {"firstAvailable", json::array({gpus("x", 1)})}})
                .find("firstAvailable"),
            std::string::npos);
  json constrained = ok;
  constrained["spec"]["devices"]["constraints"] =
      json::array({{{"matchAttribute", "gpu.nvidia.com/productName"}}});
  EXPECT_NE(read_claim(constrained, cfg).refusal.find("constraints"), std::string::npos);
  EXPECT_FALSE(read_claim(claim(json::array()), cfg).refusal.empty()) << "asks for nothing";
  EXPECT_EQ(read_claim(constrained, cfg).gpus, 0) << "a refused claim counts no GPU";

  json held = ok;
  held["status"] = {
      {"allocation", {{"devices", {{"results", json::array()}}}}},
      {"reservedFor", json::array({{{"resource", "pods"}, {"name", "p"}, {"uid", "pu"}}})}};
  const ClaimAsk h = read_claim(held, cfg);
  EXPECT_TRUE(h.allocated);
  EXPECT_EQ(h.reserved_for, (std::vector<std::string>{"pu"}));
}

TEST(Dra, APodsClaimsResolveThroughItsStatus) {
  json pod = {
      {"spec",
       {{"resourceClaims", json::array({{{"name", "gpus"}, {"resourceClaimTemplateName", "two"}},
                                        {{"name", "shared"}, {"resourceClaimName", "mine"}}})}}}};
  auto c = pod_claims(pod);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(c[0].templated);
  EXPECT_EQ(c[0].claim, "") << "not made yet";
  EXPECT_EQ(c[1].claim, "mine");
  pod["status"]["resourceClaimStatuses"] =
      json::array({{{"name", "gpus"}, {"resourceClaimName", "p-gpus-x7k2q"}}});
  c = pod_claims(pod);
  EXPECT_EQ(c[0].claim, "p-gpus-x7k2q");
  EXPECT_TRUE(pod_claims(json::object()).empty());
}

TEST(Dra, TheAllocationNamesTheChosenGpusDevicesAndTheNode) {
  const ClaimAsk a = read_claim(claim(json::array({gpus("train", 2), gpus("eval", 1)})), {});
  const NodeDevices d{"pool-n1", {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}};
  const json alloc = claim_allocation(a, "gpu.nvidia.com", d, "n1", {3, 1, 2});
  const json& r = alloc["devices"]["results"];
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], (json{{"request", "train"},
                        {"driver", "gpu.nvidia.com"},
                        {"pool", "pool-n1"},
                        {"device", "gpu-3"}}));
  EXPECT_EQ(r[1]["device"], "gpu-1");
  EXPECT_EQ(r[2]["request"], "eval");
  EXPECT_EQ(r[2]["device"], "gpu-2");
  EXPECT_EQ(alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0], "n1");
  EXPECT_FALSE(alloc["devices"].contains("config")) << "none in the claim";
  EXPECT_FALSE(r[0].contains("shareID")) << "a device of one allocation";
  const NodeDevices shareable{"pool-n1", {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}, true};
  const json shared = claim_allocation(a, "gpu.nvidia.com", shareable, "n1", {0, 1, 2});
  EXPECT_EQ(shared["devices"]["results"][0]["shareID"], "cu") << "the claim's UID: one share";
}

TEST(Dra, TheIndexReadsAChangedClaimAgain) {
  ClaimIndex index;
  auto one = std::make_shared<const json>(claim(json::array({gpus("g", 1)})));
  index.update({one}, {});
  ASSERT_TRUE(index.find("a", "c"));
  EXPECT_EQ(index.find("a", "c")->gpus, 1);
  auto two = std::make_shared<const json>(claim(json::array({gpus("g", 2)})));
  index.update({two}, {});
  EXPECT_EQ(index.find("a", "c")->gpus, 2);
  EXPECT_FALSE(index.find("b", "c"));
  index.update({}, {});
  EXPECT_FALSE(index.find("a", "c")) << "deleted";
}

}  // namespace
}  // namespace ds::k8s
