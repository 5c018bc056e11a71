// A replay folder read back as a checked input (replay_folder.hpp) by `fidelity`: a folder
// written as `slurm replay` writes it (its excerpt simulated, standing in for what Slurm
// did) is compared without error, and every kind of damage issue #26 found is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"
#include "core/output_folder.hpp"
#include "replay/excerpt.hpp"
#include "replay/excerpt_sim.hpp"
#include "replay/fidelity.hpp"
#include "replay/replay_folder.hpp"
#include "report/metrics.hpp"
#include "report/outputs.hpp"
#include "report/report_data.hpp"
#include "trace/trace_test_util.hpp"

namespace ds::slurm {
namespace {
namespace fs = std::filesystem;

const char* kConfig =
    "partition: batch\npolicy: fifo-pooled\ntenant_source: config\n"
    "tenants:\n  - {name: a, account: a, trace: vcA, quota_gpus: 8}\n";

std::string venus_trace(int jobs, int gpus_of_last) {
  std::string t = "job_id,user,vc,gpu_num,state,submit_time,duration\n";
  for (int i = 0; i < jobs; ++i)
    t += std::to_string(i + 1) + ",u,vcA," +
         std::to_string(i + 1 == jobs ? gpus_of_last : 1 + i % 4) + ",COMPLETED," +
         std::to_string(i * 30) + "," + std::to_string(300 + 40 * i) + "\n";
  return t;
}

// The excerpt of the trace in `dir`, simulated, written as `slurm replay` writes its outputs.
struct ReplayFixture {
  testing::TempDir tmp;
  fs::path replay = fs::path(tmp.path()) / "replay";
  std::string trace, config;

  // `engine`: replay.json's, as `k8s replay` writes it ("kubernetes"); empty as Slurm's.
  explicit ReplayFixture(const char* config_text = kConfig, const std::string& engine = "") {
    trace = tmp.write("t.csv", venus_trace(12, 2));
    tmp.write("aux/vc_config.csv", "vc,nodes\nvcA,1\n");
    config = tmp.write("c.yaml", config_text);
    ExcerptSpec spec;
    spec.trace = trace;
    spec.jobs = 12;
    spec.time_scale = 60;
    const ControllerConfig cfg = load_controller_config(config);
    const Workload w = make_excerpt(spec, cfg, {{"n1", 4}, {"n2", 4}});
    const RunRecord sim = simulate_excerpt(w, cfg, spec.time_scale, LatencyModel{});
    std::string observed =
        "job,slurm_id,tenant,gpus,submit_ms,first_start_ms,end_ms,queue_ms,runs,preemptions,"
        "completed,shared_runs,borrowed_runs,slurm_start_s,slurm_end_s\n";
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      const JobOutcome& o = sim.jobs[i];
      append_csv_row(observed, {w.jobs[i].name, std::to_string(100 + i), "a",
                                std::to_string(w.jobs[i].gpus), std::to_string(w.jobs[i].submit),
                                std::to_string(o.first_start), std::to_string(o.end),
                                std::to_string(o.queue), std::to_string(1 + o.preemptions),
                                std::to_string(o.preemptions), "1", "0", "0", "0", "0"});
    }
    nlohmann::json rj = {{"trace", trace},
                         {"format", "venus"},
                         {"excerpt", format_excerpt(spec)},
                         {"time_scale", 60.0},
                         {"config", config},
                         {"jobs", w.jobs.size()},
                         {"submitted", w.jobs.size()},
                         {"completed", w.jobs.size()},
                         {"wall_seconds", 30.0},
                         {"start_latency_wall_s", 0.0}};
    rj["nodes"] = {{{"name", "n1"}, {"gpus", 4}}, {{"name", "n2"}, {"gpus", 4}}};
    if (!engine.empty()) rj["engine"] = engine, rj["scheduler"] = "deepshare";
    RunInfo info;
    info.policy = cfg.policy;
    info.trace = w.name;
    info.format = w.format;
    info.kind = "replay";
    info.command = "slurm replay";
    info.extra_files = {{"observed.csv", observed}, {"replay.json", rj.dump(2) + "\n"}};
    write_outputs(replay.string(), w, sim, compute_metrics(w, sim), info);
  }

