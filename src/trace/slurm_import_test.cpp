// The Slurm importer on hand-written records (tests/fixtures/slurm/, each row a corner case)
// and on small inline inputs for the errors; tests/slurm/import_test.sh checks it against
// the records of a real Slurm test cluster.
#include "trace/slurm_import.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "trace/load.hpp"
#include "trace/native_writer.hpp"
#include "trace/slurm_assoc.hpp"
#include "trace/slurm_nodes.hpp"
#include "trace/slurm_sacct.hpp"
#include "trace/slurm_text.hpp"
#include "trace/trace_test_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

std::string fixture(const std::string& name) {
  return std::string(DEEPSHARE_FIXTURES) + "/slurm/" + name;
}

SlurmFiles fixture_files() {
  return {fixture("sacct.txt"), fixture("assoc.txt"), fixture("qos.txt"), fixture("nodes.txt")};
}

using testing::all_notes;
using testing::job;

TEST(SlurmSacct, FoldsStepsArraysHeterogeneousJobsAndRequeues) {
  const SacctRead r = read_sacct(fixture("sacct.txt"));
  EXPECT_EQ(r.step_rows, 4u);
  EXPECT_EQ(r.duplicate_rows, 1u);
  EXPECT_EQ(r.requeued_jobs, 1u);
  EXPECT_EQ(r.het_jobs, 1u);
  EXPECT_EQ(r.mixed_models, 1u);
  const std::map<std::string, std::size_t> skipped = {
      {"never started", 2}, {"still running", 1}, {"no GPUs (CPU-only)", 1}, {"no account", 1}};
  EXPECT_EQ(r.skipped, skipped);
  std::map<std::string, SacctJob> by_id;
  for (const auto& j : r.jobs) by_id[j.id] = j;
  ASSERT_EQ(by_id.size(), 14u);
  const SacctJob& het = by_id.at("110");  // 110+0 (1 GPU) and 110+1 (2 GPUs)
  EXPECT_EQ(het.gpus, 3);
  EXPECT_EQ(het.components, 2);
  EXPECT_EQ(het.end_s - het.start_s, 1810);  // earliest start, latest end
  EXPECT_EQ(het.run_s, 1809);
  const SacctJob& requeued = by_id.at("120");
  EXPECT_EQ(requeued.runs, 2);
  EXPECT_EQ(requeued.first_start_s % 86400, 9 * 3600 + 5 * 60);  // the first run's, 09:05
  EXPECT_EQ(requeued.run_s, 3600);                               // the last run
  EXPECT_EQ(requeued.submit_s % 86400, 9 * 3600);                // the first submit, 09:00
  EXPECT_EQ(by_id.at("101").gpu_type, "a100");                   // typed request
  EXPECT_EQ(by_id.at("134").gpu_type, "");                       // DeepShare's index types
  EXPECT_EQ(by_id.at("135").gpu_type, "");                       // two models: no constraint
  EXPECT_EQ(by_id.at("133").gpus, 1);                            // gres/gpushare only
  EXPECT_EQ(by_id.at("102_2").raw_id, "102");                    // array task
  EXPECT_EQ(by_id.at("100").time_limit_s.value_or(-1), 86400);   // 1-00:00:00
  EXPECT_FALSE(by_id.at("102_0").time_limit_s.has_value());      // UNLIMITED
  EXPECT_EQ(by_id.at("137").time_limit_s.value_or(-1), 600);     // 10:00
  EXPECT_EQ(by_id.at("140").nodes, 2);
}

TEST(SlurmAssoc, QuotasFromAssociationsQosAndTheAccountTree) {
  const SlurmTenants t = read_slurm_tenants(fixture("assoc.txt"), fixture("qos.txt"));
  std::map<std::string, Tenant> by;
  for (const auto& x : t.tenants) by[x.name] = x;
  ASSERT_EQ(by.size(), 8u);  // no root; user and partition rows are not accounts
  EXPECT_FALSE(by.contains("root"));
  // alpha's 12 GPUs cover research (8) and lab (6): scaled to 7 + 5, alpha keeps none.
  EXPECT_EQ(by["research"].quota_gpus, 7);
  EXPECT_EQ(by["lab"].quota_gpus, 5);
  EXPECT_EQ(by["alpha"].quota_gpus, 0);
  EXPECT_EQ(by["beta"].quota_gpus, 8);  // its own QOS' GrpTRES
  EXPECT_EQ(by["beta"].cls, TenantClass::Guaranteed);
  EXPECT_EQ(by["scav"].cls, TenantClass::BestEffort);
  EXPECT_EQ(by["gamma"].quota_gpus, 0);    // a CPU limit only
  EXPECT_EQ(by["shared1"].quota_gpus, 0);  // a QOS of two accounts is no quota of one
  EXPECT_DOUBLE_EQ(by["alpha"].weight, 10);
  EXPECT_DOUBLE_EQ(by["research"].weight, 10);  // Share "parent"
  EXPECT_DOUBLE_EQ(by["lab"].weight, 2);
  EXPECT_DOUBLE_EQ(by["gamma"].weight, 1);  // Share 0
  std::string notes;
  for (const auto& n : t.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("research 8 -> 7, lab 6 -> 5"));
  EXPECT_THAT(notes, HasSubstr("quota 8 GPUs from its QOS 'beta'"));
  EXPECT_THAT(notes, HasSubstr("'pool' limits several accounts together"));
}

