// Controller lifecycle and its cycle (step): read Slurm, fold it into the driver core,
// decide, apply, compact. The rules are the driver core's (src/driver), the translation the
// Slurm adapter's (adapter.hpp); metrics.cpp and reload.cpp hold the rest.
#include "slurm/controller.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/error.hpp"
#include "registry/registry.hpp"

namespace ds::slurm {

Controller::Controller(ControllerConfig config, driver::Log& log, driver::DriverClock clock,
                       Ports ports)
    : cfg_(std::move(config)),
      log_(log),
      ports_(ports),
      fence_(log, journal_),
      tenants_(cfg_, log) {
  loop_.clock = clock;
  if (!ports_.source || !ports_.actuator || !ports_.clock)
    throw std::invalid_argument("Controller: a port is missing (ClusterSource, Actuator, Clock)");
}

Controller::~Controller() = default;

std::int64_t Controller::timeout_ms() const {
  return static_cast<std::int64_t>((loop_.slurm.kill_wait_s + cfg_.start_margin_s) * 1000.0);
}

void Controller::set_id_reuse_after(std::size_t slots) {
  loop_.reuse_after = slots;
  if (core_) core_->book().set_reuse_after(slots);
}

// Tenants from the configuration or Slurm's associations (tenants.hpp), into the core.
void Controller::load_tenants(bool at_init) {
  const bool changed = tenants_.load(*ports_.source, at_init, loop_.wall,
                                     adapter_ ? adapter_->cluster().total_gpus() : -1);
  if (!core_) return;
  core_->set_tenants(tenants_.list());
  core_->set_tenant_labels(tenants_.labels());
  if (changed) {
    loop_.tenants_added = true;  // the policy is rebuilt after this cycle's observation
    ++counters_.tenant_reloads;
  }
}

std::unique_ptr<Policy> Controller::build_policy() {
  PolicyContext ctx{adapter_->cluster(), tenants_.list(), policy_.options};
  return policy_.factory ? policy_.factory(ctx) : make_policy(cfg_.policy, ctx);
}

// A policy for the current tenants, fed the current state as a restarted controller
// would: running jobs adopted (a tenant whose quota was cut below its non-borrowed runs has
// the newest of them borrowed first, so that they are reclaimable), candidates arriving. (DeepShare
// sizes per-tenant state at construction; a rebuild loses its learned run times, like a restart.)
void Controller::rebuild_policy() {
  core_->borrow_beyond_quota();  // a quota cut reaches the tenant's running jobs
  core_->set_policy(build_policy(), true);
  log_.info("policy_rebuilt", {{"policy", cfg_.policy}, {"tenants", tenants_.list().size()}});
  journal_.line("policy_rebuilt tenants=" + std::to_string(tenants_.list().size()));
}

// Slurm's settings DeepShare depends on.
void Controller::check_slurm_setup() {
  auto conf = ports_.source->config();
  if (!conf) throw InputError("cannot read Slurm's configuration: " + ports_.source->last_error());
  loop_.slurm = *conf;
  const SlurmConfig& slurm = loop_.slurm;
  if (slurm.job_submit_plugins.find("lua") == std::string::npos)
    log_.warn("gate_missing",
              {{"detail",
                "JobSubmitPlugins has no lua: jobs are not gated (deploy/slurm/job_submit.lua); "
                "DeepShare schedules only gated jobs"}});
  if (cfg_.tenant_source != TenantSource::Slurm) return;
  if (!slurm.accounting)
    throw InputError(
        "tenant_source: slurm needs Slurm accounting (AccountingStorageType="
        "accounting_storage/slurmdbd); set tenant_source: config and list the tenants to run "
        "without it");
  if (slurm.enforce_limits && cfg_.quota_tres == "gres/gpu")
    throw InputError(
        "AccountingStorageEnforce includes 'limits' (or 'safe'): Slurm would cap every account "
        "at its GrpTRES=gres/gpu and DeepShare could never lend idle GPUs; drop 'limits' or keep "
        "quotas in another TRES (quota_tres)");
  if (!slurm.enforce_associations)
    log_.warn("associations_not_enforced",
              {{"detail",
                "AccountingStorageEnforce lacks 'associations': users may submit under any "
                "account"}});
}

void Controller::init() {
  check_policy(cfg_.policy);
  if (fence_.lease() && !fence_.lease()->held())
    throw InputError("the controller's lease (" + fence_.lease()->describe() + ") is not held");
  if (journal_.open(cfg_.journal, loop_.clock))
    log_.info("clock_restored", {{"journal", cfg_.journal}, {"scale", loop_.clock.scale}});
  set_wall(ports_.clock->now_ms());
  check_slurm_setup();
  auto nodes = ports_.source->nodes();
  if (!nodes) throw InputError("cannot read Slurm nodes: " + ports_.source->last_error());
  adapter_ =
      std::make_unique<SlurmAdapter>(cfg_, log_, journal_, fence_, *ports_.actuator, tenants_);
  adapter_->load_nodes(*nodes);
  adapter_->set_kill_wait_s(loop_.slurm.kill_wait_s);
  adapter_->set_consumable({loop_.slurm.memory_consumable, loop_.slurm.cpus_consumable});
  adapter_->refresh_tenants = [this] {
    if (cfg_.tenant_source == TenantSource::Slurm) load_tenants(false);
  };
  load_tenants(true);
  if (tenants_.list().empty())
    throw InputError(
        "no tenant: no Slurm account has an association on this cluster (sacctmgr add account "
        "NAME GrpTRES=" +
        cfg_.quota_tres + "=N)");
  for (const auto& [k, v] : cfg_.options) policy_.options.set(k + "=" + v);
  auto policy = build_policy();
  core_ = std::make_unique<driver::Core>(adapter_->cluster(), tenants_.list(), *adapter_, log_,
                                         journal_, driver::Timing{timeout_ms()});
  core_->set_tenant_labels(tenants_.labels());
  core_->book().set_reuse_after(loop_.reuse_after);
  core_->set_policy(std::move(policy), false);
  core_->observe_nodes(adapter_->engine_nodes(*nodes));
  adapter_->attach(*core_);
  std::string quotas;
  for (const auto& t : tenants_.list())
    quotas += (quotas.empty() ? "" : ",") + t.name + "=" + std::to_string(t.quota_gpus);
  const Cluster& cluster = adapter_->cluster();
  log_.info("controller_ready",
            {{"partition", cfg_.partition},
             {"nodes", cluster.nodes.size()},
             {"gpus", cluster.total_gpus()},
             {"tenants", quotas},
             {"tenant_source", cfg_.tenant_source == TenantSource::Slurm ? "slurm" : "config"},
             {"kill_wait_s", loop_.slurm.kill_wait_s},
             {"policy", cfg_.policy},
             {"version", DEEPSHARE_VERSION}});
}

// A job DeepShare runs that Slurm shows pending without DeepShare's doing (a node failure).
bool Controller::requeued_by_slurm() const {
  const driver::JobBook& book = core_->book();
  for (const auto& j : loop_.table) {
    if (j.state != JobState::Pending) continue;
    auto id = book.find(j.ref());
    if (id && core_->state().runtime(*id).status == JobStatus::Running &&
        book[*id].intent == driver::Intent::None)
      return true;
  }
  return false;
}

std::optional<Controller::Read> Controller::read_slurm() {
  // Change-only: Slurm answers "no change since" or the whole table; an unchanged table is
  // neither transferred nor converted again.
  auto table = ports_.source->read_jobs(loop_.table_update_s);
  if (!table) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.observe_errors;
    log_.warn("observe_failed", {{"error", ports_.source->last_error()}});
    return std::nullopt;
  }
  Read r;
  if (table->unchanged) {
    ++counters_.unchanged_reads;
  } else if (table->update_s < loop_.table_update_s) {
    ++counters_.stale_reads;  // older than a table already seen: a late duplicate
  } else {
    loop_.table = std::move(table->jobs);
    loop_.table_update_s = table->update_s;
    r.fresh = true;
  }
  // Nodes every 5th cycle, and at once when a job DeepShare runs is pending again without
  // DeepShare's doing (a node failure): the policy must not place it back on a failed node.
  if (counters_.cycles % 5 == 0 || (r.fresh && requeued_by_slurm()))
    r.nodes = ports_.source->nodes();
  return r;
}

