#include "slurm/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {
namespace {

void check_keys(const YAML::Node& n, const std::set<std::string>& known, const std::string& where) {
  if (!n.IsMap()) throw InputError(where + ": expected a mapping of keys");
  for (const auto& kv : n) {
    const auto k = kv.first.as<std::string>();
    if (!known.count(k)) throw InputError(where + ": unknown key '" + k + "'");
  }
}

// A number in [lo, hi] (NaN and infinities refused: they would overflow a time).
double number(const YAML::Node& v, const std::string& where, const char* key, double lo,
              double hi) {
  const double x = v.as<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    char range[64];
    std::snprintf(range, sizeof range, "%g..%g", lo, hi);
    throw InputError(where + ": " + key + " must be in " + range + ", not '" + v.as<std::string>() +
                     "'");
  }
  return x;
}

// A duration in seconds, as milliseconds (at most 100 years).
Time seconds_of(const YAML::Node& v, const std::string& where, const char* key) {
  return static_cast<Time>(std::llround(number(v, where, key, 0, 100.0 * 365 * 86400) * 1000));
}

// DeepShare's own per-tenant knobs (both sources).
void read_knobs(const YAML::Node& t, Tenant& tenant, const std::string& where) {
  if (t["slo_queue_s"]) tenant.slo_queue = seconds_of(t["slo_queue_s"], where, "slo_queue_s");
  if (t["max_slowdown"])
    tenant.max_slowdown = number(t["max_slowdown"], where, "max_slowdown", 1, 1e6);
  if (t["checkpoint_interval_s"])
    tenant.checkpoint_interval =
        seconds_of(t["checkpoint_interval_s"], where, "checkpoint_interval_s");
}

// `gpu_models: {a100: 81920, ...}`: model names as the gate writes them, memory per GPU.
void read_gpu_models(const YAML::Node& m, ControllerConfig& c, const std::string& path) {
  const std::string where = path + ": gpu_models";
  if (!m.IsMap()) throw InputError(where + ": expected a mapping of model: memory MiB per GPU");
  for (const auto& kv : m) {
    const auto name = kv.first.as<std::string>();
    if (!is_gpu_model(name))
      throw InputError(where + ": '" + name +
                       "' is not a model name (letters, digits, '.', '_', '-'; g0..gN name GPU "
                       "indices)");
    c.gpu_models[name] = static_cast<std::int64_t>(
        number(kv.second, where, ("memory of " + name).c_str(), 1, 1 << 30));
  }
}

// The controller's own keys (everything but the tenants).
void read_settings(const YAML::Node& root, ControllerConfig& c, const std::string& path) {
  check_keys(root,
             {"partition", "policy", "options", "time_scale", "poll_ms", "metrics", "journal",
              "state_dir", "gpu_memory_mib", "gpu_models", "start_margin_s", "tenant_source",
              "quota_tres", "tenants_refresh_s", "eviction_grace_s", "tenant_defaults", "tenants"},
             path);
  if (root["partition"]) c.partition = root["partition"].as<std::string>();
  if (root["policy"]) c.policy = root["policy"].as<std::string>();
  if (root["options"])
    for (const auto& kv : root["options"])
      c.options[kv.first.as<std::string>()] = kv.second.as<std::string>();
  if (root["time_scale"]) c.time_scale = number(root["time_scale"], path, "time_scale", 1e-6, 1e6);
  if (root["poll_ms"])
    c.poll_ms = static_cast<int>(number(root["poll_ms"], path, "poll_ms", 10, 3.6e6));
  if (root["metrics"]) c.metrics = root["metrics"].as<std::string>();
  if (root["journal"]) c.journal = root["journal"].as<std::string>();
  if (root["state_dir"]) c.state_dir = root["state_dir"].as<std::string>();
  if (root["gpu_memory_mib"])
    c.gpu_memory_mib = static_cast<std::int64_t>(
        number(root["gpu_memory_mib"], path, "gpu_memory_mib", 1, 1 << 30));
  if (root["gpu_models"]) read_gpu_models(root["gpu_models"], c, path);
  if (root["start_margin_s"])
    c.start_margin_s = number(root["start_margin_s"], path, "start_margin_s", 0, 86400);
  if (root["quota_tres"]) c.quota_tres = root["quota_tres"].as<std::string>();
  if (root["tenants_refresh_s"])
    c.tenants_refresh_s = number(root["tenants_refresh_s"], path, "tenants_refresh_s", 0.1, 86400);
  if (root["eviction_grace_s"])
    c.eviction_grace_s = static_cast<std::int64_t>(
        number(root["eviction_grace_s"], path, "eviction_grace_s", 0, 86400));
  if (root["tenant_source"]) {
    const auto s = root["tenant_source"].as<std::string>();
    if (s == "slurm")
      c.tenant_source = TenantSource::Slurm;
    else if (s == "config")
      c.tenant_source = TenantSource::Config;
    else
      throw InputError(path + ": tenant_source must be slurm or config, not '" + s + "'");
  }
  if (root["tenant_defaults"]) {
    const std::string where = path + ": tenant_defaults";
    check_keys(root["tenant_defaults"], {"slo_queue_s", "max_slowdown", "checkpoint_interval_s"},
               where);
    read_knobs(root["tenant_defaults"], c.tenant_defaults, where);
  }
}