TEST(SlurmAssoc, TreeOutputGivesTheParentsByIndentation) {
  TempDir dir;
  const std::string assoc = dir.write("assoc.txt",
                                      "Cluster|Account|User|GrpTRES|Share\n"
                                      "c|root|||1\n"
                                      "c| root|root||1\n"
                                      "c| dept||gres/gpu=4|1\n"
                                      "c|  team1||gres/gpu=3|1\n"
                                      "c|   team1|u1||1\n"
                                      "c|  team2||gres/gpu=3|1\n"
                                      "c| other||gres/gpu=5|1\n");
  const SlurmTenants t = read_slurm_tenants(assoc, "");
  ASSERT_EQ(t.tenants.size(), 4u);
  EXPECT_EQ(t.tenants[0].name, "dept");
  EXPECT_EQ(t.tenants[0].quota_gpus, 0);  // 4 = 2 + 2 for its teams
  EXPECT_EQ(t.tenants[1].quota_gpus, 2);
  EXPECT_EQ(t.tenants[2].quota_gpus, 2);
  EXPECT_EQ(t.tenants[3].quota_gpus, 5);  // a top-level account, not under dept
}

TEST(SlurmNodes, ModelsMemoryAndLayouts) {
  SlurmNodesOptions o;
  o.gpu_memory = {"mystery=48"};
  const SlurmCluster c = read_slurm_nodes(fixture("nodes.txt"), o);
  std::map<std::string, Node> by;
  for (const auto& n : c.cluster.nodes) by[n.name] = n;
  ASSERT_EQ(by.size(), 7u);  // cpu1 has no GPU; gn3 holds two models
  EXPECT_EQ(by["gn1"].gpus, 8);
  EXPECT_EQ(by["gn1"].gpu_type, "a100");
  EXPECT_EQ(by["gn1"].gpu_memory_mib, 40 * 1024);  // the table
  EXPECT_EQ(by["gn2"].gpu_type, "a100");           // --oneliner form
  EXPECT_EQ(by["gn3:v100_32g"].gpus, 4);
  EXPECT_EQ(by["gn3:v100_32g"].gpu_memory_mib, 32 * 1024);  // from the name
  EXPECT_EQ(by["gn3:t4"].gpu_memory_mib, 16 * 1024);
  EXPECT_EQ(by["ds1"].gpus, 4);  // DeepShare's per-index types: one node, no model
  EXPECT_EQ(by["ds1"].gpu_type, "");
  EXPECT_EQ(by["old1"].gpus, 2);                  // CfgTRES when Gres names none
  EXPECT_EQ(by["x1"].gpu_memory_mib, 48 * 1024);  // --gpu-memory
  EXPECT_EQ(c.cluster.total_gpus(), 30);
  std::string notes;
  for (const auto& n : c.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("skipped 1 nodes without GPUs"));
  EXPECT_THAT(notes, HasSubstr("old1 (DOWN+DRAIN)"));
  EXPECT_THAT(notes, HasSubstr("1 nodes hold GPUs of several models"));
  EXPECT_EQ(slurm_gpu_memory_mib("NVIDIA A100-SXM4-80GB"), 80 * 1024);
  EXPECT_EQ(slurm_gpu_memory_mib("Tesla-V100"), 16 * 1024);
  EXPECT_EQ(slurm_gpu_memory_mib("a10g"), 24 * 1024);  // not "10 GiB"
  EXPECT_EQ(slurm_gpu_memory_mib("unknown"), 0);
}

