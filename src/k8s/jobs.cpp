// Jobs as gangs (jobs.hpp).
#include "k8s/jobs.hpp"

#include "k8s/pods.hpp"

namespace ds::k8s {
namespace {

int count(const json& v) {
  return v.is_number_integer() ? v.get<int>() : -1;
}

}  // namespace

std::optional<JobShape> job_shape(const json& job) {
  const json& spec = member(job, "spec");
  JobShape j;
  if (!object_identity(job, j.uid, j.ns, j.name)) return std::nullopt;
  const int parallelism = count(member(spec, "parallelism"));
  j.indexed = member_str(spec, "completionMode") == "Indexed";
  const bool all_at_once = parallelism >= 1 && count(member(spec, "completions")) == parallelism;
  if (all_at_once && (parallelism == 1 || (j.indexed && parallelism <= kMaxGangSize)))
    j.gang_size = parallelism;
  const json& conditions = member(member(job, "status"), "conditions");
  if (conditions.is_array())
    for (const auto& c : conditions) {
      const std::string type = member_str(c, "type");
      if ((type == "Complete" || type == "Failed") && member_str(c, "status") == "True")
        j.finished = true;
    }
  return j;
}

std::string job_uid_of_key(const std::string& key) {
  if (key.rfind("job:", 0) != 0) return {};
  const std::size_t end = key.find_first_of("#~", 4);
  return key.substr(4, end == std::string::npos ? std::string::npos : end - 4);
}

void JobIndex::update(const std::vector<std::shared_ptr<const json>>& jobs) {
  std::unordered_map<std::string, Cached> seen;
  seen.reserve(jobs.size());
  for (const auto& o : jobs) {
    const std::string uid = member_str(member(*o, "metadata"), "uid");
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
