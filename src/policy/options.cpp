#include "core/csv.hpp"
#include "core/error.hpp"
#include "policy/policy.hpp"

namespace ds {

void PolicyOptions::set(const std::string& key_value) {
  auto eq = key_value.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set expects KEY=VALUE, got '" + key_value + "'");
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
  throw InputError("--set " + key + ": expected a number, got '" + it->second + "'");
}

long PolicyOptions::get_int(const std::string& key, long fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (auto v = parse_int(it->second)) return static_cast<long>(*v);
  throw InputError("--set " + key + ": expected an integer, got '" + it->second + "'");
}

bool PolicyOptions::get_bool(const std::string& key, bool fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  if (v == "on" || v == "true" || v == "1" || v == "yes") return true;
  if (v == "off" || v == "false" || v == "0" || v == "no") return false;
  throw InputError("--set " + key + ": expected on/off, got '" + v + "'");
}

std::vector<std::string> PolicyOptions::unused() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_)
    if (!read_.count(k)) out.push_back(k);
  return out;
}

}  // namespace ds