TEST(SlurmImport, TheWholeSite) {
  const SlurmImport imp = import_slurm(fixture_files(), {});
  const Workload& w = imp.workload;
  ASSERT_EQ(w.jobs.size(), 13u);  // 14 read, 138 asks for an h100 no node has
  ASSERT_EQ(imp.recorded.size(), w.jobs.size());
  EXPECT_EQ(w.jobs.front().name, "120");  // submit order: 09:00
  EXPECT_EQ(imp.recorded.front().runs, 2);
  const JobSpec& a100 = job(w, "101");
  EXPECT_EQ(a100.gpu_type, "a100");
  EXPECT_EQ(w.tenants[a100.tenant.index()].name, "beta");
  EXPECT_EQ(w.users[a100.user.index()], "bob");
  EXPECT_EQ(w.truth[a100.id.index()].state, FinalState::Failed);
  EXPECT_EQ(w.truth[a100.id.index()].work, seconds(1800));
  EXPECT_EQ(w.truth[job(w, "140").id.index()].state, FinalState::Other);  // TIMEOUT
  EXPECT_EQ(job(w, "140").gpus, 16);
  const Tenant& old = w.tenants[job(w, "137").tenant.index()];
  EXPECT_EQ(old.name, "old");  // not in the associations: best-effort, quota 0
  EXPECT_EQ(old.cls, TenantClass::BestEffort);
  const std::string notes = all_notes(w);
  EXPECT_THAT(notes, HasSubstr("skipped jobs: 1 asking for a GPU model no node has, 2 never "
                               "started, 1 no GPUs (CPU-only), 1 no account, 1 still running"));
  EXPECT_THAT(notes, HasSubstr("1 accounts with jobs are not in"));
  EXPECT_THAT(notes, HasSubstr("4 of them job steps"));
}

TEST(SlurmImport, OnePartition) {
  SlurmImportOptions o;
  o.partition = "gpu";
  const SlurmImport imp = import_slurm(fixture_files(), o);
  for (const auto& j : imp.workload.jobs) EXPECT_NE(j.name, "136");  // ran in debug
  EXPECT_EQ(imp.workload.cluster.total_gpus(), 28);                  // x1 is in debug only
  EXPECT_THAT(all_notes(imp.workload), HasSubstr("1 in another partition"));
}

// What import writes reads back as the same workload (native trace + cluster file).
TEST(SlurmImport, NativeFilesReadBackAsTheSameWorkload) {
  const Workload w = import_slurm(fixture_files(), {}).workload;
  TempDir dir;
  const std::string trace = dir.write("trace.csv", native_trace_csv(w, {{"extra", {"x"}}}));
  const std::string cluster = dir.write("cluster.yaml", cluster_file_yaml(w, "a\ncomment"));
  LoadOptions lo;
  lo.format = "native";
  lo.cluster_file = cluster;
  const Workload back = load_trace(trace, lo);
  ASSERT_EQ(back.jobs.size(), w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec &a = w.jobs[i], &b = back.jobs[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(w.tenants[a.tenant.index()].name, back.tenants[b.tenant.index()].name);
    EXPECT_EQ(a.gpus, b.gpus);
    EXPECT_EQ(a.gpu_type, b.gpu_type);
    EXPECT_EQ(a.submit, b.submit);
    EXPECT_EQ(w.truth[i].work, back.truth[i].work);
    EXPECT_EQ(w.truth[i].state, back.truth[i].state);
    EXPECT_EQ(a.user.valid() ? w.users[a.user.index()] : "",
              b.user.valid() ? back.users[b.user.index()] : "");
  }
  ASSERT_EQ(back.tenants.size(), w.tenants.size());
  for (std::size_t i = 0; i < w.tenants.size(); ++i) {
    EXPECT_EQ(back.tenants[i].name, w.tenants[i].name);
    EXPECT_EQ(back.tenants[i].quota_gpus, w.tenants[i].quota_gpus);
    EXPECT_EQ(back.tenants[i].cls, w.tenants[i].cls);
    EXPECT_EQ(back.tenants[i].weight, w.tenants[i].weight);
  }
  ASSERT_EQ(back.cluster.nodes.size(), w.cluster.nodes.size());
  for (std::size_t i = 0; i < w.cluster.nodes.size(); ++i) {
    EXPECT_EQ(back.cluster.nodes[i].gpus, w.cluster.nodes[i].gpus);
    EXPECT_EQ(back.cluster.nodes[i].gpu_type, w.cluster.nodes[i].gpu_type);
    EXPECT_EQ(back.cluster.nodes[i].gpu_memory_mib, w.cluster.nodes[i].gpu_memory_mib);
  }
}

TEST(SlurmText, ValuesAndTheirErrors) {
  EXPECT_EQ(parse_slurm_duration("1-02:03:04"), 93784);
  EXPECT_EQ(parse_slurm_duration("05:06"), 306);
  EXPECT_EQ(parse_slurm_duration("00:00:01.250"), 1);
  EXPECT_EQ(parse_slurm_duration("7"), 7);
  EXPECT_FALSE(parse_slurm_duration("1:2:3:4").has_value());
  EXPECT_FALSE(parse_slurm_duration("x-01:00").has_value());
  EXPECT_FALSE(parse_slurm_duration("01:").has_value());
  std::string err;
  const GpuTres t = parse_tres("billing=2,gres/gpu=2,gres/gpu:a100=2,mem=8G", err);
  EXPECT_TRUE(err.empty());
  EXPECT_EQ(t.gpus, 2);
  ASSERT_EQ(t.typed.size(), 1u);
  EXPECT_EQ(t.typed[0].first, "a100");
  (void)parse_tres("gres/gpu=lots", err);
  EXPECT_THAT(err, HasSubstr("a GPU count"));
  (void)parse_tres("cpu", err);
  EXPECT_THAT(err, HasSubstr("has no '='"));
  const auto g = parse_gres("gpu:a100:4(S:0,2),gpu:2,mps:400K,gpu:t4", err);
  EXPECT_TRUE(err.empty());
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].type, "a100");
  EXPECT_EQ(g[0].count, 4);
  EXPECT_EQ(g[1].type, "");
  EXPECT_EQ(g[1].count, 2);
  EXPECT_EQ(g[3].type, "t4");
  EXPECT_EQ(g[3].count, 1);
  EXPECT_TRUE(is_index_gpu_type("g12"));
  EXPECT_FALSE(is_index_gpu_type("gtx"));
}

