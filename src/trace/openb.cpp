#include "trace/openb.hpp"

#include <array>
#include <cmath>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {

std::int64_t openb_gpu_memory_mib(std::string_view model) {
  struct Entry {
    std::string_view model;
    int gib;
  };
  static constexpr std::array<Entry, 5> kKnown = {
      {{"T4", 16}, {"P100", 16}, {"V100M16", 16}, {"V100M32", 32}, {"A10", 24}}};
  for (const auto& e : kKnown)
    if (e.model == model) return std::int64_t{e.gib} * 1024;
  return 0;
}

namespace {

// Tenants in this order; the first two are guaranteed-class.
constexpr std::array<Qos, 4> kQosOrder = {Qos::LatencySensitive, Qos::Guaranteed, Qos::Burstable,
                                          Qos::BestEffort};

bool guaranteed_class(Qos q) {
  return q == Qos::LatencySensitive || q == Qos::Guaranteed;
}

struct Pods {
  std::vector<JobSpec> specs;
  std::vector<JobTruth> truth;
  std::size_t cpu_only = 0;
  std::size_t multi_gpu_fraction = 0;  // num_gpu > 1 with gpu_milli < 1000: whole GPUs
};

// A time column in seconds; empty is allowed only where `optional`.
std::optional<std::int64_t> time_field(const CsvReader& csv, std::size_t c, bool optional) {
  if (optional && csv.empty_field(c)) return std::nullopt;
  return read_whole_seconds(csv, c, false);
}

Pods read_pods(const std::string& path) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto c_name = csv.require_column("name");
  const auto c_num = csv.require_column("num_gpu");
  const auto c_milli = csv.require_column("gpu_milli");
  const auto c_qos = csv.require_column("qos");
  const auto c_phase = csv.require_column("pod_phase");
  const auto c_create = csv.require_column("creation_time");
  const auto c_delete = csv.require_column("deletion_time");
  const auto c_sched = csv.require_column("scheduled_time");
  Pods out;
  std::unordered_map<std::string, long> seen;  // pod name -> line
  while (csv.next()) {
    JobSpec job;
    JobTruth truth;
    job.name = std::string(csv.field(c_name));
    if (job.name.empty()) csv.fail(c_name, "a pod name");
    if (auto [it, fresh] = seen.emplace(job.name, csv.line()); !fresh)
      throw InputError(csv.where(c_name), "field 'name': duplicate pod " + quote_input(job.name) +
                                              " (first on line " + std::to_string(it->second) +
                                              ")");
    const auto num = read_gpu_count(csv, c_num, 0);
    const auto qos = parse_qos(csv.field(c_qos));
    if (!qos) csv.fail(c_qos, "a QoS class (LS, BE, Burstable or Guaranteed)");
    const auto created = *time_field(csv, c_create, false);
    const auto deleted = *time_field(csv, c_delete, false);
    const auto scheduled = time_field(csv, c_sched, true);
    if (scheduled && *scheduled < created)  // a pod runs only once it exists
      throw InputError(csv.where(c_sched), "field 'scheduled_time': pod " + quote_input(job.name) +
                                               " is scheduled at " + std::to_string(*scheduled) +
                                               " s, before it was created (" +
                                               std::to_string(created) + " s)");
    if (num == 0) {
      ++out.cpu_only;
      continue;
    }
    const auto milli = csv.get_int_in(c_milli, 1, kMilliPerGpu, "a GPU share");
    const std::int64_t work = deleted - scheduled.value_or(created);  // both within +-100 years
    if (work < 0)
      throw InputError(csv.where(c_delete),
                       "field 'deletion_time': pod " + quote_input(job.name) + " ends at " +
                           std::to_string(deleted) + " s, before it " +
                           (scheduled ? "was scheduled (" : "was created (") +
                           std::to_string(scheduled.value_or(created)) + " s)");
    job.gpus = static_cast<int>(num);
    if (num == 1) {
      job.gpu_milli = static_cast<int>(milli);
    } else if (milli < kMilliPerGpu) {
      ++out.multi_gpu_fraction;
    }
    job.qos = *qos;
    job.submit = seconds(created);
    truth.work = seconds(work);
    const std::string_view phase = csv.field(c_phase);
    truth.state = phase == "Succeeded" ? FinalState::Completed
                  : phase == "Failed"  ? FinalState::Failed
                                       : FinalState::Other;
    out.specs.push_back(std::move(job));
    out.truth.push_back(truth);
  }
  return out;
}

