#include "trace/cluster_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

struct Entry {
  YAML::Node key;
  YAML::Node value;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[nodiscard]] SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return SourceLocation{file_};
    return SourceLocation{file_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const {
    throw InputError(at(n), message);
  }

  // The keys of a mapping, checked against `allowed` (unknown and repeated keys fail).
  std::map<std::string, Entry> entries(const YAML::Node& map, const std::string& what,
                                       const std::vector<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, what + ": expected a mapping of keys to values");
    std::map<std::string, Entry> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) fail(key, what + ": expected a plain key");
      const std::string k = key.Scalar();
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(key, what + ": unknown key '" + k + "' (valid keys: " + list + ")");
      }
      if (!out.emplace(k, Entry{key, it->second}).second)
        fail(key, what + ": key '" + k + "' appears twice");
    }
    return out;
  }

  const Entry& require(const std::map<std::string, Entry>& e, const YAML::Node& map,
                       const std::string& what, const std::string& key) const {
    auto it = e.find(key);
    if (it == e.end()) fail(map, what + ": missing required key '" + key + "'");
    return it->second;
  }

  [[nodiscard]] std::string scalar(const Entry& e, const std::string& expected) const {
    if (!e.value.IsScalar()) bad(e, expected);
    return e.value.Scalar();
  }
  [[nodiscard]] std::int64_t integer(const Entry& e, std::int64_t lo, std::int64_t hi,
                                     const std::string& expected) const {
    const auto v = parse_int(scalar(e, expected));
    if (!v || *v < lo || *v > hi) bad(e, expected);
    return *v;
  }
  [[nodiscard]] double number(const Entry& e, double lo, double hi,
                              const std::string& expected) const {
    const auto v = parse_double(scalar(e, expected));
    if (!v || *v < lo || *v > hi) bad(e, expected);
    return *v;
  }

 private:
  [[noreturn]] void bad(const Entry& e, const std::string& expected) const {
    const YAML::Node& where = e.value.Mark().is_null() ? e.key : e.value;
    const std::string got = e.value.IsScalar() ? "'" + e.value.Scalar() + "'"
                            : e.value.IsNull() ? std::string("nothing")
                                               : std::string("a list or mapping");
    fail(where, "key '" + e.key.Scalar() + "': expected " + expected + ", got " + got);
  }

  std::string file_;
};

