#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/rng.hpp"
#include "model/snapshot.hpp"
#include "model/tenant_tree.hpp"
#include "model/workload.hpp"

namespace ds {

void Cluster::add_nodes(int count, int gpus, std::int64_t gpu_memory_mib,
                        const std::string& gpu_type, TenantId owner,
                        const std::string& name_prefix) {
  if (gpus < 0 || gpus > kMaxGpusPerNode)
    throw InputError("a node must have 0.." + std::to_string(kMaxGpusPerNode) + " GPUs, got " +
                     std::to_string(gpus));
  for (int i = 0; i < count; ++i) {
    Node n;
    n.id = NodeId(static_cast<std::uint32_t>(nodes.size()));
    n.name = name_prefix + std::to_string(nodes.size());
    n.gpus = gpus;
    n.first_gpu = total_gpus();
    n.gpu_memory_mib = gpu_memory_mib;
    n.gpu_type = gpu_type;
    n.owner = owner;
    nodes.push_back(std::move(n));
  }
}

const char* to_string(TenantClass c) {
  return c == TenantClass::Guaranteed ? "guaranteed" : "best-effort";
}

const char* to_string(WaitReason r) {
  switch (r) {
    case WaitReason::None:
      return "none";
    case WaitReason::Priority:
      return "priority";
    case WaitReason::Quota:
      return "quota";
    case WaitReason::Reserved:
      return "reserved-for-entitled";
    case WaitReason::NoFit:
      return "no-fit";
    case WaitReason::Fragmented:
      return "fragmented";
    case WaitReason::Reclaim:
      return "reclaim";
    case WaitReason::Round:
      return "round";
    case WaitReason::Profiling:
      return "profiling";
    case WaitReason::Starting:
      return "starting";
    case WaitReason::Held:
      return "held";
    case WaitReason::Dependency:
      return "dependency";
  }
  return "none";
}

bool accepts_gpu_model(const JobSpec& job, std::string_view node_model) {
  std::string_view rest = job.gpu_type;
  if (rest.empty()) return true;
  for (;;) {
    const auto bar = rest.find('|');
    if (rest.substr(0, bar) == node_model) return true;
    if (bar == std::string_view::npos) return false;
    rest.remove_prefix(bar + 1);
  }
}

bool accepts_node(const JobSpec& job, NodeId node, std::string_view node_model) {
  if (!job.allowed_nodes.empty() &&
      (node.index() >= job.allowed_nodes.size() || job.allowed_nodes[node.index()] == 0))
    return false;
  return accepts_gpu_model(job, node_model);
}

bool constrained(const JobSpec& job) {
  return !job.gpu_type.empty() || !job.allowed_nodes.empty();
}

const char* to_string(Qos q) {
  switch (q) {
    case Qos::LatencySensitive:
      return "LS";
    case Qos::BestEffort:
      return "BE";
    case Qos::Burstable:
      return "Burstable";
    case Qos::Guaranteed:
      return "Guaranteed";
    case Qos::Unspecified:
      break;
  }
  return "";
}

const char* to_string(FinalState s) {
  switch (s) {
    case FinalState::Completed:
      return "COMPLETED";
    case FinalState::Cancelled:
      return "CANCELLED";
    case FinalState::Failed:
      return "FAILED";
    case FinalState::Other:
      break;
  }
  return "OTHER";
}

TenantId Workload::tenant_by_name(const std::string& n) const {
  for (const auto& t : tenants)
    if (t.name == n) return t.id;
  return TenantId();
}

UserId Workload::intern_user(const std::string& n) {
  auto [it, inserted] = user_index.try_emplace(n, static_cast<std::uint32_t>(users.size()));
  if (inserted) users.push_back(n);
  return UserId(it->second);
}

int Workload::intern_profile(const Profile& p) {
  for (std::size_t i = 0; i < profiles.size(); ++i)
    if (profiles[i] == p) return static_cast<int>(i);
  profiles.push_back(p);
  return static_cast<int>(profiles.size() - 1);
}

namespace {

// The backstop of the ranges in core/limits.hpp (docs/formats.md, "Ranges"): importers and
// the cluster file check each value where they read it, with file and line; this catches
// any workload built another way (generator, tests, a resized cluster) before it is
// simulated, so that no later arithmetic can overflow.
void check_limits(const Workload& w) {
  using namespace limits;
  auto fail = [](const std::string& what) { throw InputError(what); };
  if (w.jobs.size() > kMaxJobs)
    fail(std::to_string(w.jobs.size()) + " jobs: at most " + std::to_string(kMaxJobs) +
         " are allowed");
  if (w.tenants.size() > kMaxTenants)
    fail(std::to_string(w.tenants.size()) + " tenants: at most " + std::to_string(kMaxTenants) +
         " are allowed");
  if (w.cluster.nodes.size() > static_cast<std::size_t>(kMaxNodes))
    fail(std::to_string(w.cluster.nodes.size()) + " nodes: at most " + std::to_string(kMaxNodes) +
         " are allowed");
  std::int64_t gpus = 0;
  for (const auto& n : w.cluster.nodes) {
    gpus += n.gpus;
    if (n.gpu_memory_mib < 0 || n.gpu_memory_mib > kMaxGpuMemoryMib)
      fail("node " + quote_input(n.name) + ": GPU memory must be in 0.." +
           std::to_string(kMaxGpuMemoryMib) + " MiB");
  }
  if (gpus > kMaxClusterGpus)
    fail("the cluster has " + std::to_string(gpus) + " GPUs: at most " +
         std::to_string(kMaxClusterGpus) + " are allowed");
  std::int64_t quotas = 0;
  for (const auto& t : w.tenants) {
    const std::string who = "tenant " + quote_input(t.name);
    if (t.quota_gpus < 0 || t.quota_gpus > kMaxClusterGpus)
      fail(who + ": quota must be in 0.." + std::to_string(kMaxClusterGpus) + " GPUs");
    quotas += t.quota_gpus;
    if (t.slo_queue < 0 || t.slo_queue > kMaxInterval || t.checkpoint_interval < 0 ||
        t.checkpoint_interval > kMaxInterval)
      fail(who + ": SLO and checkpoint interval must be within 0..100 years");
    if (!(t.weight >= 0 && t.weight <= 1e9) || !(t.max_slowdown >= 1 && t.max_slowdown <= 1e9))
      fail(who + ": weight must be in 0..1e9 and max_slowdown in 1..1e9");
  }
  (void)check_tenant_tree(w.tenants, -1);  // parents in range, no cycle
  if (quotas > kMaxQuotaTotal)
    fail("tenant quotas add up to " + std::to_string(quotas) + " GPUs: at most " +
         std::to_string(kMaxQuotaTotal) + " are allowed");
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    auto bad = [&](const std::string& what) { fail("job " + quote_input(j.name) + ": " + what); };
    if (j.gpus > kMaxClusterGpus)
      bad("at most " + std::to_string(kMaxClusterGpus) + " GPUs per job");
    if (j.submit < -kMaxAbsTime || j.submit > kMaxAbsTime)
      bad("submit time beyond 100 years from 1970");
    if (w.truth[i].work > kMaxDuration)
      bad("duration beyond " + std::to_string(kMaxDuration / kSecond) + " s");
    if (!(j.gpu_memory_mib >= 0 && j.gpu_memory_mib <= static_cast<double>(kMaxGpuMemoryMib)))
      bad("GPU memory must be in 0.." + std::to_string(kMaxGpuMemoryMib) + " MiB");
    if (!(j.gpu_util == -1 || (j.gpu_util >= 0 && j.gpu_util <= 100)))
      bad("GPU utilization must be in 0..100");
  }
}

}  // namespace

