// Controller lifecycle, snapshot and cycle; the reconciler is in reconcile.cpp and the
// actions in actuator.cpp.
#include "slurm/controller.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "registry/registry.hpp"

namespace ds::slurm {

std::int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Controller::Controller(ControllerConfig config, Log& log, ControllerClock clock)
    : cfg_(std::move(config)), log_(log), clock_(clock) {}

Controller::~Controller() {
  if (journal_) std::fclose(journal_);
}

void Controller::load_clock_from_journal() {
  if (cfg_.journal.empty()) return;
  std::ifstream in(cfg_.journal);
  std::string word;
  if (in >> word && word == "clock") {
    ControllerClock c;
    if (in >> c.wall0_ms >> c.origin >> c.scale) {
      clock_ = c;
      log_.info("clock_restored", {{"journal", cfg_.journal}, {"scale", std::to_string(c.scale)}});
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

const TenantConfig* Controller::tenant_of(const std::string& account) const {
  for (const auto& t : cfg_.tenants)
    if (t.account == account) return &t;
  return nullptr;
}

void Controller::init() {
  if (cfg_.policy != "deepshare")
    throw InputError(
        "the Slurm controller runs policy 'deepshare' (other policies size their state "
        "by a job count known in advance)");
  load_clock_from_journal();
  api_ = std::make_unique<SlurmApi>();
  auto nodes = api_->nodes();
  if (!nodes) throw InputError("cannot read Slurm nodes: " + api_->last_error());
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
  }
  if (cluster_.nodes.empty())
    throw InputError("partition '" + cfg_.partition + "' has no nodes with GPUs (gres gpu)");
  for (const auto& t : cfg_.tenants) tenants_.push_back(t.tenant);
  for (const auto& [k, v] : cfg_.options) options_.set(k + "=" + v);
  PolicyContext ctx{cluster_, tenants_, options_};
  policy_ = make_policy(cfg_.policy, ctx);
  gpus_.resize(static_cast<std::size_t>(cluster_.total_gpus()));
  gpu_free_.resize(gpus_.size());
  node_free_.resize(cluster_.nodes.size());
  log_.info("controller_ready", {{"partition", cfg_.partition},
                                 {"nodes", std::to_string(cluster_.nodes.size())},
                                 {"gpus", std::to_string(cluster_.total_gpus())},
                                 {"tenants", std::to_string(tenants_.size())},
                                 {"policy", cfg_.policy}});
}

void Controller::build_gpu_state(const std::vector<JobInfo>& jobs) {
  std::fill(gpus_.begin(), gpus_.end(), GpuState{});
  auto occupy = [&](std::size_t g, int milli, double mem) {
    GpuState& s = gpus_[g];
    ++s.jobs;
    s.milli_used = static_cast<std::int16_t>(std::min(32000, s.milli_used + milli));
    s.memory_used_mib += static_cast<std::int32_t>(mem);
  };
  for (std::size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (node_usable_[n]) continue;
    const Node& node = cluster_.nodes[n];
    for (int k = 0; k < node.gpus; ++k)
      occupy(static_cast<std::size_t>(node.first_gpu + k), kMilliPerGpu,
             static_cast<double>(node.gpu_memory_mib));
  }
  pending_.clear();
  running_.clear();
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const JobRuntime& r = rt_[i];
    const JobId id(static_cast<std::uint32_t>(i));
    if (r.status == JobStatus::Pending) pending_.push_back(id);
    if (r.status != JobStatus::Running) continue;
    running_.push_back(id);
    for (const auto& a : r.placement) {
      const Node& node = cluster_.nodes[a.node.index()];
      for (std::uint64_t m = a.gpu_mask; m; m &= m - 1)
        occupy(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m)), jobs_[i].gpu_milli,
               jobs_[i].gpu_memory_mib);
    }
  }
  // GPUs held by jobs DeepShare does not manage (other partitions, unmapped accounts).
  for (const auto& j : jobs) {
    if (by_slurm_.count(j.id) || (j.state != JobState::Running && j.state != JobState::Completing))
      continue;
    for (const auto& [name, mask] : j.gpu_idx) {
      auto it = node_index_.find(name);
      if (it == node_index_.end()) continue;
      const Node& node = cluster_.nodes[it->second];
      for (std::uint64_t m = mask; m; m &= m - 1)
        if (std::countr_zero(m) < node.gpus)
          occupy(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m)), kMilliPerGpu, 0);
    }
  }
  for (std::size_t g = 0; g < gpus_.size(); ++g)
    gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - gpus_[g].milli_used));
  for (std::size_t n = 0; n < cluster_.nodes.size(); ++n) {
    const Node& node = cluster_.nodes[n];
    int free = 0;
    for (int k = 0; k < node.gpus; ++k)
      free += gpus_[static_cast<std::size_t>(node.first_gpu + k)].jobs == 0;
    node_free_[n] = free;
  }
}

Decisions Controller::decide() {
  ClusterSnapshot s;
  s.now = now();
  s.cluster = &cluster_;
  s.tenants = tenants_;
  s.jobs = jobs_;
  s.runtime = rt_;
  s.gpus = gpus_;
  s.gpu_free_milli = gpu_free_;
  s.node_free_gpus = node_free_;
  s.pending = pending_;
  s.running = running_;
  // the policy expects arrivals in submission order
  std::stable_sort(arrived_.begin(), arrived_.end(), [&](JobId a, JobId b) {
    return jobs_[a.index()].submit < jobs_[b.index()].submit;
  });
  s.arrived = arrived_;
  s.requeued = requeued_;
  s.finished = finished_;
  s.adopted = adopted_;
  s.withdrawn = withdrawn_;
  Decisions d = policy_->decide(s);
  arrived_.clear();
  requeued_.clear();
  finished_.clear();
  adopted_.clear();
  withdrawn_.clear();
  return d;
}

bool Controller::step() {
  const auto t0 = std::chrono::steady_clock::now();
  wall_ = wall_now_ms();
  auto jobs = api_->jobs();
  if (!jobs) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.observe_errors;
    log_.warn("observe_failed", {{"error", api_->last_error()}});
    return false;
  }
  // Nodes every 5th cycle, and at once when Slurm requeued a job DeepShare runs (a node
  // failure): the policy must not place the job back on the node that just went down.
  std::optional<std::vector<NodeInfo>> nodes;
  bool requeued = false;
  for (const auto& j : *jobs) {
    auto it = by_slurm_.find(j.id);
    requeued = requeued || (it != by_slurm_.end() && j.state == JobState::Pending &&
                            rt_[it->second.index()].status == JobStatus::Running &&
                            recs_[it->second.index()].intent == Intent::None);
  }
  if (counters_.cycles % 5 == 0 || requeued) nodes = api_->nodes();
  std::lock_guard<std::mutex> lock(mu_);
  observe(*jobs, nodes ? *nodes : std::vector<NodeInfo>{});
  build_gpu_state(*jobs);
  Decisions d = decide();
  std::unordered_map<std::uint32_t, const JobInfo*> by_id;
  for (const auto& j : *jobs) by_id[j.id] = &j;
  apply(d, by_id);
  ++counters_.cycles;
  first_cycle_ = false;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  counters_.cycle_seconds_last = secs;
  counters_.cycle_seconds_sum += secs;
  counters_.cycle_seconds_max = std::max(counters_.cycle_seconds_max, secs);
  return true;
}

void Controller::run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.poll_ms);
    step();
    std::this_thread::sleep_until(next);
  }
  log_.info("controller_stopped", {{"cycles", std::to_string(counters_.cycles)}});
}

}  // namespace ds::slurm
