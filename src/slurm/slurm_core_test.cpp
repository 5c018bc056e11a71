// Unit tests of the Slurm adapter's pure parts: the record codec (AdminComment), the GRES
// layout and how a start is expressed in it. The parts that talk to Slurm are tested
// against a real cluster in tests/slurm/ (the replay tools: src/replay/replay_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <set>

#include "core/error.hpp"
#include "slurm/accounts.hpp"
#include "slurm/gres.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {

TEST(Record, GateRequestAndPinRoundTrip) {
  const std::string gate = "ds:v=1;gpus=4;n=1;nr=0;mem=3642;u=62;trace=765472";
  auto r = parse_record(gate);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->request.gpus, 4);
  EXPECT_EQ(r->request.nodes, 1);
  EXPECT_FALSE(r->request.no_requeue);
  EXPECT_DOUBLE_EQ(r->request.mem_mib, 3642);
  EXPECT_DOUBLE_EQ(r->request.util, 62);
  EXPECT_EQ(r->request.trace, "765472");
  EXPECT_FALSE(r->pin);
  RecordFields f = parse_fields(gate);
  Pin p;
  p.restart = 2;
  p.borrowed = true;
  p.mps_percent = 50;
  p.mem_limit_mib = 4096;
  p.decided_ms = 1234;
  p.gpus = {{"node1", 0b1011}, {"node3", 0b1}};
  write_pin(f, p);
  const std::string text = format_fields(f);
  EXPECT_EQ(text.rfind("ds:v=1;gpus=4;n=1;nr=0;mem=3642;u=62;trace=765472;", 0), 0u) << text;
  EXPECT_NE(text.find("g=node1@0,1,3/node3@0"), std::string::npos) << text;
  const auto back = parse_record(text);
  ASSERT_TRUE(back && back->pin);
  EXPECT_EQ(back->pin->restart, 2u);
  EXPECT_TRUE(back->pin->borrowed);
  EXPECT_FALSE(back->pin->shared);
  EXPECT_EQ(back->pin->mps_percent, 50);
  EXPECT_EQ(back->pin->mem_limit_mib, 4096);
  EXPECT_EQ(back->pin->gpus, p.gpus);
  clear_pin(f);
  EXPECT_FALSE(parse_record(format_fields(f))->pin);
  EXPECT_EQ(parse_record(format_fields(f))->request.gpus, 4);
}

// gm= (the job's GPU model, written by the gate) survives a pin being written and cleared,
// and comes after the gate's other keys, as the gate lays it out (gate.format_record).
TEST(Record, TheGpuModelRoundTripsWithThePin) {
  const std::string gate = "ds:v=1;gpus=2;n=1;nr=0;gm=V100M16|V100M32";
  auto r = parse_record(gate);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->request.gpu_model, "V100M16|V100M32");
  EXPECT_EQ(format_fields(parse_fields(gate)), gate);
  RecordFields f = parse_fields(gate);
  Pin p;
  p.gpus = {{"node2", 0b11}};
  write_pin(f, p);
  const std::string text = format_fields(f);
  EXPECT_EQ(text.rfind(gate + ";", 0), 0u) << text;
  EXPECT_EQ(parse_record(text)->request.gpu_model, "V100M16|V100M32");
  clear_pin(f);
  EXPECT_EQ(parse_record(format_fields(f))->request.gpu_model, "V100M16|V100M32");
  EXPECT_EQ(parse_record("ds:v=1;gpus=2")->request.gpu_model, "");  // any model
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;gm=a100|"), InputError);
  EXPECT_TRUE(is_gpu_model("a100_80g.sxm-4"));
  EXPECT_FALSE(is_gpu_model("g3"));  // a GPU index type on DeepShare's nodes
  EXPECT_FALSE(is_gpu_model("a100|v100"));
  EXPECT_FALSE(is_gpu_model(""));
}

TEST(Record, ValuesAreCheckedWithRanges) {
  EXPECT_FALSE(parse_record("my own comment"));
  EXPECT_FALSE(parse_record("ds:u=40"));  // no request: not a gate record
  RecordLimits lim;
  lim.max_gpus = 16;
  lim.max_mem_mib = 24576;
  EXPECT_THROW(parse_record("ds:v=1;gpus=17", lim), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=0"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2x"), InputError);
  EXPECT_THROW(parse_record("ds:v=2;gpus=2"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;mem=99999", lim), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;u=101"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;nr=2"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;b=1;g=node1@64"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;b=1"), InputError);  // a pin names its GPUs
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;m=0;g=node1@0"), InputError);
  // A node is a hostname: a padded or odd name would not survive the round trip.
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;g=node1@0/ node2@1"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;g=no de@0"), InputError);
  EXPECT_TRUE(parse_record("ds:v=1;gpus=2;r=0;g=gpu-a.1_x@0/node2@1"));
  auto p = parse_record("ds:v=1;gpus=1;n=1;nr=1;begin=1700000000;p=3;x=no room");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->request.no_requeue);
  EXPECT_EQ(p->request.begin_s, 1700000000);
  EXPECT_EQ(p->preempted_at, 3u);
  EXPECT_EQ(p->refused, "no room");
}

