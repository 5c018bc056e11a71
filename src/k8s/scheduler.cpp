// `deepshare k8s run`'s loop (scheduler.hpp).
#include "k8s/scheduler.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "k8s/objects.hpp"
#include "k8s/tenants.hpp"
#include "registry/registry.hpp"

namespace ds::k8s {
namespace {

// Waiting pods' conditions written per cycle at most (100 ms cycles: at most 500 writes a
// second, whatever the queue's length; the rest wait a cycle).
constexpr std::size_t kWaitWritesPerCycle = 50;
// A cycle this long is logged with where its time went (slow_cycle).
constexpr double kSlowCycleS = 1.0;
// Threads (and connections) that send bindings beside the loop (binder.hpp).
constexpr int kBinders = 4;

// The wall time of a cycle's phases.
class CycleTimer {
 public:
  enum Phase { Read, Fold, Decide, Apply, Waits, Compact, kPhases };
  explicit CycleTimer(std::chrono::steady_clock::time_point start) : start_(start), last_(start) {}
  void lap(Phase p) {
    const auto now = std::chrono::steady_clock::now();
    s_[p] = std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  [[nodiscard]] std::int64_t ms(Phase p) const { return std::llround(s_[p] * 1000.0); }
  [[nodiscard]] double total_s() const {
    return std::chrono::duration<double>(last_ - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_, last_;
  double s_[kPhases] = {};
};

}  // namespace

PodScheduler::PodScheduler(SchedulerConfig config, driver::Log& log)
    : cfg_(std::move(config)), log_(log), fence_(log, journal_) {}

PodScheduler::~PodScheduler() = default;

void PodScheduler::connect() {
  client_ = std::make_unique<Client>(load_kubeconfig(cfg_.kubeconfig));
  binder_ = std::make_unique<Binder>(client_->config(), kBinders);
  pods_ = std::make_unique<Informer>(*client_, pods_path(""), log_);
  nodes_ = std::make_unique<Informer>(*client_, nodes_path(), log_);
  jobs_ = std::make_unique<Informer>(*client_, resource_path("batch", "v1", "jobs", "", ""), log_);
  pods_->wake(&wakeup_);
  pods_->start();
  nodes_->start();
  jobs_->start();
  if (!pods_->wait_synced(60) || !nodes_->wait_synced(60) || !jobs_->wait_synced(60))
    throw InputError(
        "no list of pods, nodes and jobs from " + client_->config().server +
        " within 60 s (is the API server up? the kubeconfig's user allowed to "
        "list and watch pods, nodes and batch/v1 jobs? deploy/k8s/scheduler-rbac.yaml)");
  if (client_->get(std::string("/apis/") + kDraGroup + "/" + kDraVersion)) {  // DRA is served
    claims_ = std::make_unique<Informer>(
        *client_, resource_path(kDraGroup, kDraVersion, "resourceclaims", "", ""), log_);
    slices_ = std::make_unique<Informer>(
        *client_, resource_path(kDraGroup, kDraVersion, "resourceslices", "", ""), log_);
    claims_->start();
    slices_->start();
    if (!claims_->wait_synced(60) || !slices_->wait_synced(60))
      throw InputError(
          "no list of resource.k8s.io/v1 resourceclaims and resourceslices within 60 s (may "
          "the scheduler's user list and watch them? deploy/k8s/scheduler-rbac.yaml)");
    log_.info("dra", {{"driver", cfg_.dra.driver},
                      {"device_class", cfg_.dra.device_class},
                      {"detail", "GPUs as DRA devices: claims of the class are allocated"}});
  }
  if (cfg_.live_tenants) watch_tenants();
}

std::vector<NodeView> PodScheduler::read_nodes() {
  std::vector<NodeView> nodes = node_reader_.read(nodes_->snapshot());
  if (!slices_) return nodes;
  if (slices_->changes() != slice_changes_)  // slices change rarely: read only then
    devices_ = read_slices(slices_->items(&slice_changes_), cfg_.dra.driver);
  if (const std::uint64_t c = claims_->changes(); c != claim_changes_) {
    claim_changes_ = c;  // (a change after this count is read again at the next cycle)
    claim_index_.update(claims_->snapshot(), cfg_.dra);
  }
  add_dra_gpus(nodes, devices_);
  return nodes;
}

void PodScheduler::watch_tenants() {
  const bool kueue = static_cast<bool>(client_->get("/apis/kueue.x-k8s.io/v1beta2"));
  tenant_source_ = kueue ? TenantSource::Kueue : TenantSource::ConfigMap;
  if (kueue) {
    tenant_objects_[0] = std::make_unique<Informer>(
        *client_, resource_path("kueue.x-k8s.io", "v1beta2", "clusterqueues", "", ""), log_);
    tenant_objects_[1] = std::make_unique<Informer>(
        *client_, resource_path("kueue.x-k8s.io", "v1beta2", "localqueues", "", ""), log_);
  } else {
    ListWatchOptions o;
    o.field_selector = std::string("metadata.name=") + kTenantsConfigMap;
    tenant_objects_[0] = std::make_unique<Informer>(
        *client_, resource_path("", "v1", "configmaps", cfg_.lease.ns, ""), log_, o);
  }
  for (auto& i : tenant_objects_)
    if (i) i->start();
  for (auto& i : tenant_objects_)
    if (i && !i->wait_synced(60))
      throw InputError(std::string("no list of the tenants' objects (") +
                       to_string(tenant_source_) +
                       ") within 60 s: may the scheduler's user list and watch them?");
  log_.info("tenant_source",
            {{"source", to_string(tenant_source_)},
             {"detail", kueue ? "ClusterQueues' nominalQuota of nvidia.com/gpu, per LocalQueue's "
                                "namespace"
                              : "ConfigMap " + cfg_.lease.ns + "/" + kTenantsConfigMap}});
}

bool PodScheduler::read_tenants() {
  if (tenant_source_ == TenantSource::Given) return false;
  std::uint64_t changes = 0, c = 0;
  std::vector<json> a = tenant_objects_[0]->items(&c);
  changes += c;
  std::vector<json> b;
  if (tenant_objects_[1]) {
    b = tenant_objects_[1]->items(&c);
    changes += c;
  }
  if (changes == tenant_changes_) return false;
  tenant_changes_ = changes;
  NamespaceQuotas q;
  try {
    if (tenant_source_ == TenantSource::Kueue)
      q = kueue_quotas(a, b);
    else if (!a.empty())
      q = configmap_quotas(a.front());
  } catch (const InputError& e) {
    log_.warn("tenants_unreadable", {{"source", to_string(tenant_source_)},
                                     {"error", e.what()},
                                     {"detail", "the quotas in force stay"}});
    return false;
  }
  for (const auto& n : q.notes) log_.info("tenant_note", {{"detail", n}});
  return tenants_->apply(q);
}

void PodScheduler::tenants_changed() {
  cfg_.tenants = tenants_->tenants();
  core_->set_tenants(cfg_.tenants);
  core_->set_tenant_labels(tenants_->namespaces());
  adapter_->set_tenants(tenants_->active());
  PolicyOptions options;
  for (const auto& [k, v] : cfg_.options) options.set(k + "=" + v);
  const PolicyContext ctx{adapter_->cluster(), cfg_.tenants, options};
  core_->set_policy(make_policy(cfg_.policy, ctx), true);
  ++tenant_reloads_;
  log_.info("tenants_reloaded",
            {{"source", to_string(tenant_source_)}, {"tenants", tenants_->summary()}});
  journal_.line("tenants_reloaded " + tenants_->summary());
}

bool PodScheduler::lead(const std::atomic<bool>& stop) {
  if (!client_) connect();
  if (!cfg_.leader_elect) return true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    leader_ = std::make_unique<LeaderElector>(*client_, cfg_.lease, log_);
    fence_.set_lease(leader_.get());
  }
  bool told = false;
  while (!stop.load()) {
    {
      std::lock_guard<std::mutex> lock(mu_);  // metrics_text() reads the Lease's state
      if (leader_->round()) return true;
    }
    if (!told) {
      log_.info("standby", {{"lease", cfg_.lease.ns + "/" + cfg_.lease.name},
                            {"identity", leader_->config().identity},
                            {"detail", leader_->describe()}});
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(cfg_.lease.retry_ms));
  }
  return false;
}

void PodScheduler::init() {
  std::lock_guard<std::mutex> lock(mu_);  // the metrics endpoint may already be serving
  if (cfg_.tenants.size() != cfg_.namespaces.size())
    throw std::invalid_argument("Scheduler: one namespace per tenant");
  if (!client_) connect();
  tenants_ = std::make_unique<TenantBook>(cfg_.tenants, cfg_.namespaces);
  read_tenants();
  cfg_.tenants = tenants_->tenants();
  cfg_.namespaces = tenants_->namespaces();
  if (cfg_.tenants.empty())
    throw InputError(tenant_source_ == TenantSource::Given
                         ? "no tenant: give each tenant namespace a quota"
                         : std::string("no tenant in the ") + to_string(tenant_source_) +
                               " source: create the ConfigMap " + cfg_.lease.ns + "/" +
                               kTenantsConfigMap +
                               " (data NAMESPACE: \"GPUS\") or Kueue's "
                               "LocalQueues first");
  if (fence_.lease() && !fence_.lease()->held())
    throw InputError("the scheduler's " + fence_.lease()->describe() + " is not held");
  clock_.scale = cfg_.time_scale;
  clock_.wall0_ms = driver::wall_now_ms();
  clock_.origin = cfg_.time_scale == 1.0 ? clock_.wall0_ms : 0;
  if (journal_.open(cfg_.journal, clock_))
    log_.info("clock_restored", {{"journal", cfg_.journal}, {"scale", clock_.scale}});
  std::map<std::string, TenantId> ns_tenants;
  for (std::size_t t = 0; t < cfg_.tenants.size(); ++t)
    if (!ns_tenants.emplace(cfg_.namespaces[t], cfg_.tenants[t].id).second)
      throw InputError("namespace " + cfg_.namespaces[t] + " is given to two tenants");
  build_model();
  const std::string quotas = tenants_->summary();
  now_ = std::numeric_limits<Time>::min();
  log_.info("scheduler_ready", {{"server", client_->config().server},
                                {"scheduler_name", cfg_.scheduler_name},
                                {"nodes", adapter_->cluster().nodes.size()},
                                {"gpus", adapter_->cluster().total_gpus()},
                                {"tenants", quotas},
                                {"tenant_source", to_string(tenant_source_)},
                                {"policy", cfg_.policy},
                                {"time_scale", cfg_.time_scale},
                                {"epoch", fence_.epoch()}});
}

// The adapter, the core and the policy on the GPU nodes the API lists now; the running pods
// are adopted from their annotations at the next fold, as by a restarted scheduler.
void PodScheduler::build_model() {
  auto adapter = std::make_unique<K8sAdapter>(*client_, log_, journal_, fence_, tenants_->active(),
                                              cfg_.scheduler_name);
  adapter->load_nodes(read_nodes(), cfg_.gpu_memory_mib);
  if (claims_) adapter->use_dra(claim_index_, devices_, cfg_.dra);
  adapter->set_grace(cfg_.grace);
  adapter->use_jobs(job_index_);
  adapter->use_binder(binder_.get());
  if (adapter_) adapter->inherit(*adapter_);
  PolicyOptions options;
  for (const auto& [k, v] : cfg_.options) options.set(k + "=" + v);
  const PolicyContext ctx{adapter->cluster(), cfg_.tenants, options};
  auto policy = make_policy(cfg_.policy, ctx);
  // Counters go on (Prometheus counters never go back).
  const driver::CoreCounters kept = core_ ? core_->counters() : driver::CoreCounters{};
  core_.reset();  // before its adapter
  adapter_ = std::move(adapter);
  core_ = std::make_unique<driver::Core>(adapter_->cluster(), cfg_.tenants, *adapter_, log_,
                                         journal_, driver::Timing{cfg_.timeout_ms});
  core_->counters_mut() = kept;
  core_->set_policy(std::move(policy), false);
  adapter_->attach(*core_);
  core_->set_tenant_labels(cfg_.namespaces);
}

void PodScheduler::step() {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);  // metrics_text() reads the Lease's state too
  if (leader_) leader_->tick();
  if (!fence_.acting()) return;  // deposed: nothing more from this one
  const std::int64_t wall = driver::wall_now_ms();
  last_observe_ms_ = wall;
  const std::vector<NodeView> nodes = read_nodes();
  if (const auto added = adapter_->new_gpu_nodes(nodes); !added.empty()) {
    // The model's cluster is fixed (ClusterState): a new GPU node rebuilds it, as a restart
    // would, keeping the bindings the cache does not show yet.
    std::string names;
    for (const auto& n : added) names += (names.empty() ? "" : ",") + n;
    build_model();
    ++nodes_added_;
    log_.info("nodes_added", {{"nodes", names},
                              {"gpu_nodes", adapter_->cluster().nodes.size()},
                              {"gpus", adapter_->cluster().total_gpus()}});
    journal_.line("nodes_added " + names);
  }
  now_ = driver::cycle_time(now_, clock_.at(wall), core_->wake_at_ref());
  core_->set_time(now_, wall);
  CycleTimer timer(t0);
  job_index_.update(jobs_->snapshot());  // before the pods: a pod's Job is listed first
  adapter_->set_cycle(pods_->snapshot(), nodes, now_, wall, clock_);
  timer.lap(CycleTimer::Read);
  if (read_tenants()) tenants_changed();
  if (auto n = adapter_->nodes()) core_->observe_nodes(*n);
  const auto obs = adapter_->observe();
  core_->fold(*obs);
  adapter_->sync_held();
  timer.lap(CycleTimer::Fold);
  const Decisions d = core_->decide();
  timer.lap(CycleTimer::Decide);
  core_->apply(d);
  timer.lap(CycleTimer::Apply);
  adapter_->report_waits(kWaitWritesPerCycle);
  timer.lap(CycleTimer::Waits);
  core_->compact();
  timer.lap(CycleTimer::Compact);
  ++cycles_;
  const double took = timer.total_s();
  cycle_seconds_.observe(took);
  if (took >= kSlowCycleS)
    log_.warn("slow_cycle", {{"seconds", took},
                             {"read_ms", timer.ms(CycleTimer::Read)},
                             {"fold_ms", timer.ms(CycleTimer::Fold)},
                             {"decide_ms", timer.ms(CycleTimer::Decide)},
                             {"apply_ms", timer.ms(CycleTimer::Apply)},
                             {"waits_ms", timer.ms(CycleTimer::Waits)},
                             {"compact_ms", timer.ms(CycleTimer::Compact)},
                             {"jobs", obs->jobs.size()},
                             {"starts", d.start.size()},
                             {"detail", "a scheduling cycle took over a second: where it went"}});
}

void PodScheduler::run(const std::atomic<bool>& stop, std::int64_t max_cycles) {
  while (!stop.load() && !fence_.deposed() &&
         (max_cycles <= 0 || static_cast<std::int64_t>(cycles_) < max_cycles)) {
    using std::chrono::milliseconds;
    const auto begun = Wakeup::Clock::now();
    const std::uint64_t seen = wakeup_.changes();  // a change from now on wakes the next cycle
    step();
    const auto ended = Wakeup::Clock::now();
    wakeup_.wait(
        seen,
        ended + std::max<Wakeup::Clock::duration>(milliseconds(cfg_.min_gap_ms), ended - begun),
        begun + milliseconds(cfg_.poll_ms));
  }
  if (binder_ && adapter_ && !fence_.deposed()) {  // the last cycle's bindings go out
    binder_->wait_done(5000);
    std::lock_guard<std::mutex> lock(mu_);
    adapter_->collect_binds();
  }
  if (leader_ && !fence_.deposed()) {
    std::lock_guard<std::mutex> lock(mu_);
    leader_->release();
  }
  const SchedulerCounters c = counters();
  log_.info("scheduler_stopped", {{"cycles", c.cycles},
                                  {"starts", c.core.starts},
                                  {"binds", c.adapter.binds},
                                  {"preemptions", c.core.preemptions},
                                  {"evictions", c.adapter.evictions},
                                  {"completions", c.core.completions},
                                  {"refused", c.adapter.refused},
                                  {"fenced", fence_.fenced()},
                                  {"deposed", fence_.deposed()},
                                  {"api_failures", c.adapter.api_failures},
                                  {"hand_over_waits", c.adapter.waits_for_gpus}});
}

SchedulerCounters PodScheduler::counters() const {
  SchedulerCounters c;
  c.cycles = cycles_;
  c.tenant_reloads = tenant_reloads_;
  c.fenced = fence_.fenced();
  c.cycle_seconds = cycle_seconds_;
  c.last_observe_ms = last_observe_ms_;
  if (core_) c.core = core_->counters();
  if (adapter_) c.adapter = adapter_->counters();
  if (binder_) {
    c.binds_queued = binder_->binds_queued();
    c.notes_queued = binder_->notes_queued();
  }
  return c;
}

}  // namespace ds::k8s