void Workload::finalize() {
  if (jobs.size() != truth.size()) throw InputError("internal: jobs and truth differ in length");
  check_limits(*this);
  for (std::size_t i = 0; i < tenants.size(); ++i)
    tenants[i].id = TenantId(static_cast<std::uint32_t>(i));
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return jobs[a].submit < jobs[b].submit; });
  std::vector<JobSpec> sorted_jobs;
  std::vector<JobTruth> sorted_truth;
  sorted_jobs.reserve(jobs.size());
  sorted_truth.reserve(jobs.size());
  for (std::size_t i : order) {
    sorted_jobs.push_back(std::move(jobs[i]));
    sorted_truth.push_back(truth[i]);
  }
  jobs = std::move(sorted_jobs);
  truth = std::move(sorted_truth);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto& j = jobs[i];
    j.id = JobId(static_cast<std::uint32_t>(i));
    // The message is built only for a job refused (1M-job traces: issue #27).
    auto refuse = [&](const char* why) { throw InputError("job " + quote_input(j.name) + why); };
    if (!j.tenant.valid() || j.tenant.index() >= tenants.size()) refuse(": unknown tenant");
    if (j.gpus <= 0) refuse(": needs at least one GPU");
    if (j.gpu_milli <= 0 || j.gpu_milli > kMilliPerGpu) refuse(": gpu_milli must be in 1..1000");
    if (j.gpu_milli < kMilliPerGpu && j.gpus != 1)
      refuse(": a fractional GPU request must ask for exactly one GPU");
    if (truth[i].work < 0) refuse(": negative duration");
  }
}