std::vector<Tenant> read_tenants(const Reader& r, const Entry& list) {
  if (!list.value.IsSequence() || list.value.size() == 0)
    r.fail(list.value.Mark().is_null() ? list.key : list.value,
           "key 'tenants': expected a non-empty list of tenants");
  std::vector<Tenant> out;
  for (const YAML::Node& item : list.value) {
    const std::string what = "tenant #" + std::to_string(out.size() + 1);
    const auto e = r.entries(item, what,
                             {"name", "quota_gpus", "slo_queue_s", "class", "weight",
                              "checkpoint_interval_s", "max_slowdown"});
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(out.size()));
    const Entry& name = r.require(e, item, what, "name");
    t.name = r.scalar(name, "a tenant name");
    if (t.name.empty()) r.fail(name.value, "key 'name': expected a non-empty tenant name");
    for (const auto& o : out)
      if (o.name == t.name)
        r.fail(name.value, "key 'name': tenant '" + t.name + "' is defined twice");
    t.quota_gpus = static_cast<int>(
        r.integer(r.require(e, item, what, "quota_gpus"), 0, 1'000'000, "a GPU count >= 0"));
    if (auto it = e.find("slo_queue_s"); it != e.end())
      t.slo_queue = std::llround(r.number(it->second, 0, 1e9, "seconds >= 0") * kSecond);
    if (auto it = e.find("checkpoint_interval_s"); it != e.end())
      t.checkpoint_interval = std::llround(r.number(it->second, 0, 1e9, "seconds >= 0") * kSecond);
    if (auto it = e.find("weight"); it != e.end())
      t.weight = r.number(it->second, 1e-9, 1e9, "a weight > 0");
    if (auto it = e.find("max_slowdown"); it != e.end())
      t.max_slowdown = r.number(it->second, 1, 1e9, "a slowdown factor >= 1");
    if (auto it = e.find("class"); it != e.end()) {
      const std::string c = r.scalar(it->second, "guaranteed or best-effort");
      if (c == "guaranteed") {
        t.cls = TenantClass::Guaranteed;
      } else if (c == "best-effort" || c == "best_effort" || c == "besteffort") {
        t.cls = TenantClass::BestEffort;
      } else {
        r.fail(it->second.value,
               "key 'class': expected guaranteed or best-effort, got '" + c + "'");
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

Cluster read_nodes(const Reader& r, const Entry& list, const std::vector<Tenant>& tenants) {
  if (!list.value.IsSequence() || list.value.size() == 0)
    r.fail(list.value.Mark().is_null() ? list.key : list.value,
           "key 'nodes': expected a non-empty list of node groups");
  Cluster c;
  std::unordered_map<std::string, int> next_number;  // name prefix -> next k
  int group = 0;
  for (const YAML::Node& item : list.value) {
    const std::string what = "node group #" + std::to_string(++group);
    const auto e =
        r.entries(item, what, {"count", "gpus", "gpu_memory_gib", "gpu_type", "tenant", "name"});
    const auto count = r.integer(r.require(e, item, what, "count"), 1, 1'000'000, "a count >= 1");
    const auto gpus = r.integer(r.require(e, item, what, "gpus"), 1, kMaxGpusPerNode,
                                "a GPU count in 1.." + std::to_string(kMaxGpusPerNode));
    std::int64_t mem_mib = 24 * 1024;
    if (auto it = e.find("gpu_memory_gib"); it != e.end())
      mem_mib = std::llround(r.number(it->second, 1e-3, 1e6, "GiB > 0") * 1024);
    std::string type;
    if (auto it = e.find("gpu_type"); it != e.end())
      type = r.scalar(it->second, "a GPU model name");
    TenantId owner;
    std::string prefix = "node";
    if (auto it = e.find("tenant"); it != e.end()) {
      const std::string t = r.scalar(it->second, "a tenant name");
      for (const auto& ten : tenants)
        if (ten.name == t) owner = ten.id;
      if (!owner.valid())
        r.fail(it->second.value, "key 'tenant': '" + t + "' is not in the tenants list");
      prefix = t + "-n";
    }
    if (auto it = e.find("name"); it != e.end())
      prefix = r.scalar(it->second, "a node-name prefix");
    const std::size_t first = c.nodes.size();
    c.add_nodes(static_cast<int>(count), static_cast<int>(gpus), mem_mib, type, owner);
    int& k = next_number[prefix];
    for (std::size_t i = first; i < c.nodes.size(); ++i)
      c.nodes[i].name = prefix + std::to_string(k++);
  }
  std::unordered_map<std::string, std::size_t> names;
  for (const auto& n : c.nodes)
    if (!names.emplace(n.name, n.id.index()).second)
      r.fail(list.key, "key 'nodes': two nodes are named '" + n.name +
                           "'; give the node groups distinct 'name' prefixes");
  return c;
}

}  // namespace

ClusterSpec parse_cluster_yaml(const std::string& name, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const SourceLocation where = e.mark.is_null()
                                     ? SourceLocation{name}
                                     : SourceLocation{name, e.mark.line + 1, e.mark.column + 1};
    throw InputError(where, "invalid YAML: " + e.msg);
  }
  const Reader r(name);
  if (root.IsNull())
    throw InputError(SourceLocation{name}, "empty: expected 'nodes' and 'tenants'");
  const auto e = r.entries(root, "cluster file", {"nodes", "tenants"});
  ClusterSpec spec;
  spec.tenants = read_tenants(r, r.require(e, root, "cluster file", "tenants"));
  spec.cluster = read_nodes(r, r.require(e, root, "cluster file", "nodes"), spec.tenants);
  return spec;
}

ClusterSpec read_cluster_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path}, "cannot open cluster file for reading");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_cluster_yaml(path, buf.str());
}

void apply_cluster(Workload& w, const ClusterSpec& spec, const std::string& name) {
  std::vector<TenantId> remap(w.tenants.size());
  for (std::size_t i = 0; i < w.tenants.size(); ++i)
    for (const auto& t : spec.tenants)
      if (t.name == w.tenants[i].name) remap[i] = t.id;
  std::vector<std::size_t> missing_jobs(w.tenants.size(), 0);
  std::vector<const JobSpec*> example(w.tenants.size(), nullptr);
  for (const auto& j : w.jobs) {
    if (!j.tenant.valid() || j.tenant.index() >= w.tenants.size())
      throw InputError("job '" + j.name + "': unknown tenant");
    const auto t = j.tenant.index();
    if (remap[t].valid()) continue;
    if (missing_jobs[t]++ == 0) example[t] = &j;
  }
  std::string missing;
  for (std::size_t t = 0; t < w.tenants.size(); ++t)
    if (missing_jobs[t] > 0)
      missing += std::string(missing.empty() ? "" : "; ") + "tenant '" + w.tenants[t].name + "' (" +
                 std::to_string(missing_jobs[t]) + " jobs, e.g. job '" + example[t]->name + "')";
  if (!missing.empty())
    throw InputError(SourceLocation{name},
                     "the cluster file does not define " + missing + ": add them under 'tenants'");
  for (auto& j : w.jobs) j.tenant = remap[j.tenant.index()];
  w.tenants = spec.tenants;
  w.cluster = spec.cluster;
  std::int64_t quota = 0;
  for (const auto& t : w.tenants) quota += t.quota_gpus;
  w.notes.push_back("cluster from " + name + ": " + std::to_string(w.cluster.nodes.size()) +
                    " nodes, " + std::to_string(w.cluster.total_gpus()) + " GPUs, " +
                    std::to_string(w.tenants.size()) + " tenants");
  if (quota > w.cluster.total_gpus())
    w.notes.push_back("cluster from " + name + ": tenant quotas sum to " + std::to_string(quota) +
                      " GPUs, more than the cluster's " + std::to_string(w.cluster.total_gpus()));
}

}  // namespace ds