  // Rewrites a file and, with `reseal`, its manifest entry (a folder changed consistently,
  // so that the content checks behind the digests are reached).
  void rewrite(const std::string& name, const std::string& text, bool reseal) const {
    std::ofstream(replay / name, std::ios::binary) << text;
    if (!reseal) return;
    Manifest m = read_manifest(replay);
    for (auto& f : m.files)
      if (f.name == name) f.digest = file_digest(replay / name, &f.bytes);
    std::ofstream(replay / kManifestName, std::ios::binary) << m.json();
  }
  [[nodiscard]] std::string error(const std::string& out_name = "fid") const {
    try {
      (void)run_fidelity(replay.string(), (fs::path(tmp.path()) / out_name).string(), {});
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST(ReplayFolder, AFolderAsTheReplayWritesItIsCompared) {
  const ReplayFixture f;
  const ReplayFolder folder = read_replay_folder(f.replay);
  EXPECT_EQ(folder.record.jobs, 12u);
  EXPECT_EQ(folder.observed.size(), 12u);
  FidelityOptions opt;
  opt.ensemble = 2;
  const FidelityReport rep = run_fidelity(f.replay.string(), f.tmp.path() + "/fid", opt);
  EXPECT_EQ(rep.jobs, 12u);
  EXPECT_NEAR(rep.jct_rel0, 0.0, 1e-9);  // "real" is the simulation without latency
  const Manifest m = read_manifest(fs::path(f.tmp.path()) / "fid");
  EXPECT_EQ(m.kind, "fidelity");
  verify_manifest(fs::path(f.tmp.path()) / "fid", m, {});
}

// DeepShare on Kubernetes places whole GPUs (no MPS yet), so `fidelity` simulates a
// Kubernetes replay without sharing; the same excerpt replayed on Slurm may share. And a pod
// names no user: the scheduler's user is the namespace (the tenant), so the simulation's
// predictors see one user per tenant too; on Slurm the trace's users stay.
TEST(ReplayFolder, AKubernetesReplayIsSimulatedWithoutSharingAndWithOneUserPerTenant) {
  const ReplayFixture slurm;
  const Workload on_slurm = fidelity_workload(slurm.replay.string());
  ASSERT_EQ(on_slurm.jobs.size(), 12u);
  for (const JobSpec& j : on_slurm.jobs) EXPECT_TRUE(j.colocatable) << j.name;
  const ReplayFixture k8s(kConfig, "kubernetes");
  const Workload on_k8s = fidelity_workload(k8s.replay.string());
  ASSERT_EQ(on_k8s.jobs.size(), 12u);
  std::map<std::uint32_t, std::set<std::uint32_t>> users;  // per tenant
  bool own_users = false;  // some Slurm job's user is not named as its tenant
  for (std::size_t k = 0; k < on_k8s.jobs.size(); ++k) {
    const JobSpec& j = on_k8s.jobs[k];
    EXPECT_FALSE(j.colocatable) << j.name;
    EXPECT_EQ(on_k8s.users[j.user.index()], on_k8s.tenants[j.tenant.index()].name) << j.name;
    users[j.tenant.value].insert(j.user.value);
    const JobSpec& s = on_slurm.jobs[k];
    own_users =
        own_users || on_slurm.users[s.user.index()] != on_slurm.tenants[s.tenant.index()].name;
  }
  for (const auto& [t, of_tenant] : users) EXPECT_EQ(of_tenant.size(), 1u) << t;
  EXPECT_TRUE(own_users);
  FidelityOptions opt;
  opt.ensemble = 0;
  const FidelityReport rep = run_fidelity(k8s.replay.string(), k8s.tmp.path() + "/fid", opt);
  EXPECT_EQ(rep.sim_peak_shared_gpus, 0);
  EXPECT_EQ(rep.engine, "Kubernetes, scheduler deepshare");
}

TEST(ReplayFolder, HandEditsAreRefused) {
  const ReplayFixture f;
  const std::string rj = read_file((f.replay / "replay.json").string());
  // An edit the manifest does not know of.
  f.rewrite("replay.json", std::string(rj).replace(rj.find("60.0"), 4, "20.0"), false);
  EXPECT_NE(f.error().find("replay.json: changed since it was written"), std::string::npos)
      << f.error();
  // Edits with a matching manifest reach the content checks.
  f.rewrite("replay.json", std::string(rj).replace(rj.find("60.0"), 4, "-1.0"), true);
  EXPECT_NE(f.error().find("key 'time_scale': expected a number in 0.001..1000000"),
            std::string::npos)
      << f.error();
  f.rewrite("replay.json", "[]", true);
  EXPECT_NE(f.error().find("replay.json: expected a JSON object"), std::string::npos);
  f.rewrite("replay.json", std::string(rj).replace(rj.find("\"gpus\": 4"), 9, "\"gpus\": 0"), true);
  EXPECT_NE(f.error().find("key 'nodes[0].gpus': expected a number in 1..64"), std::string::npos)
      << f.error();
  f.rewrite("replay.json", rj, true);
  const std::string obs = read_file((f.replay / "observed.csv").string());
  const auto second = obs.find('\n') + 1;
  f.rewrite("observed.csv", obs.substr(0, second) + "ghost" + obs.substr(obs.find(',', second)),
            true);
  EXPECT_NE(f.error().find("job 'ghost' is not in the replay's excerpt"), std::string::npos)
      << f.error();
  f.rewrite("observed.csv", obs.substr(0, obs.rfind('\n', obs.size() - 2) + 1), true);
  EXPECT_NE(f.error().find("11 rows, replay.json counts 12 jobs"), std::string::npos) << f.error();
  f.rewrite("observed.csv", obs + "x,1,a,1,-5,0,0,0,0,0,0,0,0,0,0\n", true);
  EXPECT_NE(f.error().find("field 'submit_ms': expected milliseconds in 0.."), std::string::npos)
      << f.error();
  f.rewrite("observed.csv", obs, true);
  EXPECT_EQ(f.error(), "(no error)");
  fs::remove(f.replay / kManifestName);
  EXPECT_NE(f.error().find("manifest.json: missing"), std::string::npos);
}

// `fidelity` writes REPLAY/fidelity by default: its lock and staging folder sit inside the
// replay folder while it reads that folder, and its results stay there afterwards.
TEST(ReplayFolder, FidelityWritesItsOwnFolderInsideTheReplay) {
  const ReplayFixture f;
  {
    OutputFolder out((f.replay / "fidelity").string(), {});
    FidelityOptions opt;
    opt.ensemble = 0;
    (void)run_fidelity(f.replay.string(), out.dir().string(), opt);
    out.commit();
  }
  EXPECT_NO_THROW((void)read_replay_folder(f.replay));
  EXPECT_TRUE(fs::exists(f.replay / "fidelity" / "fidelity.json"));
  // `report` reads a replay folder as a run (its run files, checked against the manifest).
  EXPECT_EQ(report::build_report_data(f.replay.string())["runs"].size(), 1u);
}

// The replay's trace or config changed since: the excerpt it gives now is another workload.
TEST(ReplayFolder, AChangedTraceIsNotComparedWithAnOldReplay) {
  const ReplayFixture f;
  f.tmp.write("t.csv", venus_trace(12, 4));  // the last job now asks for 4 GPUs
  EXPECT_NE(f.error().find("now give another excerpt"), std::string::npos) << f.error();
  f.tmp.write("t.csv", venus_trace(12, 2));
  EXPECT_EQ(f.error(), "(no error)");
}

}  // namespace
}  // namespace ds::slurm
