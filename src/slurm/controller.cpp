// Controller lifecycle, tenants, snapshot and cycle; the reconciler is in reconcile.cpp and
// the actions in actuator.cpp.
#include "slurm/controller.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "registry/registry.hpp"
#include "slurm/accounts.hpp"

namespace ds::slurm {

Controller::Controller(ControllerConfig config, driver::Log& log, driver::DriverClock clock,
                       Ports ports)
    : cfg_(std::move(config)),
      log_(log),
      clock_(clock),
      source_(ports.source),
      act_(ports.actuator),
      wall_clock_(ports.clock) {
  if (!source_ || !act_ || !wall_clock_)
    throw std::invalid_argument("Controller: a port is missing (ClusterSource, Actuator, Clock)");
}

Controller::~Controller() {
  if (journal_) std::fclose(journal_);
}

void Controller::load_clock_from_journal() {
  if (cfg_.journal.empty()) return;
  std::ifstream in(cfg_.journal);
  std::string word;
  if (in >> word && word == "clock") {
    driver::DriverClock c;
    if (in >> c.wall0_ms >> c.origin >> c.scale) {
      clock_ = c;
      log_.info("clock_restored", {{"journal", cfg_.journal}, {"scale", c.scale}});
    }
  }
  journal_ = std::fopen(cfg_.journal.c_str(), "a");
  if (!journal_) throw InputError(cfg_.journal + ": cannot open the journal for appending");
  if (in.tellg() <= 0 && word != "clock") {
    std::fprintf(journal_, "clock %lld %lld %.17g\n", static_cast<long long>(clock_.wall0_ms),
                 static_cast<long long>(clock_.origin), clock_.scale);
    std::fflush(journal_);
  }
}

void Controller::journal(const std::string& line) {
  if (!journal_) return;
  std::fprintf(journal_, "%lld %lld %s\n", static_cast<long long>(wall_),
               static_cast<long long>(now()), line.c_str());
  std::fflush(journal_);
}

std::int64_t Controller::timeout_ms() const {
  return static_cast<std::int64_t>((slurm_.kill_wait_s + cfg_.start_margin_s) * 1000.0);
}

TenantId Controller::tenant_of(const std::string& account) {
  auto it = account_tenant_.find(account);
  return it == account_tenant_.end() ? TenantId()
                                     : TenantId(static_cast<std::uint32_t>(it->second));
}

// Tenants: from the configuration (replays, clusters without slurmdbd) or from Slurm's
// associations: every account except Slurm's own `root`, with its quota from GrpTRES of
// quota_tres (none set: 0, best-effort) and its weight from Fairshare, nested as Slurm
// nests accounts (a tenant tree: slurm/accounts.hpp). Accounts are appended (tenant ids stay
// stable); a removed account keeps its id with quota 0.
void Controller::load_tenants(bool at_init) {
  tenants_loaded_wall_ = wall_;
  if (cfg_.tenant_source == TenantSource::Config) {
    if (!at_init) return;
    for (const auto& t : cfg_.tenants) {
      account_tenant_[t.account] = tenants_.size();
      tenants_.push_back(t.tenant);
      tenants_.back().id = TenantId(static_cast<std::uint32_t>(tenants_.size() - 1));
    }
    return;
  }
  auto assocs = source_->associations(cfg_.quota_tres);
  if (!assocs) {
    if (at_init) throw InputError("cannot read Slurm's associations: " + source_->last_error());
    log_.warn("tenants_read_failed", {{"error", source_->last_error()}});
    return;
  }
  const Accounts accounts = accounts_of(*assocs);
  std::vector<Tenant> next = tenants_;
  for (const auto& [account, a] : accounts) {
    if (account_tenant_.count(account)) continue;
    Tenant t = cfg_.knobs_for(account);
    t.name = account;
    t.id = TenantId(static_cast<std::uint32_t>(next.size()));
    account_tenant_[account] = next.size();
    next.push_back(t);
  }
  // The account tree resolved (accounts.hpp): parents, guarantees, classes, weights.
  report_tree(apply_accounts(next, accounts, cluster_.total_gpus()));
  bool changed = next.size() != tenants_.size();
  for (std::size_t i = 0; i < next.size(); ++i) {
    Tenant& t = next[i];
    if (!accounts.count(t.name)) t.cls = TenantClass::BestEffort;  // removed: no quota
    if (i >= tenants_.size()) {
      if (!at_init) log_.info("tenant_added", {{"account", t.name}, {"quota_gpus", t.quota_gpus}});
      continue;
    }
    const Tenant& cur = tenants_[i];
    if (cur.quota_gpus == t.quota_gpus && cur.weight == t.weight && cur.cls == t.cls &&
        cur.parent == t.parent && cur.tree_quota_gpus == t.tree_quota_gpus)
      continue;
    changed = true;
    if (!accounts.count(t.name))
      log_.info("tenant_removed", {{"account", t.name}});
    else
      log_.info("tenant_changed", {{"account", t.name},
                                   {"quota_gpus", t.quota_gpus},
                                   {"was", cur.quota_gpus},
                                   {"weight", t.weight}});
  }
  tenants_ = std::move(next);
  if (state_) state_->set_tenants(tenants_);
  if (changed && !at_init) {
    tenants_added_ = true;  // the policy is rebuilt after this cycle's observation
    ++counters_.tenant_reloads;
  }
}

// A tree whose guarantees do not fit (a sub-account's GrpTRES above its parent's, more than
// the partition): logged when the problems change, counted in a gauge.
void Controller::report_tree(std::vector<std::string> problems) {
  if (problems == tree_problems_) return;
  for (const auto& p : problems) log_.warn("tenant_tree_problem", {{"detail", p}});
  if (problems.empty() && !tree_problems_.empty()) log_.info("tenant_tree_fits");
  tree_problems_ = std::move(problems);
}

std::unique_ptr<Policy> Controller::build_policy() {
  PolicyContext ctx{cluster_, tenants_, options_};
  return policy_factory_ ? policy_factory_(ctx) : make_policy(cfg_.policy, ctx);
}

// A policy for the current tenants, fed the current state as a restarted controller
// would: running jobs adopted, candidates arriving. (DeepShare sizes per-tenant state at
// construction; a rebuild loses its learned run times, like a restart.)
void Controller::rebuild_policy() {
  policy_ = build_policy();
  state_->present_all();
  log_.info("policy_rebuilt", {{"policy", cfg_.policy}, {"tenants", tenants_.size()}});
  journal("policy_rebuilt tenants=" + std::to_string(tenants_.size()));
}

void Controller::init() {
  check_policy(cfg_.policy);
  if (lease_ && !lease_->held())
    throw InputError("the controller's lease (" + lease_->dir() + ") is not held");
  load_clock_from_journal();
  set_wall(wall_clock_->now_ms());
  auto conf = source_->config();
  if (!conf) throw InputError("cannot read Slurm's configuration: " + source_->last_error());
  slurm_ = *conf;
  if (slurm_.job_submit_plugins.find("lua") == std::string::npos)
    log_.warn("gate_missing",
              {{"detail",
                "JobSubmitPlugins has no lua: jobs are not gated (deploy/slurm/job_submit.lua); "
                "DeepShare schedules only gated jobs"}});
  if (cfg_.tenant_source == TenantSource::Slurm) {
    if (!slurm_.accounting)
      throw InputError(
          "tenant_source: slurm needs Slurm accounting (AccountingStorageType="
          "accounting_storage/slurmdbd); set tenant_source: config and list the tenants to run "
          "without it");
    if (slurm_.enforce_limits && cfg_.quota_tres == "gres/gpu")
      throw InputError(
          "AccountingStorageEnforce includes 'limits' (or 'safe'): Slurm would cap every account "
          "at its GrpTRES=gres/gpu and DeepShare could never lend idle GPUs; drop 'limits' or keep "
          "quotas in another TRES (quota_tres)");
    if (!slurm_.enforce_associations)
      log_.warn("associations_not_enforced",
                {{"detail",
                  "AccountingStorageEnforce lacks 'associations': users may submit under any "
                  "account"}});
  }
  auto nodes = source_->nodes();
  if (!nodes) throw InputError("cannot read Slurm nodes: " + source_->last_error());
  for (const auto& n : *nodes) {
    if (std::find(n.partitions.begin(), n.partitions.end(), cfg_.partition) == n.partitions.end())
      continue;
    if (n.gpus <= 0) continue;
    if (n.gpus > kMaxGpusPerNode) throw InputError("node " + n.name + " has more than 64 GPUs");
    Node node;
    node.id = NodeId(static_cast<std::uint32_t>(cluster_.nodes.size()));
    node.name = n.name;
    node.gpus = n.gpus;
    node.first_gpu = cluster_.total_gpus();
    node.gpu_memory_mib = cfg_.gpu_memory_mib;
    node_index_[n.name] = cluster_.nodes.size();
    cluster_.nodes.push_back(node);
    node_usable_.push_back(n.usable);
    node_shared_.push_back(n.partitions.size() > 1);
  }
  if (cluster_.nodes.empty())
    throw InputError("partition '" + cfg_.partition + "' has no nodes with GPUs (gres gpu)");
  load_tenants(true);
  if (tenants_.empty())
    throw InputError(
        "no tenant: no Slurm account has an association on this cluster (sacctmgr add account "
        "NAME GrpTRES=" +
        cfg_.quota_tres + "=N)");
  for (const auto& [k, v] : cfg_.options) options_.set(k + "=" + v);
  policy_ = build_policy();
  state_ = std::make_unique<ClusterState>(cluster_, tenants_);
  state_->set_jobs(jobs_);
  std::string quotas;
  for (const auto& t : tenants_)
    quotas += (quotas.empty() ? "" : ",") + t.name + "=" + std::to_string(t.quota_gpus);
  log_.info("controller_ready",
            {{"partition", cfg_.partition},
             {"nodes", cluster_.nodes.size()},
             {"gpus", cluster_.total_gpus()},
             {"tenants", quotas},
             {"tenant_source", cfg_.tenant_source == TenantSource::Slurm ? "slurm" : "config"},
             {"kill_wait_s", slurm_.kill_wait_s},
             {"policy", cfg_.policy},
             {"version", DEEPSHARE_VERSION}});
}

void Controller::sync_blocked(const std::vector<JobInfo>& jobs) {
  std::vector<std::uint8_t> blocked(static_cast<std::size_t>(cluster_.total_gpus()), 0);
  auto block = [&](std::size_t node, std::uint64_t mask) {
    const Node& n = cluster_.nodes[node];
    for (std::uint64_t m = mask; m; m &= m - 1)
      if (std::countr_zero(m) < n.gpus)
        blocked[static_cast<std::size_t>(n.first_gpu + std::countr_zero(m))] = 1;
  };
  for (std::size_t n = 0; n < cluster_.nodes.size(); ++n)
    if (!node_usable_[n]) block(n, ~std::uint64_t{0});
  // GPUs Slurm has allocated to jobs the model does not run: other partitions, ungated
  // jobs, and DeepShare's own jobs that are ending or being requeued (they hold their GPUs
  // until their processes are gone).
  for (const auto& j : jobs) {
    if (j.alloc.empty() || (!j.running() && !j.completing)) continue;
    auto it = by_key_.find(key_of(j));
    if (it != by_key_.end() && rt(it->second).status == JobStatus::Running) continue;
    for (const auto& [name, a] : j.alloc)
      if (auto n = node_index_.find(name); n != node_index_.end())
        block(n->second, a.gpus | a.slots);
  }
  for (std::size_t g = 0; g < blocked.size(); ++g) state_->set_blocked(g, blocked[g] != 0);
  // No colocation on GPUs of nodes other partitions use too (Slurm would not know that a
  // GPU whose partner ended still serves a colocated job): they show their memory full.
  for (std::size_t n = 0; n < cluster_.nodes.size(); ++n)
    state_->set_no_sharing(NodeId(static_cast<std::uint32_t>(n)), node_shared_[n]);
}

Decisions Controller::decide() {
  state_->order_arrivals();  // the policy expects arrivals in submission order
  Decisions d = policy_->decide(state_->snapshot(now()));
  if (d.wake_at != kNever && d.wake_at > now() && (wake_at_ == kNever || d.wake_at < wake_at_))
    wake_at_ = d.wake_at;
  state_->clear_deltas();
  return d;
}

void Controller::invalid_decision(const char* kind, JobId id, const std::string& error) {
  ++counters_.invalid_decisions;
  const bool known = id.valid() && id.index() < recs_.size() && !recs_[id.index()].free;
  log_.error(
      "decision_invalid", known ? who(id) : driver::Log::Fields{},
      {{"decision", kind},
       {"job", known ? recs_[id.index()].ref : std::string("id ") + std::to_string(id.index())},
       {"error", error},
       {"detail", "a decision the policy should not have made: skipped"}});
  journal(std::string("invalid ") + kind + " " + (known ? recs_[id.index()].ref : "?"));
}

void Controller::depose(const std::string& why) {
  if (deposed_) return;
  deposed_ = true;
  log_.error("deposed", {{"epoch", lease_ ? lease_->epoch() : std::uint64_t{0}},
                         {"detail", why + "; this controller stops acting"}});
  journal("deposed " + why);
}

bool Controller::acting() {
  if (deposed_) return false;
  if (lease_ && !lease_->held()) {
    depose("the lease in " + lease_->dir() + " was taken over (epoch " +
           std::to_string(driver::Lease::stored_epoch(lease_->dir())) + ")");
    return false;
  }
  return true;
}

// Whether an action may go out: counted as sent when it may, as fenced when not.
bool Controller::may_send() {
  if (!acting()) {
    ++counters_.fenced;
    fence_error_ = "not the leader: nothing sent";
    return false;
  }
  fence_error_.clear();
  ++counters_.actions_sent;
  return true;
}

bool Controller::act_update(Update u) {
  if (!may_send()) return false;
  if (lease_ && u.admin_comment) {
    RecordFields f = parse_fields(*u.admin_comment);
    if (!f.empty()) {
      f["e"] = std::to_string(lease_->epoch());
      u.admin_comment = format_fields(f);
    }
  }
  return act_->update(u);
}

bool Controller::act_requeue(const std::string& ref) {
  if (!may_send()) return false;
  return act_->requeue_hold(ref);
}

bool Controller::act_cancel(const std::string& ref) {
  if (!may_send()) return false;
  return act_->cancel(ref);
}

const std::string& Controller::act_error() const {
  return fence_error_.empty() ? act_->last_error() : fence_error_;
}

// Jobs that have left (done, withdrawn, rejected) and whose leaving the policy has seen
// give their slot back: its id is reused by a later job (policy contract 1). What survives
// is counters (ControllerCounters::tenant_preemptions) and the policy's own statistics.
void Controller::compact() {
  std::vector<std::uint8_t> listed(recs_.size(), 0);  // the policy has not seen it leave yet
  for (JobId id : state_->listed()) listed[id.index()] = 1;
  open_intents_ = 0;
  next_timer_wall_ = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < recs_.size(); ++i) {
    Rec& rec = recs_[i];
    const JobId id(static_cast<std::uint32_t>(i));
    const JobStatus st = rt(id).status;
    if (!rec.free && rec.intent != Intent::None) ++open_intents_;
    if (!rec.free && st == JobStatus::Future && rec.request.begin_s * 1000 > wall_)
      next_timer_wall_ = std::min(next_timer_wall_, rec.request.begin_s * 1000);
    if (rec.free || (st != JobStatus::Done && st != JobStatus::Rejected) || listed[i]) continue;
    if (auto it = by_key_.find(rec.key); it != by_key_.end() && it->second == id) by_key_.erase(it);
    if (!rec.vanished) left_.insert(rec.key);  // Slurm may still list it, as ended
    reported_.erase(rec.key);
    untrusted_.erase(rec.key);
    jobs_[i] = JobSpec{};
    jobs_[i].id = id;
    rec = Rec{};
    rec.free = true;
    free_ids_.push_back(id);
    ++counters_.compacted;
  }
}