// Folds Slurm's state into the core: nodes, then jobs, then the GPUs held outside.
void Controller::reconcile(const Read& read) {
  if (read.nodes) core_->observe_nodes(adapter_->engine_nodes(*read.nodes));
  loop_.observation = adapter_->observe(loop_.table);
  if (fence_.deposed()) return;  // a newer leader's record: nothing more from this one
  core_->fold(loop_.observation);
  if (loop_.tenants_added) {
    loop_.tenants_added = false;
    rebuild_policy();
  }
  adapter_->sync_held(loop_.table);
}

bool Controller::step() {
  const auto t0 = std::chrono::steady_clock::now();
  set_wall(ports_.clock->now_ms());
  if (!fence_.acting()) return false;
  if (cfg_.tenant_source == TenantSource::Slurm &&
      loop_.wall - tenants_.loaded_wall() >=
          static_cast<std::int64_t>(cfg_.tenants_refresh_s * 1000)) {
    std::lock_guard<std::mutex> lock(mu_);
    load_tenants(false);
  }
  const std::optional<Read> read = read_slurm();
  if (!read) return false;
  std::lock_guard<std::mutex> lock(mu_);
  counters_.last_observe_ms = loop_.wall;
  bool nodes_changed = false;
  if (read->nodes)
    for (const auto& n : adapter_->engine_nodes(*read->nodes)) {
      const NodeId id = adapter_->node_id(n.name);
      nodes_changed = nodes_changed || core_->state().node_usable(id) != n.usable ||
                      core_->state().no_sharing(id) != n.shared;
    }
  // A quiet cycle: nothing changed in Slurm, and the previous cycle settled (it sent no
  // action, produced no change for the policy, decided nothing, left no start or preemption
  // in flight) and no job's --begin comes due: reconciling again would find nothing, so the
  // cycle costs the read and the policy's call only.
  const bool quiet = !read->fresh && !nodes_changed && loop_.settled && !loop_.tenants_added &&
                     loop_.wall < core_->book().next_wake_wall();
  const std::uint64_t sent = fence_.sent();
  if (quiet) {
    ++counters_.quiet_cycles;
  } else {
    reconcile(*read);
    if (fence_.deposed()) return false;
  }
  const std::size_t deltas = core_->state().delta_count();
  const Decisions d = core_->decide();
  core_->apply(d);
  if (!quiet) core_->compact();
  loop_.settled = (quiet ? loop_.settled : true) && deltas == 0 && d.start.empty() &&
                  d.preempt.empty() && d.reject.empty() && fence_.sent() == sent &&
                  core_->book().open_intents() == 0;
  ++counters_.cycles;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  counters_.cycle_seconds.observe(secs);
  return true;
}