void Workload::scale_load(double factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw InputError("--load-factor must be a positive number");
  if (jobs.empty() || factor == 1.0) return;
  const Time first = jobs.front().submit;
  for (auto& j : jobs) {
    const double scaled = static_cast<double>(j.submit - first) / factor;
    j.submit = first + static_cast<Time>(std::llround(scaled));
  }
}

void Workload::jitter_submits(Time max_delay, std::uint64_t seed) {
  if (max_delay < 0 || max_delay > limits::kMaxInterval)
    throw InputError("--jitter: expected 0.." + std::to_string(limits::kMaxInterval / kSecond) +
                     " seconds");
  if (max_delay < kSecond || jobs.empty()) return;
  if (jobs.back().submit > limits::kMaxAbsTime - max_delay)
    throw InputError("--jitter " + std::to_string(max_delay / kSecond) +
                     " moves the trace's submit times beyond 100 years from 1970");
  Rng rng(seed);
  const auto choices = static_cast<std::uint64_t>(max_delay / kSecond) + 1;
  Time before = kNever;
  for (auto& j : jobs) {
    j.submit += static_cast<Time>(rng.below(choices)) * kSecond;
    if (before != kNever) j.submit = std::max(j.submit, before);
    before = j.submit;
  }
}

}  // namespace ds

namespace ds {

std::string Workload::digest() const {
  Fnv1a d;
  auto field = [&](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
      d.add(v);
      d.add(std::string_view("\0", 1));  // a separator no name holds
    } else {
      // As std::to_string writes it ("%f" for a double), without its allocation.
      char buf[512];
      std::to_chars_result r;
      if constexpr (std::is_floating_point_v<std::decay_t<decltype(v)>>)
        r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 6);
      else
        r = std::to_chars(buf, buf + sizeof buf, v);
      d.add(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
      d.add(",");
    }
  };
  for (const auto& t : tenants) {
    field(t.name);
    field(t.quota_gpus);
    field(t.slo_queue);
    field(t.max_slowdown);
    field(static_cast<int>(t.cls));
    field(t.weight);
    field(t.checkpoint_interval);
  }
  for (const auto& n : cluster.nodes) {
    field(n.gpus);
    field(n.gpu_memory_mib);
    field(n.owner.valid() ? static_cast<long long>(n.owner.index()) : -1LL);
    field(n.gpu_type);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& j = jobs[i];
    field(j.name);
    field(j.tenant.index());
    field(j.user.valid() ? users[j.user.index()] : std::string());
    field(j.gpus);
    field(j.gpu_milli);
    field(j.submit);
    field(j.profile);
    field(j.gpu_util);
    field(j.gpu_memory_mib);
    field(static_cast<int>(j.qos));
    field(truth[i].work);
    field(static_cast<int>(truth[i].state));
  }
  for (const auto& p : profiles) {
    field(p.model);
    field(p.dataset);
    field(p.batch_size);
    field(static_cast<int>(p.amp));
  }
  return d.text();
}

