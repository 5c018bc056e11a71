// The parameters of the suites that run for every entry of policy_registry() (the policy
// contract, mixed node sizes): a new policy gets them for free.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "registry/registry.hpp"

namespace ds::testing {

inline std::vector<std::string> registered_policies() {
  std::vector<std::string> names;
  for (const auto& p : policy_registry()) names.push_back(p.name);
  return names;
}

// gtest names may not hold '-': "fifo-pooled" -> "fifo_pooled".
inline std::string policy_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

}  // namespace ds::testing
