#include "trace/cluster_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/checked.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "model/tenant_tree.hpp"
#include "trace/names.hpp"
#include "trace/trace_util.hpp"

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
        fail(key, what + ": unknown key " + quote_input(k) + " (valid keys: " + list + ")");
      }
      if (!out.emplace(k, Entry{key, it->second}).second)
        fail(key, what + ": key " + quote_input(k) + " appears twice");
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
  // A number within [lo, hi]; the message names `what` and the range.
  [[nodiscard]] std::int64_t integer(const Entry& e, std::int64_t lo, std::int64_t hi,
                                     const std::string& what) const {
    const std::string expected =
        what + " in " + range_text(static_cast<double>(lo), static_cast<double>(hi));
    const auto v = parse_int(scalar(e, expected));
    if (!v || *v < lo || *v > hi) bad(e, expected);
    return *v;
  }
  [[nodiscard]] double number(const Entry& e, double lo, double hi, const std::string& what) const {
    const std::string expected = what + " in " + range_text(lo, hi);
    const auto v = parse_double(scalar(e, expected));
    if (!v || !(*v >= lo && *v <= hi)) bad(e, expected);
    return *v;
  }
  // Seconds -> milliseconds, within 0..limits::kMaxInterval.
  [[nodiscard]] Time interval(const Entry& e, const std::string& what) const {
    const double s = number(e, 0, static_cast<double>(limits::kMaxInterval / kSecond), what);
    return *seconds_to_ms(s, 0, limits::kMaxInterval);
  }

 private:
  [[noreturn]] void bad(const Entry& e, const std::string& expected) const {
    const YAML::Node& where = e.value.Mark().is_null() ? e.key : e.value;
    const std::string got = e.value.IsScalar() ? quote_input(e.value.Scalar())
                            : e.value.IsNull() ? std::string("nothing")
                                               : std::string("a list or mapping");
    fail(where, "key " + quote_input(e.key.Scalar()) + ": expected " + expected + ", got " + got);
  }

  std::string file_;
};

// " (did you mean 'teamA'?)" when `name` folds like a defined tenant's name, else "".
std::string did_you_mean(const std::string& name, const std::vector<Tenant>& tenants) {
  const auto key = fold_name(name);
  for (const auto& t : tenants)
    if (key && fold_name(t.name) == key) return " (did you mean " + quote_input(t.name) + "?)";
  return "";
}

// Sets each tenant's parent from the names read (a parent may come later in the list).
void read_parents(const Reader& r, std::vector<Tenant>& out,
                  const std::vector<std::pair<std::size_t, Entry>>& parents) {
  std::unordered_map<std::string, TenantId> ids;
  for (const auto& t : out) ids.emplace(t.name, t.id);
  for (const auto& [i, e] : parents) {
    const std::string p = r.scalar(e, "a tenant name");
    const auto it = ids.find(p);
    if (it == ids.end())
      r.fail(e.value, "key 'parent': " + quote_input(p) + " is not in the tenants list" +
                          did_you_mean(p, out));
    if (it->second == out[i].id)
      r.fail(e.value, "key 'parent': tenant " + quote_input(p) + " cannot be its own parent");
    out[i].parent = it->second;
  }
  try {
    (void)check_tenant_tree(out, -1);
  } catch (const InputError& err) {
    r.fail(parents.front().second.value, err.what());
  }
}

