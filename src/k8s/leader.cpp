// Leader election with a coordination.k8s.io/v1 Lease (leader.hpp).
#include "k8s/leader.hpp"

#include <unistd.h>

#include <chrono>

#include "core/error.hpp"
#include "driver/clock.hpp"
#include "k8s/api.hpp"
#include "k8s/objects.hpp"

namespace ds::k8s {

void check_leader_config(const LeaderConfig& c) {
  if (c.ns.empty() || c.name.empty())
    throw InputError("the leader Lease needs a namespace and a name");
  if (c.duration_ms < 1000 || c.duration_ms % 1000 != 0)
    throw InputError("--lease-duration: whole seconds, at least 1 (leaseDurationSeconds)");
  if (!(0 < c.retry_ms && c.retry_ms < c.renew_deadline_ms && c.renew_deadline_ms < c.duration_ms))
    throw InputError("the leader Lease needs retry (" + std::to_string(c.retry_ms) +
                     " ms) < renew deadline (" + std::to_string(c.renew_deadline_ms) +
                     " ms) < lease duration (" + std::to_string(c.duration_ms) +
                     " ms): a holder must stop acting before a standby may take over");
}

LeaseRecord lease_record(const json& lease) {
  LeaseRecord r;
  r.exists = true;
  const json& meta = lease.value("metadata", json::object());
  const json& spec = lease.value("spec", json::object());
  r.resource_version = meta.value("resourceVersion", "");
  auto text = [&](const char* k) {
    auto it = spec.find(k);
    return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [&](const char* k) {
    auto it = spec.find(k);
    return it != spec.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  };
  r.holder = text("holderIdentity");
  r.transitions = number("leaseTransitions");
  r.duration_s = number("leaseDurationSeconds");
  return r;
}

LeaseAction lease_step(const LeaseRecord& r, const std::string& me, std::int64_t seen_since_ms,
                       std::int64_t now_ms, std::int64_t duration_ms) {
  if (!r.exists) return LeaseAction::Create;
  if (r.holder == me) return LeaseAction::Renew;
  if (r.holder.empty()) return LeaseAction::TakeOver;  // given up on a clean stop
  // The holder's own promise when it wrote one; ours otherwise.
  const std::int64_t d = r.duration_s > 0 ? r.duration_s * 1000 : duration_ms;
  return now_ms - seen_since_ms >= d ? LeaseAction::TakeOver : LeaseAction::Wait;
}

namespace {

std::string default_identity() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "deepshare") + "_" + std::to_string(::getpid());
}

}  // namespace

LeaderElector::LeaderElector(Client& client, LeaderConfig config, driver::Log& log, Now now)
    : client_(client), cfg_(std::move(config)), log_(log), now_(std::move(now)) {
  check_leader_config(cfg_);
  if (cfg_.identity.empty()) cfg_.identity = default_identity();
  if (!now_) now_ = [] { return driver::wall_now_ms(); };
}

void LeaderElector::unusable(const ApiError& e, const char* what) const {
  const std::string where = "Lease " + cfg_.ns + "/" + cfg_.name;
  if (e.not_found())
    throw InputError(where + ": namespace " + cfg_.ns +
                     " does not exist (create it: deploy/k8s, or `kubectl create namespace " +
                     cfg_.ns + "`; or pass --lease-namespace)");
  throw InputError(where + ": cannot " + what + " it (" + e.str() +
                   "; the scheduler's user needs get, create and update on "
                   "coordination.k8s.io leases there)");
}

bool LeaderElector::round() {
  if (lost_) return false;  // a holder that lost the Lease never takes it again (deposed)
  const std::int64_t started = now_();
  last_round_ms_ = started;
  LeaseRecord r;
  if (auto got = client_.get(leases_path(cfg_.ns, cfg_.name)); got) {
    r = lease_record(*got);
  } else if (!got.error().not_found()) {
    if (got.error().forbidden()) unusable(got.error(), "read");
    log_.warn("lease_read_failed",
              {{"lease", cfg_.ns + "/" + cfg_.name}, {"error", got.error().str()}});
    return held();  // held() runs out at the renew deadline unless a later round renews
  }
  if (r.exists != last_.exists || r.resource_version != last_.resource_version)
    seen_since_ms_ = started;
  last_ = r;
  if (epoch_ > 0 && r.holder != cfg_.identity) {
    renewed_ms_ = -1;  // another holder wrote it: this one stops at once, for good
    lost_ = true;
    log_.warn("lease_lost", {{"lease", cfg_.ns + "/" + cfg_.name}, {"holder", r.holder}});
    return false;
  }
  const LeaseAction a = lease_step(r, cfg_.identity, seen_since_ms_, started, cfg_.duration_ms);
  if (a == LeaseAction::Wait) return false;
  return write(a, started);
}