// The gate and the controller answer the same for every value of the shared corpus
// (tests/slurm/record_values.txt; gate_test.lua reads it too).
TEST(Record, TheGateAndTheControllerAgreeOnEveryValue) {
  const char* src = std::getenv("DEEPSHARE_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "DEEPSHARE_SOURCE_DIR is set by CTest";
  std::ifstream in(std::string(src) + "/tests/slurm/record_values.txt");
  ASSERT_TRUE(in) << "tests/slurm/record_values.txt";
  int cases = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key, value, want;
    fields >> key;
    fields >> std::ws;
    if (fields.peek() == '\'') {
      fields.get();
      std::getline(fields, value, '\'');
    } else {
      fields >> value;
    }
    fields >> want;
    const bool pin = key == "r" || key == "m" || key == "t" || key == "l";
    std::string text = "ds:v=1;" + std::string(key == "gpus" ? "" : "gpus=1;") +
                       (pin && key != "r" ? "r=0;g=node1@0;" : "") + key + "=" + value;
    if (key == "r") text += ";g=node1@0";
    bool ok = true;
    try {
      ok = parse_record(text).has_value();
    } catch (const InputError&) {
      ok = false;
    }
    EXPECT_EQ(ok, want == "ok") << text;
    ++cases;
  }
  EXPECT_GT(cases, 30);
}

TEST(Record, AUsersStartTimeInTheCommentIsReadAsBegin) {
  EXPECT_EQ(comment_begin("ds:begin=1700000000"), 1700000000);
  EXPECT_EQ(comment_begin("ds:mem=4000;begin=0"), 0);
  EXPECT_FALSE(comment_begin("ds:mem=4000"));
  EXPECT_FALSE(comment_begin("begin=5 in prose"));
  EXPECT_FALSE(comment_begin("ds:begin=nan"));  // malformed: the record's begin stands
}

Association assoc(const std::string& account, const std::string& parent, std::int64_t quota,
                  const std::string& user = "") {
  Association a;
  a.account = account;
  a.parent = parent;
  a.grp_quota = quota;
  a.user = user;
  return a;
}

std::vector<Tenant> named(std::initializer_list<const char*> names) {
  std::vector<Tenant> out;
  for (const char* n : names) {
    out.emplace_back();
    out.back().id = TenantId(static_cast<std::uint32_t>(out.size() - 1));
    out.back().name = n;
  }
  return out;
}

TEST(Accounts, FlatAccountsKeepTheirGrpTres) {
  const Accounts acc =
      accounts_of({assoc("root", "", -1), assoc("alpha", "root", 8), assoc("beta", "root", 8),
                   assoc("scav", "root", 0), assoc("alpha", "root", -1, "alice")});
  ASSERT_EQ(acc.size(), 3u);  // root and the user's association left out
  auto ts = named({"alpha", "beta", "scav"});
  EXPECT_TRUE(apply_accounts(ts, acc, 16).empty());
  EXPECT_EQ(ts[0].quota_gpus, 8);
  EXPECT_FALSE(ts[0].parent.valid());
  EXPECT_EQ(ts[2].cls, TenantClass::BestEffort);
}

TEST(Accounts, ASubAccountIsBoundByItsParent) {
  // The case: a coordinator of alpha (quota 8) made sub with GrpTRES=gres/gpu=16.
  const Accounts acc =
      accounts_of({assoc("alpha", "root", 8), assoc("sub", "alpha", 16), assoc("beta", "root", 8)});
  auto ts = named({"alpha", "beta", "sub"});
  const auto problems = apply_accounts(ts, acc, 16);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("tenant 'alpha'"), std::string::npos) << problems[0];
  EXPECT_EQ(ts[2].parent, TenantId(0));
  EXPECT_EQ(ts[2].quota_gpus, 8);  // not 16
  EXPECT_EQ(ts[0].quota_gpus, 0);
  EXPECT_EQ(ts[0].cls, TenantClass::BestEffort);  // its own jobs: nothing left of its 8
  EXPECT_EQ(ts[2].cls, TenantClass::Guaranteed);
}

TEST(Accounts, AGoneAccountKeepsItsTenantWithoutQuota) {
  auto ts = named({"alpha", "gone"});
  ts[1].quota_gpus = 4;
  EXPECT_TRUE(apply_accounts(ts, accounts_of({assoc("alpha", "root", 8)}), 16).empty());
  EXPECT_EQ(ts[1].quota_gpus, 0);
}

TEST(Record, ForgedPinsInTheCommentAreRecognised) {
  EXPECT_TRUE(has_pin_keys("ds:r=0;b=0;s=0;g=node4@0,1,2,3;m=100;gpus=4"));
  EXPECT_TRUE(has_pin_keys("ds:gpus=2;b=0"));
  EXPECT_FALSE(has_pin_keys("ds:gpus=2;u=40;mem=4000"));
  EXPECT_FALSE(has_pin_keys("b=0 in prose"));
}