std::vector<Tenant> read_tenants(const Reader& r, const Entry& list) {
  if (!list.value.IsSequence() || list.value.size() == 0)
    r.fail(list.value.Mark().is_null() ? list.key : list.value,
           "key 'tenants': expected a non-empty list of tenants");
  std::vector<Tenant> out;
  // Folded name -> the tenant's name (a hash map: a file may list many tenants).
  std::unordered_map<std::string, std::string> names;
  std::vector<std::pair<std::size_t, Entry>> parents;
  std::vector<std::pair<std::size_t, YAML::Node>> no_quota;
  std::int64_t quotas = 0;
  for (const YAML::Node& item : list.value) {
    const std::string what = "tenant #" + std::to_string(out.size() + 1);
    if (out.size() >= limits::kMaxTenants)
      r.fail(item, what + ": more than " + std::to_string(limits::kMaxTenants) + " tenants");
    const auto e = r.entries(item, what,
                             {"name", "quota_gpus", "parent", "slo_queue_s", "class", "weight",
                              "checkpoint_interval_s", "max_slowdown"});
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(out.size()));
    const Entry& name = r.require(e, item, what, "name");
    t.name = r.scalar(name, "a tenant name");
    if (t.name.empty()) r.fail(name.value, "key 'name': expected a non-empty tenant name");
    const auto key = fold_name(t.name);
    if (!key) r.fail(name.value, "key 'name': " + quote_input(t.name) + " is not valid UTF-8");
    if (has_outer_space(t.name))
      r.fail(name.value, "key 'name': " + quote_input(t.name) +
                             " starts or ends with white space (a trace's names would not match "
                             "it as they look)");
    names.reserve(out.size() + 1);
    if (auto [it, fresh] = names.emplace(*key, t.name); !fresh)
      r.fail(name.value,
             "key 'name': tenant " + quote_input(t.name) +
                 (it->second == t.name ? std::string(" is defined twice")
                                       : " and tenant " + quote_input(it->second) +
                                             " differ only in case or Unicode form; a reader takes "
                                             "them for one: give them distinct names"));
    if (auto it = e.find("parent"); it != e.end()) parents.emplace_back(out.size(), it->second);
    // A sub-tenant may leave its quota out: it shares its parent's (model/tenant_tree.hpp).
    if (auto it = e.find("quota_gpus"); it != e.end()) {
      t.quota_gpus =
          static_cast<int>(r.integer(it->second, 0, limits::kMaxClusterGpus, "a GPU count"));
      t.tree_quota_gpus = t.quota_gpus;
      quotas += t.quota_gpus;
      if (quotas > limits::kMaxQuotaTotal)
        r.fail(it->second.value, "key 'quota_gpus': the tenants' quotas add up to more than " +
                                     std::to_string(limits::kMaxQuotaTotal) + " GPUs");
    } else {
      no_quota.emplace_back(out.size(), item);
    }
    if (auto it = e.find("slo_queue_s"); it != e.end())
      t.slo_queue = r.interval(it->second, "seconds");
    if (auto it = e.find("checkpoint_interval_s"); it != e.end())
      t.checkpoint_interval = r.interval(it->second, "seconds");
    if (auto it = e.find("weight"); it != e.end())
      t.weight = r.number(it->second, 1e-9, 1e9, "a weight");
    if (auto it = e.find("max_slowdown"); it != e.end())
      t.max_slowdown = r.number(it->second, 1, 1e9, "a slowdown factor");
    if (auto it = e.find("class"); it != e.end()) {
      const std::string c = r.scalar(it->second, "guaranteed or best-effort");
      if (c == "guaranteed") {
        t.cls = TenantClass::Guaranteed;
      } else if (c == "best-effort" || c == "best_effort" || c == "besteffort") {
        t.cls = TenantClass::BestEffort;
      } else {
        r.fail(it->second.value,
               "key 'class': expected guaranteed or best-effort, got " + quote_input(c));
      }
    }
    out.push_back(std::move(t));
  }
  if (!parents.empty()) read_parents(r, out, parents);
  for (const auto& [i, item] : no_quota)
    if (!out[i].parent.valid())
      r.fail(item, "tenant #" + std::to_string(i + 1) +
                       ": missing required key 'quota_gpus' (only a tenant with a 'parent' may "
                       "leave it out)");
  return out;
}

// `gpu_types: [{name: A100, memory_gib: 80}, ...]`: the GPU models of a heterogeneous
// cluster with their memory, in MiB by name.
std::map<std::string, std::int64_t> read_gpu_types(const Reader& r, const Entry& list) {
  if (!list.value.IsSequence() || list.value.size() == 0)
    r.fail(list.value.Mark().is_null() ? list.key : list.value,
           "key 'gpu_types': expected a non-empty list of GPU models");
  std::map<std::string, std::int64_t> out;
  int k = 0;
  for (const YAML::Node& item : list.value) {
    const std::string what = "gpu type #" + std::to_string(++k);
    const auto e = r.entries(item, what, {"name", "memory_gib"});
    const Entry& name = r.require(e, item, what, "name");
    const std::string n = r.scalar(name, "a GPU model name");
    if (n.empty()) r.fail(name.value, "key 'name': expected a non-empty GPU model name");
    const double gib = r.number(r.require(e, item, what, "memory_gib"), 1.0 / 1024,
                                static_cast<double>(limits::kMaxGpuMemoryMib) / 1024, "GiB");
    if (!out.emplace(n, std::max<std::int64_t>(1, std::llround(gib * 1024))).second)
      r.fail(name.value, "key 'name': GPU model " + quote_input(n) + " is listed twice");
  }
  return out;
}