bool LeaderElector::write(LeaseAction a, std::int64_t started) {
  LeaseSpec s;
  s.holder = cfg_.identity;
  s.duration_seconds = cfg_.duration_ms / 1000;
  s.renew_time = std::chrono::system_clock::now();
  s.acquire_time = a == LeaseAction::Renew ? acquired_ : s.renew_time;
  s.transitions = a == LeaseAction::Create     ? 1
                  : a == LeaseAction::TakeOver ? last_.transitions + 1
                                               : last_.transitions;
  auto done = a == LeaseAction::Create
                  ? create_lease(client_, cfg_.ns, cfg_.name, s)
                  : update_lease(client_, cfg_.ns, cfg_.name, s, last_.resource_version);
  if (!done) {
    const ApiError& e = done.error();
    if (e.not_found() && a == LeaseAction::Create) unusable(e, "create");
    if (e.forbidden()) unusable(e, a == LeaseAction::Create ? "create" : "update");
    if (e.conflict()) {
      // Someone else wrote it since our read (or created it first): theirs. A holder whose
      // renewal conflicts stops acting now rather than at its deadline.
      if (a == LeaseAction::Renew) {
        renewed_ms_ = -1;
        lost_ = true;
        log_.warn("lease_lost", {{"lease", cfg_.ns + "/" + cfg_.name}, {"detail", e.str()}});
      }
      return false;
    }
    log_.warn("lease_write_failed", {{"lease", cfg_.ns + "/" + cfg_.name}, {"error", e.str()}});
    return held();
  }
  const std::string previous = last_.holder;
  last_ = lease_record(*done);
  seen_since_ms_ = started;
  renewed_ms_ = started;
  if (a == LeaseAction::Renew) {
    ++renewals_;
    return held();
  }
  acquired_ = s.acquire_time;
  epoch_ = static_cast<std::uint64_t>(s.transitions);
  log_.info("leader", {{"lease", cfg_.ns + "/" + cfg_.name},
                       {"identity", cfg_.identity},
                       {"epoch", epoch_},
                       {"previous_holder", previous},
                       {"created", a == LeaseAction::Create}});
  return held();
}

bool LeaderElector::tick() {
  if (last_round_ms_ >= 0 && now_() - last_round_ms_ < cfg_.retry_ms) return held();
  return round();
}

bool LeaderElector::held() const {
  return epoch_ > 0 && renewed_ms_ >= 0 && now_() - renewed_ms_ < cfg_.renew_deadline_ms;
}

std::int64_t LeaderElector::held_for_ms() const {
  return held() ? cfg_.renew_deadline_ms - (now_() - renewed_ms_) : 0;
}

std::string LeaderElector::describe() const {
  return "Lease " + cfg_.ns + "/" + cfg_.name + " (holder " +
         (last_.holder.empty() ? std::string("none") : last_.holder) + ", leaseTransitions " +
         std::to_string(last_.transitions) + "; ours: " + cfg_.identity + ", epoch " +
         std::to_string(epoch_) + ")";
}

void LeaderElector::release() {
  if (!held()) return;
  LeaseSpec s;
  s.holder = "";
  s.duration_seconds = cfg_.duration_ms / 1000;
  s.acquire_time = acquired_;
  s.renew_time = std::chrono::system_clock::now();
  s.transitions = last_.transitions;
  renewed_ms_ = -1;  // no action after this, whatever the answer
  if (auto r = update_lease(client_, cfg_.ns, cfg_.name, s, last_.resource_version); !r)
    log_.warn("lease_release_failed",
              {{"lease", cfg_.ns + "/" + cfg_.name}, {"error", r.error().str()}});
  else
    log_.info("lease_released", {{"lease", cfg_.ns + "/" + cfg_.name}});
}

}  // namespace ds::k8s
