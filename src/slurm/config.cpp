#include "slurm/config.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

#include "core/error.hpp"

namespace ds::slurm {
namespace {

void check_keys(const YAML::Node& n, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : n) {
    const auto k = kv.first.as<std::string>();
    if (!known.count(k)) throw InputError(where + ": unknown key '" + k + "'");
  }
}

// DeepShare's own per-tenant knobs (both sources).
void read_knobs(const YAML::Node& t, Tenant& tenant, const std::string& where) {
  if (t["slo_queue_s"]) {
    const double v = t["slo_queue_s"].as<double>();
    if (v < 0) throw InputError(where + ": slo_queue_s must be >= 0");
    tenant.slo_queue = static_cast<Time>(v * 1000);
  }
  if (t["max_slowdown"]) {
    tenant.max_slowdown = t["max_slowdown"].as<double>();
    if (tenant.max_slowdown < 1) throw InputError(where + ": max_slowdown must be >= 1");
  }
  if (t["checkpoint_interval_s"]) {
    const double v = t["checkpoint_interval_s"].as<double>();
    if (v < 0) throw InputError(where + ": checkpoint_interval_s must be >= 0");
    tenant.checkpoint_interval = static_cast<Time>(v * 1000);
  }
}

}  // namespace

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Tenant ControllerConfig::knobs_for(const std::string& account) const {
  for (const auto& t : tenants)
    if (t.account == account) return t.tenant;
  return tenant_defaults;
}

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
                "gpu_memory_mib", "start_margin_s", "tenant_source", "quota_tres",
                "tenants_refresh_s", "tenant_defaults", "tenants"},
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
    if (root["start_margin_s"]) c.start_margin_s = root["start_margin_s"].as<double>();
    if (root["quota_tres"]) c.quota_tres = root["quota_tres"].as<std::string>();
    if (root["tenants_refresh_s"]) c.tenants_refresh_s = root["tenants_refresh_s"].as<double>();
    if (root["tenant_source"]) {
      const auto s = root["tenant_source"].as<std::string>();
      if (s == "slurm")
        c.tenant_source = TenantSource::Slurm;
      else if (s == "config")
        c.tenant_source = TenantSource::Config;
      else
        throw InputError(path + ": tenant_source must be slurm or config, not '" + s + "'");
    }
    if (c.time_scale <= 0) throw InputError(path + ": time_scale must be > 0");
    if (c.poll_ms < 10) throw InputError(path + ": poll_ms must be >= 10");
    if (c.gpu_memory_mib <= 0) throw InputError(path + ": gpu_memory_mib must be > 0");
    if (c.start_margin_s < 0 || c.start_margin_s > 86400)
      throw InputError(path + ": start_margin_s must be 0..86400");
    if (c.tenants_refresh_s < 0.1) throw InputError(path + ": tenants_refresh_s must be >= 0.1");
    if (root["tenant_defaults"]) {
      const std::string where = path + ": tenant_defaults";
      check_keys(root["tenant_defaults"], {"slo_queue_s", "max_slowdown", "checkpoint_interval_s"},
                 where);
      read_knobs(root["tenant_defaults"], c.tenant_defaults, where);
    }
    const bool slurm = c.tenant_source == TenantSource::Slurm;
    if (!slurm &&
        (!root["tenants"] || !root["tenants"].IsSequence() || root["tenants"].size() == 0))
      throw InputError(path + ": 'tenants' must list at least one tenant (tenant_source: config)");
    std::set<std::string> accounts;
    const YAML::Node list = root["tenants"];
    for (std::size_t i = 0; list && i < list.size(); ++i) {
      const YAML::Node t = list[i];
      const std::string where = path + ": tenants[" + std::to_string(i) + "]";
      if (slurm) {
        check_keys(t, {"account", "slo_queue_s", "max_slowdown", "checkpoint_interval_s"},
                   where +
                       " (tenant_source: slurm: quotas, classes and weights come from Slurm "
                       "accounting)");
        if (!t["account"]) throw InputError(where + ": missing 'account'");
      } else {
        check_keys(t,
                   {"name", "account", "quota_gpus", "slo_queue_s", "max_slowdown", "class",
                    "weight", "checkpoint_interval_s", "trace"},
                   where);
        if (!t["name"]) throw InputError(where + ": missing 'name'");
      }
      TenantConfig tc;
      tc.tenant = c.tenant_defaults;
      tc.tenant.id = TenantId(static_cast<std::uint32_t>(i));
      tc.tenant.name = t["name"] ? t["name"].as<std::string>() : t["account"].as<std::string>();
      tc.account = lower(t["account"] ? t["account"].as<std::string>() : tc.tenant.name);
      read_knobs(t, tc.tenant, where);
      if (t["quota_gpus"]) tc.tenant.quota_gpus = t["quota_gpus"].as<int>();
      if (t["weight"]) tc.tenant.weight = t["weight"].as<double>();
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
      if (tc.tenant.weight <= 0) throw InputError(where + ": weight must be > 0");
      if (!accounts.insert(tc.account).second)
        throw InputError(where + ": account '" + tc.account + "' listed twice");
      c.tenants.push_back(std::move(tc));
    }
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": " + e.what());
  }
  return c;
}

}  // namespace ds::slurm