void read_nodes(const std::string& path, Workload& w) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto c_sn = csv.require_column("sn");
  const auto c_gpu = csv.require_column("gpu");
  const auto c_model = csv.require_column("model");
  std::unordered_map<std::string, long> seen;
  std::size_t gpu_less = 0;
  std::unordered_map<std::string, int> assumed;  // model -> nodes given the default memory
  std::vector<std::string> assumed_order;
  NodeTally tally;
  while (csv.next()) {
    const std::string sn(csv.field(c_sn));
    if (sn.empty()) csv.fail(c_sn, "a node name");
    if (auto [it, fresh] = seen.emplace(sn, csv.line()); !fresh)
      throw InputError(csv.where(c_sn), "field 'sn': duplicate node " + quote_input(sn) +
                                            " (first on line " + std::to_string(it->second) + ")");
    const auto gpus = csv.get_int_in(c_gpu, 0, kMaxGpusPerNode, "a GPU count");
    if (gpus == 0) {
      ++gpu_less;
      continue;
    }
    tally.add(csv.where(c_gpu), 1, gpus);
    const std::string model(csv.field(c_model));
    std::int64_t mem = openb_gpu_memory_mib(model);
    if (mem == 0) {
      mem = kDefaultGpuMemoryMib;
      if (assumed[model]++ == 0) assumed_order.push_back(model);
    }
    w.cluster.add_nodes(1, static_cast<int>(gpus), mem, model, TenantId());
    w.cluster.nodes.back().name = sn;
  }
  if (gpu_less > 0)
    w.notes.push_back("openb: skipped " + std::to_string(gpu_less) + " GPU-less nodes in " + path);
  constexpr std::size_t kNamed = 10;  // one note per model, then a count: notes stay short
  for (std::size_t i = 0; i < assumed_order.size() && i < kNamed; ++i) {
    const std::string& m = assumed_order[i];
    w.notes.push_back("openb: GPU memory of model " + (m.empty() ? "(none)" : quote_input(m)) +
                      " is not published: assumed 24 GiB on its " + std::to_string(assumed[m]) +
                      " nodes");
  }
  if (assumed_order.size() > kNamed)
    w.notes.push_back("openb: and " + std::to_string(assumed_order.size() - kNamed) +
                      " more GPU models with no published memory: assumed 24 GiB");
}

// Largest-remainder split of `total` GPUs in proportion to `demand` (ties: lower index).
std::vector<int> split_quota(int total, const std::vector<double>& demand) {
  std::vector<int> q(demand.size(), 0);
  if (demand.empty() || total <= 0) return q;
  double sum = 0;
  for (double d : demand) sum += d;
  std::vector<double> share(demand.size());
  for (std::size_t i = 0; i < demand.size(); ++i)
    share[i] = sum > 0 ? total * (demand[i] / sum) : static_cast<double>(total) / demand.size();
  int given = 0;
  for (std::size_t i = 0; i < q.size(); ++i) given += q[i] = static_cast<int>(std::floor(share[i]));
  while (given < total) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < q.size(); ++i)
      if (share[i] - q[i] > share[best] - q[best]) best = i;
    ++q[best];
    ++given;
  }
  return q;
}

}  // namespace

Workload load_openb(const std::string& path, const OpenbOptions& options) {
  Workload w;
  w.name = path;
  w.format = "openb";
  Pods pods = read_pods(path);
  const std::string node_list =
      options.node_list.empty()
          ? find_beside(path, {"openb_node_list_gpu_node.csv", "openb_node_list_all_node.csv"})
          : options.node_list;
  if (!node_list.empty()) {
    read_nodes(node_list, w);
  } else if (!options.cluster_from_caller) {
    throw InputError(SourceLocation{path},
                     "cannot find openb_node_list_gpu_node.csv (the nodes) beside the pod list; "
                     "pass --cluster FILE with the tenants and nodes");
  }

  // Tenants: one per QoS class present, quotas by GPU-time demand (header, step 5).
  std::array<double, kQosOrder.size()> demand{};
  std::array<bool, kQosOrder.size()> present{};
  auto slot = [](Qos q) {
    for (std::size_t i = 0; i < kQosOrder.size(); ++i)
      if (kQosOrder[i] == q) return i;
    return kQosOrder.size();  // unreachable: read_pods accepts only these classes
  };
  for (std::size_t i = 0; i < pods.specs.size(); ++i) {
    const JobSpec& j = pods.specs[i];
    const std::size_t s = slot(j.qos);
    present[s] = true;
    demand[s] += j.gpus * (j.gpu_milli / double{kMilliPerGpu}) * to_seconds(pods.truth[i].work);
  }
  std::vector<double> g_demand;
  for (std::size_t s = 0; s < kQosOrder.size(); ++s)
    if (present[s] && guaranteed_class(kQosOrder[s])) g_demand.push_back(demand[s]);
  const std::vector<int> quota = split_quota(w.cluster.total_gpus(), g_demand);
  std::array<TenantId, kQosOrder.size()> tenant_of{};
  std::size_t next_quota = 0;
  for (std::size_t s = 0; s < kQosOrder.size(); ++s) {
    if (!present[s]) continue;
    const bool g = guaranteed_class(kQosOrder[s]);
    tenant_of[s] = add_tenant(w, to_string(kQosOrder[s]), g ? quota[next_quota++] : 0,
                              g ? TenantClass::Guaranteed : TenantClass::BestEffort);
  }
  for (auto& j : pods.specs) j.tenant = tenant_of[slot(j.qos)];
  std::string quotas;
  for (const auto& t : w.tenants)
    quotas += (quotas.empty() ? "" : ", ") + t.name + " " + std::to_string(t.quota_gpus);
  w.notes.push_back("openb: " + std::to_string(w.cluster.total_gpus()) +
                    " GPUs split by GPU-time demand between guaranteed-class tenants: " + quotas);

  if (pods.cpu_only > 0)
    w.notes.push_back("openb: skipped " + std::to_string(pods.cpu_only) +
                      " CPU-only pods (num_gpu = 0)");
  if (pods.multi_gpu_fraction > 0)
    w.notes.push_back("openb: " + std::to_string(pods.multi_gpu_fraction) +
                      " multi-GPU pods asked for gpu_milli < 1000: given whole GPUs");
  w.jobs = std::move(pods.specs);
  w.truth = std::move(pods.truth);
  w.finalize();
  return w;
}

}  // namespace ds
