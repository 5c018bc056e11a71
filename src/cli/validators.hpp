// Number checks for CLI options with short messages (CLI11's own print the whole range
// of a double).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ds {

inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(s, &used);
          if (used == s.size() && v > 0) return {};
        } catch (const std::exception&) {
        }
        return "expected a number > 0, got '" + s + "'";
      },
      "POSITIVE");
}

inline CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(s, &used);
          if (used == s.size() && v >= 0) return {};
        } catch (const std::exception&) {
        }
        return "expected a number >= 0, got '" + s + "'";
      },
      "NON-NEGATIVE");
}

}  // namespace ds