// One entry of `tenants`: per-account knobs (tenant_source: slurm) or the whole tenant.
TenantConfig read_tenant(const YAML::Node& t, const ControllerConfig& c, std::size_t i,
                         const std::string& path) {
  const std::string where = path + ": tenants[" + std::to_string(i) + "]";
  if (c.tenant_source == TenantSource::Slurm) {
    check_keys(t, {"account", "slo_queue_s", "max_slowdown", "checkpoint_interval_s"},
               where +
                   " (tenant_source: slurm: quotas, classes and weights come from Slurm "
                   "accounting)");
    if (!t["account"]) throw InputError(where + ": missing 'account'");
  } else {
    check_keys(t,
               {"name", "account", "quota_gpus", "slo_queue_s", "max_slowdown", "class", "weight",
                "checkpoint_interval_s", "trace", "eviction_grace_s"},
               where);
    if (!t["name"]) throw InputError(where + ": missing 'name'");
  }
  TenantConfig tc;
  tc.tenant = c.tenant_defaults;
  tc.tenant.id = TenantId(static_cast<std::uint32_t>(i));
  tc.tenant.name = t["name"] ? t["name"].as<std::string>() : t["account"].as<std::string>();
  tc.account = lower(t["account"] ? t["account"].as<std::string>() : tc.tenant.name);
  read_knobs(t, tc.tenant, where);
  if (t["quota_gpus"])
    tc.tenant.quota_gpus =
        static_cast<int>(number(t["quota_gpus"], where, "quota_gpus", 0, 1 << 20));
  if (t["weight"]) tc.tenant.weight = number(t["weight"], where, "weight", 1e-9, 1e9);
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
  if (t["eviction_grace_s"])
    tc.eviction_grace_s = static_cast<std::int64_t>(
        number(t["eviction_grace_s"], where, "eviction_grace_s", 0, 86400));
  return tc;
}

void read_tenants(const YAML::Node& root, ControllerConfig& c, const std::string& path) {
  if (c.tenant_source == TenantSource::Config &&
      (!root["tenants"] || !root["tenants"].IsSequence() || root["tenants"].size() == 0))
    throw InputError(path + ": 'tenants' must list at least one tenant (tenant_source: config)");
  const YAML::Node list = root["tenants"];
  if (list && !list.IsSequence()) throw InputError(path + ": 'tenants' must be a list");
  std::set<std::string> accounts;
  for (std::size_t i = 0; list && i < list.size(); ++i) {
    TenantConfig tc = read_tenant(list[i], c, i, path);
    if (!accounts.insert(tc.account).second)
      throw InputError(path + ": tenants[" + std::to_string(i) + "]: account '" + tc.account +
                       "' listed twice");
    c.tenants.push_back(std::move(tc));
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

ControllerConfig parse_controller_config(const std::string& path, const std::string& text) {
  ControllerConfig c;
  c.source = path;
  try {
    const YAML::Node root = YAML::Load(text);
    read_settings(root, c, path);
    read_tenants(root, c, path);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": " + e.what());
  }
  return c;
}

ControllerConfig load_controller_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the configuration file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_controller_config(path, text.str());
}

}  // namespace ds::slurm
