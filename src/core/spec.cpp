#include "core/spec.hpp"

#include <charconv>
#include <utility>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {

bool parse_unsigned(const std::string& text, std::uint64_t lo, std::uint64_t hi,
                    std::uint64_t& out) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);  // no sign, no spaces
  if (text.empty() || ec != std::errc() || p != end || v < lo || v > hi) return false;
  out = v;
  return true;
}

KeyValueSpec::KeyValueSpec(std::string option, const std::string& text,
                           const std::vector<std::string>& keys)
    : option_(std::move(option)) {
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(option_ + " " + quote_input(item) + ": expected KEY=VALUE");
    const std::string key = item.substr(0, eq);
    bool known = false;
    std::string list;
    for (const auto& k : keys) {
      known = known || k == key;
      list += (list.empty() ? "" : ", ") + k;
    }
    if (!known)
      throw InputError(option_ + " " + quote_input(item) + ": unknown key " + quote_input(key) +
                       " (valid keys: " + list + ")");
    if (!values_.emplace(key, item.substr(eq + 1)).second)
      throw InputError(option_ + ": key " + quote_input(key) + " is given twice");
  }
}

void KeyValueSpec::fail(const std::string& key, const std::string& expected) const {
  throw InputError(option_ + " " + quote_input(key + "=" + values_.at(key)) + ": expected " +
                   expected + ", got " + quote_input(values_.at(key)));
}

std::uint64_t KeyValueSpec::unsigned_in(const std::string& key, std::uint64_t fallback,
                                        std::uint64_t lo, std::uint64_t hi,
                                        const std::string& what) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::uint64_t v = 0;
  if (!parse_unsigned(it->second, lo, hi, v))
    fail(key, what + " in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

double KeyValueSpec::number_in(const std::string& key, double fallback, double lo, double hi,
                               const std::string& what) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const auto v = parse_double(it->second);  // finite numbers only: no nan, no inf
  if (!v || !(*v >= lo && *v <= hi)) fail(key, what + " in " + range_text(lo, hi));
  return *v;
}

}  // namespace ds
