// Configuration reload (SIGHUP), the policy check at start and on reload, and the cycle's
// time (the policy's wake_at).
//
// What a reload changes (ops.hpp plan_reload; docs/slurm.md §10):
//  1. re-read the file (reload_source); a file that does not parse is refused as a whole
//     and the running configuration stays (reload_refused, an error);
//  2. keys that need a restart (partition, metrics, journal, time_scale, gpu_memory_mib,
//     tenant_source, quota_tres; with tenant_source: config, a different tenant list) keep
//     their running value and are logged (reload_needs_restart, a warning);
//  3. live: poll_ms, start_margin_s, tenants_refresh_s at once; the policy, its options and
//     the tenants' knobs (SLO, tolerated slowdown, checkpoint interval; with tenant_source:
//     config also quotas, classes and weights) by rebuilding the policy from the current
//     state, as on a controller restart (learned run times are lost). A policy or option
//     that does not build refuses the whole reload.
#include <algorithm>

#include "core/error.hpp"
#include "registry/registry.hpp"
#include "slurm/controller.hpp"

namespace ds::slurm {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += (o.empty() ? "" : ",") + s;
  return o;
}

void set_knobs(Tenant& t, const Tenant& knobs) {
  t.slo_queue = knobs.slo_queue;
  t.max_slowdown = knobs.max_slowdown;
  t.checkpoint_interval = knobs.checkpoint_interval;
}

}  // namespace

// Every registered policy learns jobs online (the policy contract) and runs on Slurm, except
// the oracles: they read true run times, which no real cluster can give.
void Controller::check_policy(const std::string& name) {
  const PolicyInfo* info = find_policy(name);
  if (!info) return;  // make_policy names the known policies
  if (!info->oracle) return;
  std::string online;
  for (const auto& p : policy_registry())
    if (!p.oracle) online += (online.empty() ? "" : ", ") + p.name;
  throw InputError("policy '" + name +
                   "' is an oracle: it reads every job's true run time, which a real cluster "
                   "cannot know before the job ends; run it in the simulator, or choose one of: " +
                   online);
}

// The cycle's time is the clock's, except that a cycle that has passed the time the policy
// asked to be woken at (Decisions::wake_at) runs at exactly that time: policies with rounds
// (Tiresias decides only at multiples of its interval) see their round's instant, as in the
// simulator, at most one poll late in wall time. Never earlier than the previous cycle.
void Controller::set_wall(std::int64_t wall_ms) {
  loop_.wall = wall_ms;
  Time never = kNever;
  loop_.now =
      driver::cycle_time(loop_.now, loop_.clock.at(wall_ms), core_ ? core_->wake_at_ref() : never);
  journal_.set_time(loop_.wall, loop_.now);
  if (core_) core_->set_time(loop_.now, loop_.wall);
  if (adapter_) adapter_->set_time(loop_.now, loop_.wall, loop_.clock);
}

void Controller::reload_if_requested() {
  if (!reload_requested_.exchange(false)) return;
  try {
    reload(reload_source ? reload_source() : load_controller_config(cfg_.source));
  } catch (const InputError& e) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.config_reload_errors;
    log_.error("reload_refused",
               {{"error", e.what()}, {"detail", "the running configuration stays in effect"}});
  }
}

void Controller::reload(const ControllerConfig& next) {
  std::lock_guard<std::mutex> lock(mu_);
  const ReloadPlan plan = plan_reload(cfg_, next);
  const bool tenants_live =
      std::find(plan.live.begin(), plan.live.end(), "tenants") != plan.live.end();
  // The tenants with their new knobs (and, tenant_source: config, quotas), not yet applied.
  std::vector<Tenant> tenants = tenants_.list();
  if (tenants_live) {
    for (std::size_t t = 0; t < tenants.size(); ++t) {
      if (cfg_.tenant_source == TenantSource::Slurm) {
        set_knobs(tenants[t], next.knobs_for(tenants[t].name));
        continue;
      }
      const Tenant& n = next.tenants[t].tenant;
      set_knobs(tenants[t], n);
      tenants[t].name = n.name;
      tenants[t].quota_gpus = n.quota_gpus;
      tenants[t].cls = n.cls;
      tenants[t].weight = n.weight;
    }
  }
  PolicyOptions options;
  if (plan.rebuild_policy) {
    try {  // the new policy must build before anything changes
      check_policy(next.policy);
      for (const auto& [k, v] : next.options) options.set(k + "=" + v);
      PolicyContext ctx{adapter_->cluster(), tenants, options};
      (void)make_policy(next.policy, ctx);
    } catch (const InputError& e) {
      ++counters_.config_reload_errors;
      log_.error("reload_refused",
                 {{"error", e.what()}, {"detail", "the running configuration stays in effect"}});
      return;
    }
  }
  for (const auto& key : plan.restart)
    log_.warn(
        "reload_needs_restart",
        {{"key", key}, {"detail", "kept at its running value until the controller restarts"}});
  cfg_.poll_ms = next.poll_ms;
  cfg_.start_margin_s = next.start_margin_s;
  cfg_.tenants_refresh_s = next.tenants_refresh_s;
  if (plan.rebuild_policy) {
    cfg_.policy = next.policy;
    cfg_.options = next.options;
    policy_.options = options;
  }
  if (tenants_live) {
    cfg_.tenant_defaults = next.tenant_defaults;
    cfg_.tenants = next.tenants;
    tenants_.replace(tenants);
    core_->set_tenants(tenants_.list());
    core_->set_tenant_labels(tenants_.labels());
  }
  ++counters_.config_reloads;
  log_.info("config_reloaded", {{"file", cfg_.source},
                                {"applied", join(plan.live)},
                                {"restart_needed", join(plan.restart)},
                                {"policy", cfg_.policy},
                                {"policy_rebuilt", plan.rebuild_policy}});
  journal_.line("reload " + (plan.live.empty() ? std::string("-") : join(plan.live)));
  if (plan.rebuild_policy) rebuild_policy();
}

}  // namespace ds::slurm