// A node group's GPU memory and model: gpu_memory_gib, else its gpu_type's memory_gib in
// `types`, else the default; with `types`, a gpu_type must be one of them and agree with it.
std::pair<std::int64_t, std::string> group_gpus(const Reader& r,
                                                const std::map<std::string, Entry>& e,
                                                const std::map<std::string, std::int64_t>& types) {
  std::string type;
  auto t = e.find("gpu_type");
  if (t != e.end()) type = r.scalar(t->second, "a GPU model name");
  const auto known = types.find(type);
  if (!types.empty() && known == types.end()) {
    std::string list;
    for (const auto& [name, mib] : types) list += (list.empty() ? "" : ", ") + name;
    r.fail(t != e.end() ? t->second.value : e.begin()->second.key,
           "key 'gpu_type': " + (type.empty() ? std::string("missing") : quote_input(type)) +
               " is not in gpu_types (" + list + ")");
  }
  std::int64_t mem_mib = known != types.end() ? known->second : kDefaultGpuMemoryMib;
  if (auto it = e.find("gpu_memory_gib"); it != e.end()) {
    const double gib = r.number(it->second, 1.0 / 1024,
                                static_cast<double>(limits::kMaxGpuMemoryMib) / 1024, "GiB");
    const std::int64_t mib = std::max<std::int64_t>(1, std::llround(gib * 1024));
    if (known != types.end() && mib != known->second)
      r.fail(it->second.value, "key 'gpu_memory_gib': " + quote_input(it->second.value.Scalar()) +
                                   " GiB differs from gpu_types' memory_gib of " +
                                   quote_input(type));
    mem_mib = mib;
  }
  return {mem_mib, type};
}

Cluster read_nodes(const Reader& r, const Entry& list, const std::vector<Tenant>& tenants,
                   const std::map<std::string, std::int64_t>& types) {
  if (!list.value.IsSequence() || list.value.size() == 0)
    r.fail(list.value.Mark().is_null() ? list.key : list.value,
           "key 'nodes': expected a non-empty list of node groups");
  Cluster c;
  NodeTally tally;
  std::unordered_map<std::string, int> next_number;  // name prefix -> next k
  int group = 0;
  for (const YAML::Node& item : list.value) {
    const std::string what = "node group #" + std::to_string(++group);
    const auto e =
        r.entries(item, what, {"count", "gpus", "gpu_memory_gib", "gpu_type", "tenant", "name"});
    const Entry& count_entry = r.require(e, item, what, "count");
    const auto count = r.integer(count_entry, 1, limits::kMaxNodes, "a node count");
    const auto gpus =
        r.integer(r.require(e, item, what, "gpus"), 1, kMaxGpusPerNode, "a GPU count");
    try {
      tally.add(r.at(count_entry.value), count, gpus);
    } catch (const InputError& err) {
      throw InputError(std::string(err.what()) + " (" + what + ")");
    }
    const auto [mem_mib, type] = group_gpus(r, e, types);
    TenantId owner;
    std::string prefix = "node";
    if (auto it = e.find("tenant"); it != e.end()) {
      const std::string t = r.scalar(it->second, "a tenant name");
      for (const auto& ten : tenants)
        if (ten.name == t) owner = ten.id;
      if (!owner.valid())
        r.fail(it->second.value, "key 'tenant': " + quote_input(t) + " is not in the tenants list" +
                                     did_you_mean(t, tenants));
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
      r.fail(list.key, "key 'nodes': two nodes are named " + quote_input(n.name) +
                           "; give the node groups distinct 'name' prefixes");
  return c;
}

// The line (1-based) after a "---" marker that follows content, or 0: where a second
// document starts. Blank lines, comments and directives are not content.
int second_document_line(const std::string& text) {
  bool content = false;
  int line = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + at, end - at);
    ++line;
    at = end + 1;
    const bool marker =
        l.substr(0, 3) == "---" && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker) {
      if (content) return line + 1;
      continue;
    }
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && l[first] != '#' && !(first == 0 && l[0] == '%'))
      content = true;
  }
  return 0;
}

}  // namespace

