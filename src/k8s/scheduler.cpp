// `deepshare k8s run`'s loop (scheduler.hpp).
#include "k8s/scheduler.hpp"

#include <chrono>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "k8s/objects.hpp"
#include "registry/registry.hpp"

namespace ds::k8s {

PodScheduler::PodScheduler(SchedulerConfig config, driver::Log& log)
    : cfg_(std::move(config)), log_(log) {}

PodScheduler::~PodScheduler() = default;

void PodScheduler::init() {
  if (cfg_.tenants.empty()) throw InputError("no tenant: give each tenant namespace a quota");
  if (cfg_.tenants.size() != cfg_.namespaces.size())
    throw std::invalid_argument("Scheduler: one namespace per tenant");
  client_ = std::make_unique<Client>(load_kubeconfig(cfg_.kubeconfig));
  pods_ = std::make_unique<Informer>(*client_, pods_path(""), log_);
  nodes_ = std::make_unique<Informer>(*client_, nodes_path(), log_);
  pods_->start();
  nodes_->start();
  if (!pods_->wait_synced(60) || !nodes_->wait_synced(60))
    throw InputError("no list of pods and nodes from " + client_->config().server +
                     " within 60 s (is the API server up? the kubeconfig's user allowed to "
                     "list and watch pods and nodes?)");
  clock_.scale = cfg_.time_scale;
  clock_.wall0_ms = driver::wall_now_ms();
  clock_.origin = cfg_.time_scale == 1.0 ? clock_.wall0_ms : 0;
  if (journal_.open(cfg_.journal, clock_))
    log_.info("clock_restored", {{"journal", cfg_.journal}, {"scale", clock_.scale}});
  std::map<std::string, TenantId> ns_tenants;
  for (std::size_t t = 0; t < cfg_.tenants.size(); ++t) {
    cfg_.tenants[t].id = TenantId(static_cast<std::uint32_t>(t));
    if (!ns_tenants.emplace(cfg_.namespaces[t], cfg_.tenants[t].id).second)
      throw InputError("namespace " + cfg_.namespaces[t] + " is given to two tenants");
  }
  adapter_ = std::make_unique<K8sAdapter>(*client_, log_, journal_, std::move(ns_tenants),
                                          cfg_.scheduler_name);
  adapter_->load_nodes(nodes_->items(), cfg_.gpu_memory_mib);
  PolicyOptions options;
  for (const auto& [k, v] : cfg_.options) options.set(k + "=" + v);
  const PolicyContext ctx{adapter_->cluster(), cfg_.tenants, options};
  auto policy = make_policy(cfg_.policy, ctx);
  core_ = std::make_unique<driver::Core>(adapter_->cluster(), cfg_.tenants, *adapter_, log_,
                                         journal_, driver::Timing{cfg_.timeout_ms});
  core_->set_policy(std::move(policy), false);
  adapter_->attach(*core_);
  std::vector<std::string> labels;
  std::string quotas;
  for (std::size_t t = 0; t < cfg_.tenants.size(); ++t) {
    labels.push_back(cfg_.namespaces[t]);
    quotas +=
        (t ? "," : "") + cfg_.namespaces[t] + "=" + std::to_string(cfg_.tenants[t].quota_gpus);
  }
  core_->set_tenant_labels(labels);
  now_ = std::numeric_limits<Time>::min();
  log_.info("scheduler_ready", {{"server", client_->config().server},
                                {"scheduler_name", cfg_.scheduler_name},
                                {"nodes", adapter_->cluster().nodes.size()},
                                {"gpus", adapter_->cluster().total_gpus()},
                                {"tenants", quotas},
                                {"policy", cfg_.policy},
                                {"time_scale", cfg_.time_scale}});
}

void PodScheduler::step() {
  const std::int64_t wall = driver::wall_now_ms();
  now_ = driver::cycle_time(now_, clock_.at(wall), core_->wake_at_ref());
  core_->set_time(now_, wall);
  adapter_->set_cycle(pods_->items(), nodes_->items(), now_, wall, clock_);
  if (auto n = adapter_->nodes()) core_->observe_nodes(*n);
  const auto obs = adapter_->observe();
  core_->fold(*obs);
  adapter_->sync_held();
  const Decisions d = core_->decide();
  core_->apply(d);
  core_->compact();
  ++cycles_;
}

void PodScheduler::run(const std::atomic<bool>& stop, std::int64_t max_cycles) {
  while (!stop.load() && (max_cycles <= 0 || static_cast<std::int64_t>(cycles_) < max_cycles)) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.poll_ms);
    step();
    std::this_thread::sleep_until(next);
  }
  const SchedulerCounters c = counters();
  log_.info("scheduler_stopped", {{"cycles", c.cycles},
                                  {"starts", c.core.starts},
                                  {"binds", c.adapter.binds},
                                  {"preemptions", c.core.preemptions},
                                  {"evictions", c.adapter.evictions},
                                  {"completions", c.core.completions},
                                  {"refused", c.adapter.refused},
                                  {"api_failures", c.adapter.api_failures}});
}

SchedulerCounters PodScheduler::counters() const {
  SchedulerCounters c;
  c.cycles = cycles_;
  if (core_) c.core = core_->counters();
  if (adapter_) c.adapter = adapter_->counters();
  return c;
}

}  // namespace ds::k8s
