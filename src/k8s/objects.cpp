#include "k8s/objects.hpp"

#include <cstdio>
#include <ctime>

namespace ds::k8s {

std::string url_encode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q.append(q.empty() ? "?" : "&").append(url_encode(k)).append("=").append(url_encode(v));
  }
  return q;
}

std::string resource_path(std::string_view group, std::string_view version,
                          std::string_view resource, std::string_view ns, std::string_view name,
                          std::string_view subresource) {
  std::string p = group.empty() ? "/api/" : "/apis/";
  if (!group.empty()) p.append(group).append("/");
  p.append(version.empty() ? "v1" : version);
  if (!ns.empty()) p.append("/namespaces/").append(ns);
  p.append("/").append(resource);
  if (!name.empty()) p.append("/").append(name);
  if (!subresource.empty()) p.append("/").append(subresource);
  return p;
}

std::string micro_time(std::chrono::system_clock::time_point t) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::int64_t secs = us / 1000000;
  std::int64_t frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  const auto tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[96];  // room for any int the format could print (gcc checks the worst case)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

json binding(std::string_view pod, std::string_view node,
             const std::map<std::string, std::string>& annotations) {
  json b = {{"apiVersion", "v1"},
            {"kind", "Binding"},
            {"metadata", {{"name", pod}}},
            {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!annotations.empty()) b["metadata"]["annotations"] = annotations;
  return b;
}

json eviction(std::string_view ns, std::string_view pod, std::optional<std::int64_t> grace) {
  json e = {{"apiVersion", "policy/v1"},
            {"kind", "Eviction"},
            {"metadata", {{"name", pod}, {"namespace", ns}}}};
  if (grace) e["deleteOptions"] = {{"gracePeriodSeconds", *grace}};
  return e;
}

json lease(std::string_view ns, std::string_view name, const LeaseSpec& s,
           std::string_view resource_version) {
  json l = {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"holderIdentity", s.holder},
              {"leaseDurationSeconds", s.duration_seconds},
              {"acquireTime", micro_time(s.acquire_time)},
              {"renewTime", micro_time(s.renew_time)},
              {"leaseTransitions", s.transitions}}}};
  if (!resource_version.empty()) l["metadata"]["resourceVersion"] = resource_version;
  return l;
}

json event(const EventSpec& s) {
  const auto ns = s.regarding.value("namespace", "default");
  const auto ns_since_epoch =
      std::chrono::duration_cast<std::chrono::nanoseconds>(s.time.time_since_epoch()).count();
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(ns_since_epoch));
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", s.regarding.value("name", "object") + suffix}, {"namespace", ns}}},
          {"eventTime", micro_time(s.time)},
          {"reportingController", s.controller},
          {"reportingInstance", s.instance.empty() ? s.controller : s.instance},
          {"action", s.action},
          {"reason", s.reason},
          {"regarding", s.regarding},
          {"note", s.note},
          {"type", s.type}};
}

std::int64_t rfc3339_seconds(const std::string& text) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char t = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &t, &h, &mi, &s) != 7 ||
      (t != 'T' && t != 't') || text.back() != 'Z')
    return -1;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string events_path(std::string_view ns) {
  return resource_path("events.k8s.io", "v1", "events", ns);
}

}  // namespace ds::k8s