bool Controller::step() {
  const auto t0 = std::chrono::steady_clock::now();
  set_wall(wall_clock_->now_ms());
  if (!acting()) return false;
  if (cfg_.tenant_source == TenantSource::Slurm &&
      wall_ - tenants_loaded_wall_ >= static_cast<std::int64_t>(cfg_.tenants_refresh_s * 1000)) {
    std::lock_guard<std::mutex> lock(mu_);
    load_tenants(false);
  }
  // Change-only: Slurm answers "no change since" or the whole table; an unchanged table
  // is neither transferred nor converted again.
  auto read = source_->read_jobs(table_update_s_);
  if (!read) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.observe_errors;
    log_.warn("observe_failed", {{"error", source_->last_error()}});
    return false;
  }
  bool fresh = false;
  if (read->unchanged) {
    ++counters_.unchanged_reads;
  } else if (read->update_s < table_update_s_) {
    ++counters_.stale_reads;  // older than a table already seen: a late duplicate
  } else {
    table_ = std::move(read->jobs);
    table_update_s_ = read->update_s;
    fresh = true;
  }
  const std::vector<JobInfo>* jobs = &table_;
  // Nodes every 5th cycle, and at once when a job DeepShare runs is pending again without
  // DeepShare's doing (a node failure): the policy must not place it back on a failed node.
  std::optional<std::vector<NodeInfo>> nodes;
  bool requeued = false;
  if (fresh)
    for (const auto& j : *jobs) {
      auto it = by_key_.find(key_of(j));
      requeued = requeued || (it != by_key_.end() && j.state == JobState::Pending &&
                              rt(it->second).status == JobStatus::Running &&
                              recs_[it->second.index()].intent == Intent::None);
    }
  if (counters_.cycles % 5 == 0 || requeued) nodes = source_->nodes();
  std::lock_guard<std::mutex> lock(mu_);
  counters_.last_observe_ms = wall_;
  bool nodes_changed = false;
  if (nodes)
    for (const auto& n : *nodes)
      if (auto it = node_index_.find(n.name); it != node_index_.end())
        nodes_changed = nodes_changed || node_usable_[it->second] != n.usable ||
                        node_shared_[it->second] != (n.partitions.size() > 1);
  // A quiet cycle: nothing changed in Slurm, and the previous cycle settled (it sent no
  // action, produced no change for the policy, decided nothing, left no start or preemption
  // in flight) and no job's --begin comes due: reconciling again would find nothing, so the
  // cycle costs the read and the policy's call only.
  const bool quiet =
      !fresh && !nodes_changed && settled_ && !tenants_added_ && wall_ < next_timer_wall_;
  const std::uint64_t sent = counters_.actions_sent;
  if (quiet) {
    ++counters_.quiet_cycles;
  } else {
    // What Slurm has allocated now, per node (every partition): a start is released only
    // onto GPUs Slurm shows free.
    slurm_use_.clear();
    for (const auto& j : *jobs) {
      if (!j.running() && !j.completing) continue;
      for (const auto& [name, a] : j.alloc) {
        NodeUse& u = slurm_use_[name];
        u.gpus |= a.gpus;
        u.slots |= a.slots;
      }
    }
    observe(*jobs, nodes ? *nodes : std::vector<NodeInfo>{});
    if (deposed_) return false;  // a newer leader's record: nothing more from this one
    if (tenants_added_) {
      tenants_added_ = false;
      rebuild_policy();
    }
    sync_blocked(*jobs);
  }
  const std::size_t deltas = state_->delta_count();
  Decisions d = decide();
  apply(d);
  if (!quiet) compact();
  settled_ = (quiet ? settled_ : true) && deltas == 0 && d.start.empty() && d.preempt.empty() &&
             d.reject.empty() && counters_.actions_sent == sent && open_intents_ == 0;
  ++counters_.cycles;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  counters_.cycle_seconds.observe(secs);
  return true;
}

void Controller::run(const std::atomic<bool>& stop) {
  while (!stop.load() && !deposed_) {
    reload_if_requested();
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.poll_ms);
    step();
    std::this_thread::sleep_until(next);
  }
  log_.info("controller_stopped", {{"cycles", counters_.cycles}});
}

}  // namespace ds::slurm
