// The controller's configuration (config.hpp): a valid file reads as written, and every bad
// value is an InputError naming the file and the field (never a crash, never a silent
// overflow: the same inputs the fuzz target fuzz_controller_config feeds).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.hpp"
#include "slurm/config.hpp"

namespace ds::slurm {
namespace {

const char* const kValid =
    "partition: gpu\n"
    "policy: kueue\n"
    "options: {fair_sharing: \"on\"}\n"
    "time_scale: 10\n"
    "poll_ms: 250\n"
    "start_margin_s: 12.5\n"
    "eviction_grace_s: 10\n"
    "gpu_models: {a100: 81920, V100M16: 16384}\n"
    "tenant_source: config\n"
    "tenant_defaults: {slo_queue_s: 1.005, checkpoint_interval_s: 1800}\n"
    "tenants:\n"
    "  - {name: Alpha, quota_gpus: 8, weight: 2, eviction_grace_s: 600}\n"
    "  - {name: scav, account: Scavenger, class: best-effort, max_slowdown: 3}\n";

// The message of the InputError that parsing `text` throws ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    (void)parse_controller_config("ctl.yaml", text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ControllerConfig, ReadsWhatIsWritten) {
  const ControllerConfig c = parse_controller_config("ctl.yaml", kValid);
  EXPECT_EQ(c.source, "ctl.yaml");
  EXPECT_EQ(c.partition, "gpu");
  EXPECT_EQ(c.policy, "kueue");
  EXPECT_EQ(c.options.at("fair_sharing"), "on");
  EXPECT_DOUBLE_EQ(c.time_scale, 10);
  EXPECT_EQ(c.poll_ms, 250);
  EXPECT_DOUBLE_EQ(c.start_margin_s, 12.5);
  EXPECT_EQ(c.eviction_grace_s, 10);
  EXPECT_EQ(c.gpu_models,
            (std::map<std::string, std::int64_t>{{"V100M16", 16384}, {"a100", 81920}}));
  ASSERT_EQ(c.tenants.size(), 2u);
  EXPECT_EQ(c.tenants[0].account, "alpha");  // accounts are lower case, as Slurm's
  EXPECT_EQ(c.tenants[0].tenant.quota_gpus, 8);
  EXPECT_DOUBLE_EQ(c.tenants[0].tenant.weight, 2);
  EXPECT_EQ(c.tenants[0].tenant.slo_queue, 1005);  // the defaults, rounded to the ms
  EXPECT_EQ(c.tenants[0].tenant.checkpoint_interval, 1800 * 1000);
  EXPECT_EQ(c.tenants[0].eviction_grace_s, 600);
  EXPECT_EQ(c.tenants[1].eviction_grace_s, -1);  // the configuration's
  EXPECT_EQ(c.tenants[1].account, "scavenger");
  EXPECT_EQ(c.tenants[1].tenant.cls, TenantClass::BestEffort);
  EXPECT_DOUBLE_EQ(c.tenants[1].tenant.max_slowdown, 3);
  EXPECT_EQ(c.tenants[1].tenant.id.index(), 1u);
}

TEST(ControllerConfig, BadValuesNameTheFileAndTheField) {
  const std::string base = "tenant_source: config\ntenants: [{name: a}]\n";
  struct Case {
    std::string text, says;
  };
  const Case cases[] = {
      {"time_scale: .nan\n" + base, "ctl.yaml: time_scale must be in"},
      {"time_scale: 0\n" + base, "time_scale must be in"},
      {"poll_ms: 5\n" + base, "poll_ms must be in"},
      {"poll_ms: 1e300\n" + base, "poll_ms must be in"},
      {"gpu_memory_mib: -1\n" + base, "gpu_memory_mib must be in"},
      {"start_margin_s: 90000\n" + base, "start_margin_s must be in"},
      {"gpu_models: [a100]\n" + base, "ctl.yaml: gpu_models: expected a mapping"},
      {"gpu_models: {a100: 0}\n" + base, "gpu_models: memory of a100 must be in"},
      {"gpu_models: {a100: .nan}\n" + base, "gpu_models: memory of a100 must be in"},
      {"gpu_models: {g3: 8000}\n" + base, "gpu_models: 'g3' is not a model name"},
      {"gpu_models: {'a|b': 8000}\n" + base, "gpu_models: 'a|b' is not a model name"},
      {"gpu_models: {a100: [1]}\n" + base, "ctl.yaml: "},
      {"tenants_refresh_s: 0\n" + base, "tenants_refresh_s must be in"},
      {"eviction_grace_s: -1\n" + base, "eviction_grace_s must be in"},
      {"tenant_source: config\ntenants: [{name: a, eviction_grace_s: 1e9}]\n",
       "tenants[0]: eviction_grace_s must be in"},
      {"tenant_defaults: {slo_queue_s: .inf}\n" + base, "tenant_defaults: slo_queue_s must be in"},
      {"tenant_defaults: {max_slowdown: 0.5}\n" + base, "tenant_defaults: max_slowdown must be in"},
      {"tenant_defaults: 3\n" + base, "tenant_defaults: expected a mapping"},
      {"tenant_source: nobody\n", "tenant_source must be slurm or config, not 'nobody'"},
      {"pol1cy: fifo\n" + base, "unknown key 'pol1cy'"},
      {"- a\n- b\n", "ctl.yaml: expected a mapping"},
      {"tenant_source: config\n", "'tenants' must list at least one tenant"},
      {"tenants: {a: 1}\n", "'tenants' must be a list"},
      {"tenant_source: config\ntenants: [{name: a, quota_gpus: -1}]\n",
       "tenants[0]: quota_gpus must be in"},
      {"tenant_source: config\ntenants: [{name: a, weight: 0}]\n", "tenants[0]: weight must be in"},
      {"tenant_source: config\ntenants: [{name: a, class: gold}]\n",
       "tenants[0]: class must be guaranteed or best-effort"},
      {"tenant_source: config\ntenants: [{name: a}, {name: A}]\n",
       "tenants[1]: account 'a' listed twice"},
      {"tenant_source: config\ntenants: [{quota_gpus: 1}]\n", "tenants[0]: missing 'name'"},
      {"tenants: [{account: a, quota_gpus: 4}]\n", "quotas, classes and weights come from Slurm"},
      {"tenants: [{slo_queue_s: 1}]\n", "tenants[0]: missing 'account'"},
      {"tenant_source: config\ntenants: [[1, 2]]\n", "tenants[0]: expected a mapping"},
      {"poll_ms: [1]\n" + base, "ctl.yaml: "},
      {"partition: [\n", "ctl.yaml: "},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.says), std::string::npos) << "input:\n" << c.text << "error: " << e;
  }
}

TEST(ControllerConfig, AMissingFileIsNamed) {
  try {
    (void)load_controller_config("/nonexistent/ctl.yaml");
    FAIL() << "a missing file loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ctl.yaml: cannot read"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ds::slurm
