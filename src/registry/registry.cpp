#include "registry/registry.hpp"

#include "baselines/fifo.hpp"
#include "core/error.hpp"
#include "policy/deepshare/deepshare.hpp"

namespace ds {

const std::vector<PolicyInfo>& policy_registry() {
  static const std::vector<PolicyInfo> table = {
      {"deepshare",
       "DeepShare: assurance-driven lending, cost-aware reclaim, predicted-runtime order, "
       "interference-aware MPS sharing",
       std::string(deepshare_options()) + ", aux=DIR", &make_deepshare},
      {"fifo-isolated",
       "Lucid's FIFO: each tenant on its own virtual cluster, head-of-line blocking, "
       "consolidate placement",
       "", &make_fifo_isolated},
      {"fifo-pooled", "One shared pool, FIFO order with greedy backfill", "backfill=on|off",
       &make_fifo_pooled},
  };
  return table;
}

const PolicyInfo* find_policy(const std::string& name) {
  for (const auto& info : policy_registry())
    if (info.name == name) return &info;
  return nullptr;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyContext& given) {
  for (const auto& info : policy_registry()) {
    if (info.name != name) continue;
    PolicyContext ctx = given;
    if (!info.oracle) ctx.oracle_work = {};
    auto policy = info.make(ctx);
    auto unused = ctx.options.unused();
    if (!unused.empty()) {
      std::string keys;
      for (const auto& k : unused) keys += (keys.empty() ? "" : ", ") + k;
      throw InputError(
          "policy '" + name + "' has no option " + keys +
          (info.options.empty() ? " (it takes none)" : " (it reads: " + info.options + ")"));
    }
    return policy;
  }
  std::string known;
  for (const auto& info : policy_registry()) known += (known.empty() ? "" : ", ") + info.name;
  throw InputError("unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace ds
