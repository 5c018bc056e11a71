// Jobs as gangs (jobs.hpp).
#include "k8s/jobs.hpp"

#include "k8s/pods.hpp"

namespace ds::k8s {
namespace {

const json& at(const json& o, const char* key) {
  static const json null;
  if (!o.is_object()) return null;
  auto it = o.find(key);
  return it == o.end() ? null : *it;
}

std::string str(const json& o, const char* key) {
  const json& v = at(o, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

int count(const json& v) {
  return v.is_number_integer() ? v.get<int>() : -1;
}

}  // namespace

std::optional<JobShape> job_shape(const json& job) {
  const json& meta = at(job, "metadata");
  const json& spec = at(job, "spec");
  JobShape j;
  j.uid = str(meta, "uid");
  j.ns = str(meta, "namespace");
  j.name = str(meta, "name");
  if (j.uid.empty() || j.ns.empty() || j.name.empty()) return std::nullopt;
  const int parallelism = count(at(spec, "parallelism"));
  const bool all_at_once = parallelism >= 1 && count(at(spec, "completions")) == parallelism;
  if (all_at_once && (parallelism == 1 ||
                      (str(spec, "completionMode") == "Indexed" && parallelism <= kMaxGangSize)))
    j.gang_size = parallelism;
  const json& conditions = at(at(job, "status"), "conditions");
  if (conditions.is_array())
    for (const auto& c : conditions) {
      const std::string type = str(c, "type");
      if ((type == "Complete" || type == "Failed") && str(c, "status") == "True") j.finished = true;
    }
  return j;
}

void JobIndex::update(const std::vector<std::shared_ptr<const json>>& jobs) {
  std::unordered_map<std::string, Cached> seen;
  seen.reserve(jobs.size());
  for (const auto& o : jobs) {
    const std::string uid = str(at(*o, "metadata"), "uid");
    if (auto c = jobs_.find(uid); c != jobs_.end() && c->second.object == o)
      seen.emplace(uid, std::move(c->second));
    else if (auto s = job_shape(*o))
      seen.emplace(uid, Cached{o, std::move(*s)});
  }
  jobs_.swap(seen);
}

const JobShape* JobIndex::find(const std::string& uid) const {
  auto it = jobs_.find(uid);
  return it == jobs_.end() ? nullptr : &it->second.shape;
}

}  // namespace ds::k8s
