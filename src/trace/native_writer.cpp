#include "trace/native_writer.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

#include "core/csv.hpp"

namespace ds {
namespace {

std::string number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back
  return std::string(buf, r.ptr);
}

struct Column {
  const char* name;
  std::function<bool(const JobSpec&)> present;  // does this job have a value?
  std::function<std::string(const JobSpec&, std::size_t)> text;
};

}  // namespace

std::string seconds_text(Time ms) {
  const std::lldiv_t d = std::lldiv(std::llabs(ms), 1000);
  char buf[40];
  if (d.rem == 0) {
    std::snprintf(buf, sizeof buf, "%s%lld", ms < 0 ? "-" : "", d.quot);
  } else {
    std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ms < 0 ? "-" : "", d.quot, d.rem);
    std::string s(buf);
    while (s.back() == '0') s.pop_back();
    return s;
  }
  return buf;
}

std::string native_trace_csv(const Workload& w, const std::vector<ExtraColumn>& extra) {
  auto profile = [&](const JobSpec& j) -> const Profile* {
    return j.profile >= 0 ? &w.profiles[static_cast<std::size_t>(j.profile)] : nullptr;
  };
  const std::vector<Column> columns = {
      {"job_id", {}, [](const JobSpec& j, std::size_t) { return j.name; }},
      {"tenant",
       {},
       [&](const JobSpec& j, std::size_t) { return w.tenants[j.tenant.index()].name; }},
      {"submit_s", {}, [](const JobSpec& j, std::size_t) { return seconds_text(j.submit); }},
      {"duration_s",
       {},
       [&](const JobSpec&, std::size_t i) { return seconds_text(w.truth[i].work); }},
      {"gpus", {}, [](const JobSpec& j, std::size_t) { return std::to_string(j.gpus); }},
      {"user", [](const JobSpec& j) { return j.user.valid(); },
       [&](const JobSpec& j, std::size_t) {
         return j.user.valid() ? w.users[j.user.index()] : "";
       }},
      {"state", {}, [&](const JobSpec&, std::size_t i) { return to_string(w.truth[i].state); }},
      {"gpu_type", [](const JobSpec& j) { return !j.gpu_type.empty(); },
       [](const JobSpec& j, std::size_t) { return j.gpu_type; }},
      {"gpu_milli", [](const JobSpec& j) { return j.gpu_milli != kMilliPerGpu; },
       [](const JobSpec& j, std::size_t) { return std::to_string(j.gpu_milli); }},
      {"qos", [](const JobSpec& j) { return j.qos != Qos::Unspecified; },
       [](const JobSpec& j, std::size_t) { return std::string(to_string(j.qos)); }},
      {"gpu_util", [](const JobSpec& j) { return j.gpu_util >= 0; },
       [](const JobSpec& j, std::size_t) {
         return j.gpu_util >= 0 ? number_text(j.gpu_util) : "";
       }},
      {"gmem_mib", [](const JobSpec& j) { return j.gpu_memory_mib > 0; },
       [](const JobSpec& j, std::size_t) {
         return j.gpu_memory_mib > 0 ? number_text(j.gpu_memory_mib) : "";
       }},
      {"model", [&](const JobSpec& j) { return profile(j) != nullptr; },
       [&](const JobSpec& j, std::size_t) { return profile(j) ? profile(j)->model : ""; }},
      {"dataset", [&](const JobSpec& j) { return profile(j) != nullptr; },
       [&](const JobSpec& j, std::size_t) { return profile(j) ? profile(j)->dataset : ""; }},
      {"batch_size", [&](const JobSpec& j) { return profile(j) != nullptr; },
       [&](const JobSpec& j, std::size_t) {
         return profile(j) ? std::to_string(profile(j)->batch_size) : "";
       }},
      {"amp", [&](const JobSpec& j) { return profile(j) != nullptr; },
       [&](const JobSpec& j, std::size_t) {
         return profile(j) ? std::string(profile(j)->amp ? "1" : "0") : "";
       }},
  };
  std::vector<const Column*> used;
  for (const auto& c : columns) {
    bool any = !c.present;
    for (std::size_t i = 0; !any && i < w.jobs.size(); ++i) any = c.present(w.jobs[i]);
    if (any) used.push_back(&c);
  }
  std::string out;
  std::vector<std::string> row;
  for (const Column* c : used) row.emplace_back(c->name);
  for (const auto& e : extra) row.push_back(e.name);
  append_csv_row(out, row);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    row.clear();
    for (const Column* c : used) row.push_back(c->text(w.jobs[i], i));
    for (const auto& e : extra) row.push_back(i < e.values.size() ? e.values[i] : "");
    append_csv_row(out, row);
  }
  return out;
}

