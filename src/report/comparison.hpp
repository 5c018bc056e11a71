// The policy comparison table: one row per policy run on the same workload, with
// the key metrics of DESIGN §4. Used by `deepshare demo` and `deepshare compare` (which adds
// a load column: one row per policy x load).
//
// Formats: comparison.csv (machine-readable: full-precision %.6g numbers, one
// header row, columns in kComparisonColumns order) and comparison.md (a Markdown
// table with rounded numbers, for people). Only the wall-clock column varies between
// two runs of the same inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/metrics.hpp"

namespace ds {

struct ComparisonRow {
  std::string policy;
  Metrics metrics;
  double wall_seconds = 0;
  std::optional<double> load = {};  // load factor (`compare`); a `load` column when any row has one
};

// Writes `dir`/comparison.csv and `dir`/comparison.md (creating `dir`); throws
// InputError when they cannot be written. `title` heads the Markdown file.
void write_comparison(const std::string& dir, const std::vector<ComparisonRow>& rows,
                      const std::string& title);

std::string comparison_csv(const std::vector<ComparisonRow>& rows);
// The Markdown table alone (header, rule, one line per row).
std::string comparison_table(const std::vector<ComparisonRow>& rows);

}  // namespace ds
