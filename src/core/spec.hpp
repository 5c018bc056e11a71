// A "KEY=VALUE,KEY=VALUE" option value (`--excerpt from=1000,jobs=200`, `--generated
// seed=2,days=7`) read with the same checks as every other number the project reads.
//
// Why: these specs were parsed with std::stoul/std::stod, which wrap negative numbers
// (stoul("-1") = 2^64 - 1), accept "nan", "inf" and trailing junk ("5x"), and let a key be
// given twice. Here every key must be known and appear once, and every value is read with
// an explicit range (docs/formats.md, "Ranges"); an error names the option, the key, the
// range and what was found:
//   --excerpt 'jobs=-1': expected a job count in 1..10000000, got '-1'
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ds {

class KeyValueSpec {
 public:
  // Splits `text` at commas (empty items are skipped); throws InputError for an item
  // without '=', a key not in `keys`, or a key given twice. `option` names the option in
  // messages ("--excerpt").
  KeyValueSpec(std::string option, const std::string& text, const std::vector<std::string>& keys);

  [[nodiscard]] bool has(const std::string& key) const { return values_.count(key) > 0; }
  // The value of `key` within [lo, hi], or `fallback` when the key is absent; InputError
  // otherwise. `what` names the quantity ("a job count").
  [[nodiscard]] std::uint64_t unsigned_in(const std::string& key, std::uint64_t fallback,
                                          std::uint64_t lo, std::uint64_t hi,
                                          const std::string& what) const;
  [[nodiscard]] double number_in(const std::string& key, double fallback, double lo, double hi,
                                 const std::string& what) const;

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

  std::string option_;
  std::map<std::string, std::string> values_;
};

// A whole decimal number without a sign within [lo, hi] ("-1" is not 2^64 - 1).
bool parse_unsigned(const std::string& text, std::uint64_t lo, std::uint64_t hi,
                    std::uint64_t& out);

}  // namespace ds