TEST(SlurmText, ClearErrorsNameFileLineColumnAndField) {
  TempDir dir;
  const std::string head = "JobID|Account|Submit|Start|End|State|AllocTRES\n";
  auto sacct = [&](const std::string& rows) {
    return input_error([&] { (void)read_sacct(dir.write("s.txt", head + rows)); });
  };
  EXPECT_THAT(sacct("1|a|2026-13-01T00:00:00|None|None|PENDING|\n"),
              HasSubstr("s.txt:2:5: field 'Submit': expected a time 'YYYY-MM-DDTHH:MM:SS'"));
  EXPECT_THAT(sacct("1|a|2026-01-01T00:00:00|2026-01-01T00:00:09|2026-01-01T00:00:01|X|\n"),
              HasSubstr("field 'End': expected an end time not before the start"));
  EXPECT_THAT(sacct("1|a|2026-01-01T00:00:00|None|None|PENDING|gres/gpu=-1\n"),
              HasSubstr("s.txt:2:43: field 'AllocTRES': expected a GPU count in 0..100000 for "
                        "'gres/gpu', got 'gres/gpu=-1'"));
  ;
  EXPECT_THAT(sacct("1|my|job|2026-01-01T00:00:00|None|None|PENDING|\n"),
              HasSubstr("s.txt:2:48: row has 8 fields, the header has 7 (a value holding '|'"));
  EXPECT_THAT(sacct("1+x|a|2026-01-01T00:00:00|None|None|PENDING|\n"),
              HasSubstr("field 'JobID': expected a job id such as 123"));
  EXPECT_THAT(input_error([&] { (void)read_sacct(dir.write("n.txt", "1|a|b\n")); }),
              HasSubstr("n.txt:1: missing column 'JobID' (header has: '1|a|b'); write the file "
                        "with sacct --parsable2"));
  EXPECT_THAT(input_error([&] { (void)read_sacct(dir.write("e.txt", "")); }),
              HasSubstr("e.txt: file is empty"));
  // --parsable: a trailing '|' on every line.
  const SacctRead ok = read_sacct(
      dir.write("p.txt",
                "JobID|Account|Submit|Start|End|State|AllocTRES|\n"
                "7|a|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:01|COMPLETED|"
                "gres/gpu=1|\n"));
  ASSERT_EQ(ok.jobs.size(), 1u);
  EXPECT_EQ(ok.jobs[0].run_s, 60);  // End - Start without an Elapsed column
  EXPECT_THAT(input_error([&] {
                (void)read_slurm_tenants(dir.write("a.txt", "Cluster|Account\nc1|x\nc2|y\n"), "");
              }),
              HasSubstr("a.txt:3:1: field 'Cluster': expected one cluster per file"));
  EXPECT_THAT(
      input_error([&] { (void)read_slurm_nodes(dir.write("nodes.txt", "Gres=gpu:2\n"), {}); }),
      HasSubstr("nodes.txt:1:1: expected `scontrol show nodes` output"));
  EXPECT_THAT(input_error([&] {
                (void)read_slurm_nodes(dir.write("big.txt", "NodeName=n Gres=gpu:65\n"), {});
              }),
              HasSubstr("node 'n': 65 GPUs; DeepShare models at most 64"));
  EXPECT_THAT(input_error([&] {
                (void)read_slurm_nodes(dir.write("g.txt", "NodeName=n Gres=gpu:a:x\n"), {});
              }),
              HasSubstr("g.txt:1:1: node 'n': Gres: expected a GPU count"));
  EXPECT_THAT(input_error([&] {
                SlurmNodesOptions o;
                o.gpu_memory = {"a100"};
                (void)read_slurm_nodes(fixture("nodes.txt"), o);
              }),
              HasSubstr("--gpu-memory 'a100': expected MODEL=GIB"));
}

}  // namespace
}  // namespace ds
