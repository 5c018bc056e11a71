#include "slurm/fake_harness.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace ds::slurm {

TenantConfig fake_tenant(const std::string& name, int quota) {
  TenantConfig t;
  t.account = name;
  t.tenant.name = name;
  t.tenant.quota_gpus = quota;
  t.tenant.cls = quota > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
  t.tenant.slo_queue = seconds(2);
  return t;
}

ControllerConfig fake_config(const std::string& policy) {
  ControllerConfig c;
  c.partition = "batch";
  c.policy = policy;
  if (policy == "deepshare") c.options = {{"min_runtime_s", "0"}, {"lend_backoff_s", "0"}};
  c.start_margin_s = 5;
  c.tenant_source = TenantSource::Config;
  c.tenants = {fake_tenant("alpha", 8), fake_tenant("beta", 8), fake_tenant("scav", 0)};
  if (const char* j = std::getenv("DS_TEST_JOURNAL")) c.journal = j;
  return c;
}

// DS_TEST_LOG=1 prints the controller's log.
FakeHarness::FakeHarness(FakeOptions o)
    : fc(o),
      cfg(fake_config()),
      out_(std::getenv("DS_TEST_LOG") ? stderr : std::fopen("/dev/null", "w")),
      log(out_, false) {}

FakeHarness::~FakeHarness() {
  if (out_ != stderr) std::fclose(out_);
}

std::unique_ptr<Controller> FakeHarness::start(driver::Lease* lease, Actuator* act) {
  driver::DriverClock c;
  c.wall0_ms = c.origin = fc.now_ms();
  for (int attempt = 0;; ++attempt) {
    auto ctl = std::make_unique<Controller>(cfg, log, c, Ports{&fc, act ? act : &fc, &fc});
    ctl->set_lease(lease);
    if (policy) ctl->set_policy_factory(policy);
    try {
      ctl->init();
      return ctl;
    } catch (const InputError&) {
      if (attempt > 50) throw;  // Slurm unreachable at start: systemd restarts it
      fc.advance(2000);
    }
  }
}

void FakeHarness::run(Controller& c, std::int64_t ms, std::int64_t poll) {
  for (std::int64_t t = 0; t < ms; t += poll) {
    fc.advance(poll);
    c.step();
  }
}

void FakeHarness::submit_wave(std::mt19937_64& rng, int jobs) {
  const char* accounts[] = {"alpha", "beta", "scav", "scav"};
  for (int i = 0; i < jobs; ++i) {
    const std::string a = accounts[rng() % 4];
    const int gpus = 1 << (rng() % 3);
    fc.submit(a, gpus, 5000 + static_cast<std::int64_t>(rng() % 20000));
  }
}

std::vector<std::string> FakeHarness::unsound(bool conflicts_ok, bool refusals_ok) const {
  std::vector<std::string> out;
  for (std::uint32_t id = 1; id <= fc.submitted(); ++id) {
    const FakeJobStats& s = fc.stats(id);
    const bool ended = s.completed || (refusals_ok && s.cancelled && !s.refusal.empty());
    if (!ended) out.push_back("lost: " + fc.describe(id));
  }
  if (fc.unpinned_starts() != 0)
    out.push_back("Slurm ran a job without DeepShare's pin for that run");
  if (fc.prolog_refusals() != 0)
    out.push_back("Slurm tried to start a job DeepShare did not decide (the prolog refused it)");
  if (fc.pin_mismatches() != 0) out.push_back("a pin differs from Slurm's allocation");
  if (fc.rejected_gres_changes() != 0) out.push_back("a GRES request was rewritten");
  if (!conflicts_ok && fc.conflicts() != 0) out.push_back("two jobs pinned to the same GPUs");
  if (fc.unstartable_pins() != 0)
    out.push_back("a job pinned to nodes Slurm cannot start it on (feasible.hpp)");
  return out;
}

}  // namespace ds::slurm