std::string cluster_file_yaml(const Workload& w, const std::string& comment) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  const auto& nodes = w.cluster.nodes;
  // gpu_types when every node has a model and each model one memory size.
  std::map<std::string, std::int64_t> types;
  bool one_memory = !nodes.empty();
  for (const Node& n : nodes) {
    const auto [it, fresh] = types.emplace(n.gpu_type, n.gpu_memory_mib);
    one_memory = one_memory && !n.gpu_type.empty() && (fresh || it->second == n.gpu_memory_mib);
  }
  if (one_memory) {
    y << YAML::Key << "gpu_types" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, mib] : types)
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted
        << name << YAML::Key << "memory_gib" << YAML::Value
        << number_text(static_cast<double>(mib) / 1024) << YAML::EndMap;
    y << YAML::EndSeq;
  }
  y << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < nodes.size();) {
    const Node& n = nodes[i];
    std::size_t k = i + 1;
    while (k < nodes.size() && nodes[k].gpus == n.gpus &&
           nodes[k].gpu_memory_mib == n.gpu_memory_mib && nodes[k].gpu_type == n.gpu_type &&
           nodes[k].owner == n.owner)
      ++k;
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "count" << YAML::Value << (k - i) << YAML::Key
      << "gpus" << YAML::Value << n.gpus << YAML::Key << "gpu_memory_gib" << YAML::Value
      << number_text(static_cast<double>(n.gpu_memory_mib) / 1024);
    if (!n.gpu_type.empty())
      y << YAML::Key << "gpu_type" << YAML::Value << YAML::DoubleQuoted << n.gpu_type;
    if (n.owner.valid())
      y << YAML::Key << "tenant" << YAML::Value << YAML::DoubleQuoted
        << w.tenants[n.owner.index()].name;
    y << YAML::EndMap;
    std::string names;
    for (std::size_t m = i; m < k; ++m) names += (names.empty() ? "" : ", ") + nodes[m].name;
    y << YAML::Comment(names.size() > 200 ? names.substr(0, 200) + "..." : names);
    i = k;
  }
  y << YAML::EndSeq << YAML::Key << "tenants" << YAML::Value << YAML::BeginSeq;
  for (const auto& t : w.tenants) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted
      << t.name << YAML::Key << "quota_gpus" << YAML::Value << t.quota_gpus << YAML::Key << "class"
      << YAML::Value << to_string(t.cls) << YAML::Key << "weight" << YAML::Value
      << number_text(t.weight) << YAML::Key << "slo_queue_s" << YAML::Value
      << seconds_text(t.slo_queue) << YAML::Key << "checkpoint_interval_s" << YAML::Value
      << seconds_text(t.checkpoint_interval) << YAML::Key << "max_slowdown" << YAML::Value
      << number_text(t.max_slowdown) << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  std::string head;
  std::size_t at = 0;
  while (at < comment.size()) {
    const auto nl = comment.find('\n', at);
    head += "# " + comment.substr(at, nl == std::string::npos ? std::string::npos : nl - at) + "\n";
    at = nl == std::string::npos ? comment.size() : nl + 1;
  }
  return head + y.c_str() + "\n";
}

}  // namespace ds
