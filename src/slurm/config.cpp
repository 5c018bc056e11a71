#include "slurm/config.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

#include "core/error.hpp"

namespace ds::slurm {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_keys(const YAML::Node& n, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : n) {
    const auto k = kv.first.as<std::string>();
    if (!known.count(k)) throw InputError(where + ": unknown key '" + k + "'");
  }
}

}  // namespace

ControllerConfig load_controller_config(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const std::exception& e) {
    throw InputError(path + ": " + e.what());
  }
  ControllerConfig c;
  c.source = path;
  try {
    check_keys(root,
               {"partition", "policy", "options", "time_scale", "poll_ms", "metrics", "journal",
                "gpu_memory_mib", "tenants"},
               path);
    if (root["partition"]) c.partition = root["partition"].as<std::string>();
    if (root["policy"]) c.policy = root["policy"].as<std::string>();
    if (root["options"])
      for (const auto& kv : root["options"])
        c.options[kv.first.as<std::string>()] = kv.second.as<std::string>();
    if (root["time_scale"]) c.time_scale = root["time_scale"].as<double>();
    if (root["poll_ms"]) c.poll_ms = root["poll_ms"].as<int>();
    if (root["metrics"]) c.metrics = root["metrics"].as<std::string>();
    if (root["journal"]) c.journal = root["journal"].as<std::string>();
    if (root["gpu_memory_mib"]) c.gpu_memory_mib = root["gpu_memory_mib"].as<std::int64_t>();
    if (c.time_scale <= 0) throw InputError(path + ": time_scale must be > 0");
    if (c.poll_ms < 10) throw InputError(path + ": poll_ms must be >= 10");
    if (!root["tenants"] || !root["tenants"].IsSequence() || root["tenants"].size() == 0)
      throw InputError(path + ": 'tenants' must list at least one tenant");
    std::set<std::string> accounts;
    for (std::size_t i = 0; i < root["tenants"].size(); ++i) {
      const YAML::Node t = root["tenants"][i];
      const std::string where = path + ": tenants[" + std::to_string(i) + "]";
      check_keys(t,
                 {"name", "account", "quota_gpus", "slo_queue_s", "max_slowdown", "class", "weight",
                  "checkpoint_interval_s", "trace"},
                 where);
      if (!t["name"]) throw InputError(where + ": missing 'name'");
      TenantConfig tc;
      tc.tenant.id = TenantId(static_cast<std::uint32_t>(i));
      tc.tenant.name = t["name"].as<std::string>();
      tc.account = lower(t["account"] ? t["account"].as<std::string>() : tc.tenant.name);
      if (t["quota_gpus"]) tc.tenant.quota_gpus = t["quota_gpus"].as<int>();
      if (t["slo_queue_s"])
        tc.tenant.slo_queue = static_cast<Time>(t["slo_queue_s"].as<double>() * 1000);
      if (t["max_slowdown"]) tc.tenant.max_slowdown = t["max_slowdown"].as<double>();
      if (t["weight"]) tc.tenant.weight = t["weight"].as<double>();
      if (t["checkpoint_interval_s"])
        tc.tenant.checkpoint_interval =
            static_cast<Time>(t["checkpoint_interval_s"].as<double>() * 1000);
      if (t["class"]) {
        const auto cls = t["class"].as<std::string>();
        if (cls == "guaranteed")
          tc.tenant.cls = TenantClass::Guaranteed;
        else if (cls == "best-effort")
          tc.tenant.cls = TenantClass::BestEffort;
        else
          throw InputError(where + ": class must be guaranteed or best-effort, not '" + cls + "'");
      }
      if (t["trace"]) tc.trace_tenant = t["trace"].as<std::string>();
      if (tc.tenant.quota_gpus < 0) throw InputError(where + ": quota_gpus must be >= 0");
      if (!accounts.insert(tc.account).second)
        throw InputError(where + ": account '" + tc.account + "' mapped twice");
      c.tenants.push_back(std::move(tc));
    }
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": " + e.what());
  }
  return c;
}

}  // namespace ds::slurm
