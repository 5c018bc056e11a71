// Unit tests of the Slurm controller's operations helpers (ops.hpp): the reload plan and
// the replay's journal (never deletes a file it did not create).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "slurm/config.hpp"
#include "slurm/ops.hpp"

namespace ds::slurm {
namespace {

ControllerConfig base_config() {
  ControllerConfig c;
  c.tenant_source = TenantSource::Config;
  TenantConfig a;
  a.account = "a";
  a.tenant.name = "a";
  a.tenant.quota_gpus = 4;
  c.tenants = {a};
  return c;
}

TEST(Reload, LiveAndRestartKeys) {
  const ControllerConfig a = base_config();
  ControllerConfig b = a;
  EXPECT_TRUE(plan_reload(a, b).live.empty());
  EXPECT_TRUE(plan_reload(a, b).restart.empty());
  EXPECT_FALSE(plan_reload(a, b).rebuild_policy);
  b.poll_ms = 250;
  b.metrics = "0.0.0.0:9464";
  b.partition = "other";
  ReloadPlan p = plan_reload(a, b);
  EXPECT_EQ(p.live, (std::vector<std::string>{"poll_ms"}));
  EXPECT_EQ(p.restart, (std::vector<std::string>{"partition", "metrics"}));
  EXPECT_FALSE(p.rebuild_policy);
  b = a;
  b.policy = "kueue";
  b.tenants[0].tenant.quota_gpus = 6;
  p = plan_reload(a, b);
  EXPECT_EQ(p.live, (std::vector<std::string>{"policy", "tenants"}));
  EXPECT_TRUE(p.rebuild_policy);
  b = a;
  b.tenants[0].account = "z";  // another tenant list: ids would change
  p = plan_reload(a, b);
  EXPECT_EQ(p.restart, (std::vector<std::string>{"tenants"}));
  EXPECT_FALSE(p.rebuild_policy);
}

TEST(ReplayJournal, NeverDeletesAFileItDidNotCreate) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ds_ops_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path prod = dir / "journal.log";
  { std::ofstream(prod) << "clock 1 2 1\n17 17 start 5 node1@0\n"; }
  EXPECT_THROW(start_replay_journal(prod.string(), 10, 0, 60), InputError);
  std::ifstream in(prod);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "clock 1 2 1");  // untouched
  in.close();
  const fs::path mine = dir / "replay.log";
  start_replay_journal(mine.string(), 10, 0, 60);
  { std::ofstream(mine, std::ios::app) << "11 60 start 7\n"; }
  start_replay_journal(mine.string(), 20, 0, 30);  // its own: replaced by a fresh clock
  std::ifstream again(mine);
  std::string l1, l2, l3;
  std::getline(again, l1);
  std::getline(again, l2);
  EXPECT_EQ(l1, "clock 20 0 30");
  EXPECT_EQ(l2, kReplayJournalMarker);
  EXPECT_FALSE(std::getline(again, l3));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ds::slurm