ClusterSpec parse_cluster_yaml(const std::string& name, const std::string& text) {
  if (text.size() > limits::kMaxYamlBytes)
    throw InputError(SourceLocation{name}, "larger than " +
                                               std::to_string(limits::kMaxYamlBytes >> 20) +
                                               " MiB, the most a cluster file may hold");
  YAML::Node root;
  try {
    // A second document ("---" and more keys) would else be ignored, with whatever the user
    // meant by it. Found by its marker line, not by YAML::LoadAll: yaml-cpp 0.7's LoadAll
    // never returns on some malformed inputs (fuzz_cluster_file), its Load does.
    if (const int line = second_document_line(text); line > 0)
      throw InputError(SourceLocation{name, line, 1},
                       "a second YAML document (after '---'): a cluster file is one document; "
                       "put every node group and tenant under one 'nodes:' and one 'tenants:'");
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
  const auto e = r.entries(root, "cluster file", {"nodes", "tenants", "gpu_types"});
  ClusterSpec spec;
  spec.tenants = read_tenants(r, r.require(e, root, "cluster file", "tenants"));
  const auto types = e.contains("gpu_types") ? read_gpu_types(r, e.at("gpu_types"))
                                             : std::map<std::string, std::int64_t>{};
  spec.cluster = read_nodes(r, r.require(e, root, "cluster file", "nodes"), spec.tenants, types);
  for (auto& p : resolve_tenant_tree(spec.tenants, spec.cluster.total_gpus()))
    spec.problems.push_back(std::move(p));
  return spec;
}

ClusterSpec read_cluster_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path}, "cannot open cluster file for reading");
  std::string text(limits::kMaxYamlBytes + 1, '\0');  // one byte more: too large is an error
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(SourceLocation{path}, "read error");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_cluster_yaml(path, text);
}

void apply_cluster(Workload& w, const ClusterSpec& spec, const std::string& name) {
  std::unordered_map<std::string, TenantId> by_name;
  for (const auto& t : spec.tenants) by_name.emplace(t.name, t.id);
  std::vector<TenantId> remap(w.tenants.size());
  for (std::size_t i = 0; i < w.tenants.size(); ++i)
    if (const auto it = by_name.find(w.tenants[i].name); it != by_name.end()) remap[i] = it->second;
  std::vector<std::size_t> missing_jobs(w.tenants.size(), 0);
  std::vector<const JobSpec*> example(w.tenants.size(), nullptr);
  for (const auto& j : w.jobs) {
    if (!j.tenant.valid() || j.tenant.index() >= w.tenants.size())
      throw InputError("job " + quote_input(j.name) + ": unknown tenant");
    const auto t = j.tenant.index();
    if (remap[t].valid()) continue;
    if (missing_jobs[t]++ == 0) example[t] = &j;
  }
  std::string missing;
  std::size_t named = 0, more = 0;
  for (std::size_t t = 0; t < w.tenants.size(); ++t) {
    if (missing_jobs[t] == 0) continue;
    if (named++ == 5) {  // a few examples, then a count: the message stays short
      --named;
      ++more;
      continue;
    }
    missing += std::string(missing.empty() ? "" : "; ") + "tenant " +
               quote_input(w.tenants[t].name) + did_you_mean(w.tenants[t].name, spec.tenants) +
               " (" + std::to_string(missing_jobs[t]) + " jobs, e.g. job " +
               quote_input(example[t]->name) + ")";
  }
  if (more > 0) missing += "; and " + std::to_string(more) + " more tenants";
  if (!missing.empty())
    throw InputError(SourceLocation{name},
                     "the cluster file does not define " + missing + ": add them under 'tenants'");
  for (auto& j : w.jobs) j.tenant = remap[j.tenant.index()];
  w.tenants = spec.tenants;
  w.cluster = spec.cluster;
  w.notes.push_back("cluster from " + name + ": " + std::to_string(w.cluster.nodes.size()) +
                    " nodes, " + std::to_string(w.cluster.total_gpus()) + " GPUs, " +
                    std::to_string(w.tenants.size()) + " tenants");
  for (const auto& p : spec.problems) w.notes.push_back("cluster from " + name + ": " + p);
}

}  // namespace ds
