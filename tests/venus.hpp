// Where the tests find the Venus trace (research data beside the project, never copied
// into it), and the skip that says so when it is absent.
#pragma once

#include <filesystem>
#include <string>

namespace ds::testing {

inline const std::string kVenus = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept";

}  // namespace ds::testing

#define REQUIRE_VENUS()                                                               \
  if (!std::filesystem::exists(::ds::testing::kVenus + "/venus_sept_23859_jobs.csv")) \
  GTEST_SKIP() << "Venus trace not found at " << ::ds::testing::kVenus                \
               << " (research data lives in ../shared/traces beside the project)"
