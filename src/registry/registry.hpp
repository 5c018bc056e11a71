// The explicit policy registry: one table naming every policy the CLI can run.
// (Kubernetes' NewInTreeRegistry, not a chain of if/else on names.)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace ds {

struct PolicyInfo {
  std::string name;
  std::string summary;  // one line for `deepshare policies`
  std::string options;  // `--set` keys it reads, e.g. "backfill=on|off"
  std::unique_ptr<Policy> (*make)(const PolicyContext&);
  bool oracle = false;  // sees true run times (PolicyContext::oracle_work); say so in summary
};

const std::vector<PolicyInfo>& policy_registry();
const PolicyInfo* find_policy(const std::string& name);
// Throws InputError naming the known policies when `name` is unknown, or when an
// option in ctx.options was not read by the policy. Strips ctx.oracle_work unless
// the policy is registered as an oracle.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyContext& ctx);

}  // namespace ds
