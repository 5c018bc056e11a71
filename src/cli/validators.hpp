// Checks for CLI options with short messages (CLI11's own print the whole range of a
// double). Every number a user gives has an explicit range (docs/formats.md, "Ranges").
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/spec.hpp"

namespace ds {

// A number within [lo, hi] (both finite).
inline CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const auto v = parse_double(s);
        if (v && *v >= lo && *v <= hi) return {};
        return "expected a number in " + range_text(lo, hi) + ", got " + quote_input(s);
      },
      "NUMBER in " + range_text(lo, hi));
}

inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const auto v = parse_double(s);
        if (v && *v > 0) return {};
        return "expected a number > 0, got " + quote_input(s);
      },
      "POSITIVE");
}

// A whole number in [lo, hi], written without a sign: "-1" for an unsigned option (--seed)
// is an error, not 2^64 - 1 (CLI11 reads unsigned numbers with strtoull, which wraps).
inline CLI::Validator whole_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::uint64_t v = 0;
        if (parse_unsigned(s, lo, hi, v)) return {};
        return "expected a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) +
               ", got " + quote_input(s);
      },
      "INTEGER in " + std::to_string(lo) + ".." + std::to_string(hi));
}

// A seed: any whole number 0 .. 2^64 - 1.
inline CLI::Validator seed_value() {
  return whole_in(0, UINT64_MAX);
}

// A file or folder name: an empty one is a mistake (`--out ''`), not "the current folder".
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s.empty() ? std::string("expected a file or folder name, got ''") : std::string();
      },
      "PATH");
}

}  // namespace ds
