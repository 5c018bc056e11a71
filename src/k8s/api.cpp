#include "k8s/api.hpp"

namespace ds::k8s {

Result<json> bind_pod(Client& c, const std::string& ns, const std::string& pod,
                      const std::string& node,
                      const std::map<std::string, std::string>& annotations) {
  return c.post(pods_path(ns, pod, "binding"), binding(pod, node, annotations));
}

Result<json> evict_pod(Client& c, const std::string& ns, const std::string& pod,
                       std::optional<std::int64_t> grace_seconds) {
  return c.post(pods_path(ns, pod, "eviction"), eviction(ns, pod, grace_seconds));
}

Result<json> create_lease(Client& c, const std::string& ns, const std::string& name,
                          const LeaseSpec& spec) {
  return c.post(leases_path(ns), lease(ns, name, spec));
}

Result<json> update_lease(Client& c, const std::string& ns, const std::string& name,
                          const LeaseSpec& spec, const std::string& resource_version) {
  return c.put(leases_path(ns, name), lease(ns, name, spec, resource_version));
}

Result<json> create_event(Client& c, const EventSpec& spec) {
  const auto body = event(spec);
  return c.post(events_path(body["metadata"]["namespace"].get<std::string>()), body);
}

Result<json> mark_unschedulable(Client& c, const std::string& ns, const std::string& pod,
                                const std::string& message) {
  const json body = {{"status",
                      {{"conditions", json::array({{{"type", "PodScheduled"},
                                                    {"status", "False"},
                                                    {"reason", "Unschedulable"},
                                                    {"message", message}}})}}}};
  return c.patch(pods_path(ns, pod, "status"), body, PatchType::Strategic);
}

Result<std::optional<std::string>> preferred_version(Client& c, const std::string& group) {
  const std::string path = "/apis/" + group;
  auto r = c.get(path);
  if (!r) {
    if (r.error().not_found()) return std::optional<std::string>();
    return r.error();
  }
  const json* v = r->is_object() ? &*r : nullptr;
  if (v && v->contains("preferredVersion") && (*v)["preferredVersion"].is_object() &&
      (*v)["preferredVersion"].value("version", json()).is_string())
    return std::optional<std::string>((*v)["preferredVersion"]["version"].get<std::string>());
  ApiError e;
  e.kind = ErrorKind::Decode;
  e.method = "GET";
  e.path = path;
  e.message = "an APIGroup without preferredVersion.version";
  return e;
}

}  // namespace ds::k8s