void Controller::run(const std::atomic<bool>& stop) {
  while (!stop.load() && !fence_.deposed()) {
    reload_if_requested();
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.poll_ms);
    step();
    std::this_thread::sleep_until(next);
  }
  log_.info("controller_stopped", {{"cycles", counters_.cycles}});
}

ControllerCounters Controller::counters() const {
  ControllerCounters c;
  c.cycles = counters_.cycles;
  c.observe_errors = counters_.observe_errors;
  c.unchanged_reads = counters_.unchanged_reads;
  c.stale_reads = counters_.stale_reads;
  c.quiet_cycles = counters_.quiet_cycles;
  c.tenant_reloads = counters_.tenant_reloads;
  c.config_reloads = counters_.config_reloads;
  c.config_reload_errors = counters_.config_reload_errors;
  c.cycle_seconds = counters_.cycle_seconds;
  c.last_observe_ms = counters_.last_observe_ms;
  c.fenced = fence_.fenced();
  c.actions_sent = fence_.sent();
  if (adapter_) {
    const AdapterCounters& a = adapter_->counters();
    c.untrusted_pins = a.untrusted_pins;
    c.bad_records = a.bad_records;
    c.ungated = a.ungated;
    c.refused = a.refused;
  }
  if (core_) {
    const driver::CoreCounters& k = core_->counters();
    c.applied = k.applied;
    c.failed = k.failed;
    c.starts = k.starts;
    c.preemptions = k.preemptions;
    c.preemptions_failed = k.preemptions_failed;
    c.rollbacks = k.rollbacks;
    c.deferrals = k.deferrals;
    c.refused += k.rejections;  // jobs DeepShare cancelled with a reason, either way
    c.completions = k.completions;
    c.cancellations = k.cancellations;
    c.compacted = k.compacted;
    c.invalid_decisions = k.invalid_decisions;
    c.tenant_preemptions = k.tenant_preemptions;
  }
  return c;
}

}  // namespace ds::slurm
