// What a node's kubelet admits besides GPUs (node_room.hpp).
#include "k8s/node_room.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "k8s/pods.hpp"

namespace ds::k8s {

std::int64_t quantity_milli(const json& value) {
  std::string s;
  if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    return v < 0 || v > 9'000'000'000'000'000 / 1000 ? -1 : v * 1000;
  }
  if (!value.is_string()) return -1;
  s = value.get<std::string>();
  // <number><suffix>: the number digits with at most one '.', the suffix a binary (Ki..Ei),
  // decimal (n, u, m, k, M, G, T, P, E) or exponent (e/E followed by an integer) one.
  std::size_t i = 0;
  bool digits = false, dot = false;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' && !dot))) {
    digits = digits || s[i] != '.';
    dot = dot || s[i] == '.';
    ++i;
  }
  if (!digits || i > 30) return -1;
  const long double number = std::strtold(s.substr(0, i).c_str(), nullptr);
  const std::string suffix = s.substr(i);
  long double factor = 1;
  static const char* const kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static const char* const kDecimal[] = {"k", "M", "G", "T", "P", "E"};
  bool known = suffix.empty();
  for (int k = 0; k < 6 && !known; ++k) {
    if (suffix == kBinary[k]) factor = std::pow(1024.0L, k + 1), known = true;
    if (suffix == kDecimal[k]) factor = std::pow(1000.0L, k + 1), known = true;
  }
  if (!known && (suffix == "m" || suffix == "u" || suffix == "n")) {
    factor = suffix == "m" ? 1e-3L : suffix == "u" ? 1e-6L : 1e-9L;
    known = true;
  }
  if (!known && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    char* end = nullptr;
    const long e = std::strtol(suffix.c_str() + 1, &end, 10);
    if (end && *end == '\0' && e >= -9 && e <= 18) factor = std::pow(10.0L, e), known = true;
  }
  if (!known) return -1;
  const long double milli = std::ceil(number * factor * 1000 - 1e-9L);
  if (milli > 9e18L) return -1;
  return static_cast<std::int64_t>(std::max(0.0L, milli));
}

namespace {

// One container's requests (limits where a request is absent).
Requests container_requests(const json& c) {
  const json& res = member(c, "resources");
  const auto read = [&](const char* name) -> std::int64_t {
    std::int64_t v = quantity_milli(member(member(res, "requests"), name));
    if (v < 0) v = quantity_milli(member(member(res, "limits"), name));
    return std::max<std::int64_t>(0, v);
  };
  return {read("cpu"), (read("memory") + 999) / 1000, 0};
}

}  // namespace

Requests pod_requests(const json& spec) {
  Requests sum;
  if (const json& cs = member(spec, "containers"); cs.is_array())
    for (const auto& c : cs) sum += container_requests(c);
  if (const json& cs = member(spec, "initContainers"); cs.is_array())
    for (const auto& c : cs) {
      const Requests r = container_requests(c);
      sum.cpu_milli = std::max(sum.cpu_milli, r.cpu_milli);
      sum.memory_bytes = std::max(sum.memory_bytes, r.memory_bytes);
    }
  const json& overhead = member(spec, "overhead");
  sum.cpu_milli += std::max<std::int64_t>(0, quantity_milli(member(overhead, "cpu")));
  sum.memory_bytes +=
      (std::max<std::int64_t>(0, quantity_milli(member(overhead, "memory"))) + 999) / 1000;
  sum.pods = 1;
  return sum;
}

Requests node_allocatable(const json& status) {
  const json& a = member(status, "allocatable");
  const auto read = [&](const char* name) {
    return std::max<std::int64_t>(0, quantity_milli(member(a, name)));
  };
  return {read("cpu"), (read("memory") + 999) / 1000, read("pods") / 1000};
}

std::string room_refusal(const Requests& alloc, const Requests& held, const Requests& need) {
  const auto over = [](std::int64_t a, std::int64_t h, std::int64_t n) {
    return a > 0 && n > 0 && h + n > a;
  };
  if (over(alloc.cpu_milli, held.cpu_milli, need.cpu_milli))
    return "pods there request " + std::to_string(held.cpu_milli) + "m of its " +
           std::to_string(alloc.cpu_milli) + "m CPU, this start " + std::to_string(need.cpu_milli) +
           "m";
  if (over(alloc.memory_bytes, held.memory_bytes, need.memory_bytes))
    return "pods there request " + std::to_string(held.memory_bytes >> 20) + " of its " +
           std::to_string(alloc.memory_bytes >> 20) + " MiB of memory, this start " +
           std::to_string(need.memory_bytes >> 20);
  if (over(alloc.pods, held.pods, need.pods))
    return "it runs " + std::to_string(held.pods) + " of its " + std::to_string(alloc.pods) +
           " pods";
  return "";
}

std::vector<std::string> host_ports(const json& spec) {
  std::vector<std::string> out;
  for (const char* list : {"initContainers", "containers"}) {
    const json& cs = member(spec, list);
    if (!cs.is_array()) continue;
    for (const auto& c : cs) {
      const json& ports = member(c, "ports");
      if (!ports.is_array()) continue;
      for (const auto& p : ports) {
        const json& port = member(p, "hostPort");
        if (!port.is_number_integer() || port.get<std::int64_t>() <= 0) continue;
        std::string protocol = member_str(p, "protocol"), ip = member_str(p, "hostIP");
        out.push_back((protocol.empty() ? "TCP" : protocol) + "/" + (ip.empty() ? "0.0.0.0" : ip) +
                      "/" + std::to_string(port.get<std::int64_t>()));
      }
    }
  }
  return out;
}

std::string port_conflict(const std::vector<std::string>& used,
                          const std::vector<std::string>& want) {
  const auto split = [](const std::string& s) {
    const auto a = s.find('/'), b = s.rfind('/');
    return std::array<std::string, 3>{s.substr(0, a), s.substr(a + 1, b - a - 1), s.substr(b + 1)};
  };
  for (const auto& w : want) {
    const auto x = split(w);
    for (const auto& u : used) {
      const auto y = split(u);
      if (x[0] == y[0] && x[2] == y[2] && (x[1] == y[1] || x[1] == "0.0.0.0" || y[1] == "0.0.0.0"))
        return w;
    }
  }
  return "";
}

}  // namespace ds::k8s