double Workload::offered_load() const {
  if (jobs.size() < 2 || cluster.total_gpus() == 0) return 0;
  double gpu_ms = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    gpu_ms += static_cast<double>(truth[i].work) * jobs[i].gpus * jobs[i].gpu_milli / kMilliPerGpu;
  const double span = static_cast<double>(jobs.back().submit - jobs.front().submit);
  return span > 0 ? gpu_ms / (span * cluster.total_gpus()) : 0;
}

void Workload::fit_cluster_to_load(double target) {
  if (!(target > 0) || !std::isfinite(target))
    throw InputError("--fit-load must be a positive number");
  const double now = offered_load();
  if (now <= 0) throw InputError("--fit-load: the workload offers no load to fit");
  const double factor = now / target;  // new GPUs / old GPUs
  const int old_gpus = cluster.total_gpus();
  // Group nodes by owner (the shared pool is its own group), in node order.
  std::vector<std::vector<std::size_t>> groups(tenants.size() + 1);
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    const TenantId o = cluster.nodes[i].owner;
    groups[o.valid() ? o.index() : tenants.size()].push_back(i);
  }
  Cluster resized;
  std::vector<int> owned(tenants.size(), 0);
  auto keep_node = [&](const Node& n, std::size_t copy) {
    resized.add_nodes(1, n.gpus, n.gpu_memory_mib, n.gpu_type, n.owner, "");
    resized.nodes.back().name = copy == 0 ? n.name : n.name + "-copy" + std::to_string(copy);
    if (n.owner.valid()) owned[n.owner.index()] += n.gpus;
  };
  for (const auto& g : groups) {
    if (g.empty()) continue;
    int gpus = 0;
    for (std::size_t i : g) gpus += cluster.nodes[i].gpus;
    const double want = gpus * factor;
    // Whole copies of the group while growing, then an evenly spread subset of its
    // nodes (so a mixed node list keeps its mix) with at least `want` GPUs in all.
    std::size_t copies = 0;
    double have = 0;
    while (have + gpus <= want + 1e-9) {
      for (std::size_t i : g) keep_node(cluster.nodes[i], copies);
      have += gpus;
      ++copies;
    }
    // Visit the nodes in a low-discrepancy order (golden-ratio stride), taking those that
    // do not overshoot, until the group has its share of GPUs.
    std::vector<std::size_t> order(g.size());
    std::iota(order.begin(), order.end(), 0);
    auto spread = [](std::size_t i) {
      const double x = static_cast<double>(i) * 0.6180339887498949;
      return x - std::floor(x);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return spread(a) < spread(b); });
    std::vector<std::size_t> pick;
    for (std::size_t i : order) {
      const bool none = pick.empty() && copies == 0;  // every group keeps a node
      if (!none && have >= want - 0.5) break;
      const Node& n = cluster.nodes[g[i]];
      if (!none && have + n.gpus > want + 0.5) continue;
      pick.push_back(i);
      have += n.gpus;
    }
    std::sort(pick.begin(), pick.end());  // keep the original node order
    for (std::size_t i : pick) keep_node(cluster.nodes[g[i]], copies);
  }
  for (std::size_t t = 0; t < tenants.size(); ++t) {
    if (owned[t] > 0) {
      tenants[t].quota_gpus = owned[t];
    } else {
      tenants[t].quota_gpus = static_cast<int>(std::floor(tenants[t].quota_gpus * factor));
    }
    if (tenants[t].tree_quota_gpus > 0)
      tenants[t].tree_quota_gpus =
          static_cast<int>(std::floor(tenants[t].tree_quota_gpus * factor));
  }
  if (!TenantTree(tenants).flat()) (void)resolve_tenant_tree(tenants, -1);  // scaled quotas
  cluster = std::move(resized);
  notes.push_back("cluster resized from " + std::to_string(old_gpus) + " to " +
                  std::to_string(cluster.total_gpus()) + " GPUs (" +
                  std::to_string(cluster.nodes.size()) + " nodes) for an offered load of " +
                  std::to_string(offered_load()).substr(0, 5) + " (target " +
                  std::to_string(target).substr(0, 5) + ")");
}

}  // namespace ds