TEST(Gres, RequestsAllocationsAndCounts) {
  auto r = parse_gres_request("gres:gpu:g0:1,gres:gpu:g2:1");
  EXPECT_EQ(r.kind, GresKind::Whole);
  EXPECT_EQ(r.mask, 0b101u);
  r = parse_gres_request("gres:gpushare:g3:1");
  EXPECT_EQ(r.kind, GresKind::Slot);
  EXPECT_EQ(r.mask, 0b1000u);
  EXPECT_EQ(parse_gres_request("").kind, GresKind::None);
  EXPECT_EQ(parse_gres_request("gres:gpu:2").kind, GresKind::Other);
  EXPECT_EQ(parse_gres_request("gres:gpu:g0:1,gres:gpushare:g1:1").kind, GresKind::Other);
  EXPECT_EQ(parse_gres_request("gres:nic:1").kind, GresKind::Other);
  EXPECT_EQ(format_gres_request(GresKind::Whole, 0b101), "gres:gpu:g0:1,gres:gpu:g2:1");
  EXPECT_EQ(format_gres_request(GresKind::Slot, 0b10), "gres:gpushare:g1:1");
  auto a = parse_gres_alloc("gpu:g0:1(IDX:0),gpu:g2:1(IDX:2),gpushare:g3:1(IDX:3)");
  EXPECT_EQ(a.gpus, 0b101u);
  EXPECT_EQ(a.slots, 0b1000u);
  a = parse_gres_alloc("gpu:2(IDX:0-1)");
  EXPECT_EQ(a.gpus, 0b11u);
  a = parse_gres_alloc("gpu:a100:3(IDX:0,2-3)");
  EXPECT_EQ(a.gpus, 0b1101u);
  EXPECT_EQ(parse_gres_alloc("gpu:g1:0(IDX:),gpushare:g1:1(IDX:1)").gpus, 0u);
  EXPECT_EQ(parse_gpu_count("gpu:g0:1,gpu:g1:1,gpushare:g0:1,gpushare:g1:1"), 2);
  EXPECT_EQ(parse_gpu_count("gpu:4,mps:400"), 4);
  EXPECT_EQ(parse_gpu_count("gpu:tesla:4(S:0)"), 4);
  EXPECT_EQ(expand_tasks("0-5%2"), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(expand_tasks("1,3-4,7-11:2"), (std::vector<std::uint32_t>{1, 3, 4, 7, 9, 11}));
}

TEST(Gres, AJobsRequestIsFixedOnceWritten) {
  std::set<std::pair<std::string, int>> busy = {{"node1", 0}, {"node2", 1}};
  Occupancy occ;
  occ.idle = [&](const std::string& n, std::uint64_t m) {
    for (int k = 0; k < 64; ++k)
      if ((m >> k & 1) && busy.count({n, k})) return false;
    return true;
  };
  occ.may_share = [](const std::string& n) { return n != "node3"; };
  const std::vector<std::string> nodes = {"node1", "node2", "node3"};
  // first start: as decided, and the request is written
  auto e = express_start({{"node1", 0b110}}, false, {}, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->write_request);
  EXPECT_EQ(e->kind, GresKind::Whole);
  EXPECT_EQ(e->gpus.at("node1"), 0b110u);
  e = express_start({{"node1", 0b1}}, true, {}, nodes, occ);  // colocated: slots
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, GresKind::Slot);
  // colocated on a partner that holds only the slots (it ran colocated before): the GPUs
  e = express_start({{"node1", 0b1}}, true, {}, nodes, occ, GresKind::Slot);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, GresKind::Whole);
  EXPECT_FALSE(express_start({{"node1", 0b11}, {"node2", 0b1100}}, false, {}, nodes, occ));
  // a restart of a job that holds gpu g1: same indices, where they are idle
  const GresRequest g1{GresKind::Whole, 0b10, 0};
  e = express_start({{"node1", 0b100}}, false, g1, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->write_request);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node1", 0b10}}));
  busy.insert({"node1", 1});
  e = express_start({{"node1", 0b100}}, false, g1, nodes, occ);  // moves to node3
  ASSERT_TRUE(e);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node3", 0b10}}));
  busy.insert({"node3", 1});
  EXPECT_FALSE(express_start({{"node1", 0b100}}, false, g1, nodes, occ));
  EXPECT_FALSE(express_start({{"node1", 0b10}}, true, g1, nodes, occ));  // ran whole: no slots
  // a job that ran colocated holds slot g0: colocated again on g0, or alone on g0 of a
  // DeepShare-only node
  const GresRequest s0{GresKind::Slot, 0b1, 0};
  EXPECT_TRUE(express_start({{"node2", 0b1}}, true, s0, nodes, occ));
  EXPECT_FALSE(express_start({{"node2", 0b10}}, true, s0, nodes, occ));
  e = express_start({{"node1", 0b100}}, false, s0, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node2", 0b1}}));
  EXPECT_EQ(e->kind, GresKind::Slot);
  EXPECT_FALSE(express_start({{"node1", 0b1}}, false, {GresKind::Other, 0, 2}, nodes, occ));
}

}  // namespace ds::slurm
