#include "core/csv.hpp"
#include "core/error.hpp"
#include "policy/policy.hpp"

namespace ds {

void PolicyOptions::set(const std::string& key_value) {
  auto eq = key_value.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set expects KEY=VALUE, got " + quote_input(key_value));
  values_[key_value.substr(0, eq)] = key_value.substr(eq + 1);
}

std::string PolicyOptions::get(const std::string& key, const std::string& fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

double PolicyOptions::get_double(const std::string& key, double fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (auto v = parse_double(it->second)) return *v;
  throw InputError("--set " + quote_input(key) + ": expected a number, got " +
                   quote_input(it->second));
}

long PolicyOptions::get_int(const std::string& key, long fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (auto v = parse_int(it->second)) return static_cast<long>(*v);
  throw InputError("--set " + quote_input(key) + ": expected an integer, got " +
                   quote_input(it->second));
}

bool PolicyOptions::get_bool(const std::string& key, bool fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  if (v == "on" || v == "true" || v == "1" || v == "yes") return true;
  if (v == "off" || v == "false" || v == "0" || v == "no") return false;
  throw InputError("--set " + quote_input(key) + ": expected on/off, got " + quote_input(v));
}

double PolicyOptions::get_double(const std::string& key, double fallback, double min,
                                 double max) const {
  const double v = get_double(key, fallback);
  if ((v >= min && v <= max) || !values_.count(key)) return v;  // defaults are in range
  throw InputError("--set " + quote_input(key) + ": expected a number in " + range_text(min, max) +
                   ", got " + quote_input(values_.at(key)));
}

long PolicyOptions::get_int(const std::string& key, long fallback, long min, long max) const {
  const long v = get_int(key, fallback);
  if ((v >= min && v <= max) || !values_.count(key)) return v;  // defaults are in range
  throw InputError("--set " + quote_input(key) + ": expected an integer in " +
                   range_text(static_cast<double>(min), static_cast<double>(max)) + ", got " +
                   quote_input(values_.at(key)));
}

Time PolicyOptions::get_seconds(const std::string& key, Time fallback, long min_s,
                                long max_s) const {
  return seconds(get_int(key, static_cast<long>(fallback / kSecond), min_s, max_s));
}

std::vector<std::string> PolicyOptions::unused() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_)
    if (!read_.count(k)) out.push_back(k);
  return out;
}

}  // namespace ds
