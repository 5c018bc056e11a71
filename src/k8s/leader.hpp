// Leader election for `deepshare k8s run` with a coordination.k8s.io/v1 Lease, as
// kube-scheduler and client-go's leaderelection do (docs/kubernetes.md §8 "Leader election"):
// exactly one scheduler binds and evicts; the others wait as hot standbys.
//
//  - The Lease (default deepshare-system/deepshare-scheduler) names its holder
//    (holderIdentity), leaseDurationSeconds and leaseTransitions. Every write is a PUT with the
//    resourceVersion last read (a create for a missing Lease), so of two schedulers writing at
//    once one gets 409 Conflict: optimistic concurrency, never two holders from one version.
//  - A holder renews every retry period. A standby takes the Lease over when its record (the
//    resourceVersion) has not changed for leaseDurationSeconds of the standby's OWN clock since
//    it first saw that record (client-go's rule: no comparison of two machines' clocks), or
//    at once when the holder gave it up (holderIdentity empty, on a clean stop).
//  - A holder that sees another holder, or whose renewal conflicts, has lost the Lease for
//    good: it never takes it again (its process is deposed and exits; restarted, it is a
//    new standby).
//  - The holder stops acting (held() false) once renew_deadline has passed since the start of
//    its last successful renewal: before any standby may take over (renew_deadline <
//    lease duration), so two leaders never act at the same time as long as the clocks'
//    RATES agree (the same assumption as client-go's).
//  - The epoch (the fence's token, driver/fence.hpp) is leaseTransitions after this scheduler
//    took the Lease (a Lease DeepShare creates starts at 1; each take-over adds 1). It is
//    written into every decision annotation (epoch=N), so a deposed leader's late binding is
//    recognisable, and a scheduler that sees a pod with a newer epoch than its own stops.
// What to do next is a pure function (lease_step) of what was read, so that it is tested
// without a server (leader_test.cpp); LeaderElector does the calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "driver/lease.hpp"
#include "driver/log.hpp"
#include "k8s/client.hpp"

namespace ds::k8s {

struct LeaderConfig {
  std::string ns = "deepshare-system";
  std::string name = "deepshare-scheduler";
  std::string identity;                    // holderIdentity (default: hostname_pid)
  std::int64_t duration_ms = 15000;        // leaseDurationSeconds (whole seconds in the Lease)
  std::int64_t renew_deadline_ms = 10000;  // the holder stops acting this long after a renewal
  std::int64_t retry_ms = 2000;            // renew / retry period
};
// Throws InputError when the periods do not nest (retry < renew_deadline < duration).
void check_leader_config(const LeaderConfig& c);

// The Lease as last read.
struct LeaseRecord {
  bool exists = false;
  std::string holder;
  std::string resource_version;
  std::int64_t transitions = 0;
  std::int64_t duration_s = 0;
};
LeaseRecord lease_record(const json& lease);

enum class LeaseAction : std::uint8_t {
  Create,    // no Lease: create it, held by us, transitions 1
  Renew,     // ours: PUT a new renewTime
  TakeOver,  // free or expired: PUT us as holder, transitions + 1
  Wait,      // another holder, still renewing
};
// `seen_since_ms`: local time when `r`'s resourceVersion was first seen unchanged.
LeaseAction lease_step(const LeaseRecord& r, const std::string& me, std::int64_t seen_since_ms,
                       std::int64_t now_ms, std::int64_t duration_ms);

class LeaderElector final : public driver::Leadership {
 public:
  using Now = std::function<std::int64_t()>;  // local wall ms
  LeaderElector(Client& client, LeaderConfig config, driver::Log& log, Now now = {});

  // One round: read the Lease, then create / renew / take it over / wait. Returns held().
  // Throws InputError when the Lease cannot be used at all (its namespace is missing, the
  // scheduler's user may not read or write Leases there).
  bool round();
  // round() when a retry period has passed since the last one (each cycle calls it).
  bool tick();
  // Gives the Lease up (holderIdentity emptied), so that a standby takes over at once.
  void release();

  // --- driver::Leadership ---
  [[nodiscard]] bool held() const override;
  // Until the renew deadline of the last successful renewal.
  [[nodiscard]] std::int64_t held_for_ms() const override;
  [[nodiscard]] std::uint64_t epoch() const override { return epoch_; }
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] const LeaderConfig& config() const { return cfg_; }
  [[nodiscard]] std::uint64_t renewals() const { return renewals_; }

 private:
  bool write(LeaseAction a, std::int64_t started);
  [[noreturn]] void unusable(const ApiError& e, const char* what) const;

  Client& client_;
  LeaderConfig cfg_;
  driver::Log& log_;
  Now now_;
  LeaseRecord last_;                // as last read or written
  std::int64_t seen_since_ms_ = 0;  // when last_.resource_version was first seen
  std::int64_t renewed_ms_ = -1;    // start of the last successful write as holder (-1: none)
  std::int64_t last_round_ms_ = -1;
  std::chrono::system_clock::time_point acquired_;  // acquireTime of our holding
  std::uint64_t epoch_ = 0;
  std::uint64_t renewals_ = 0;
  bool lost_ = false;  // held it once and lost it: never again (the fence deposed it)
};

}  // namespace ds::k8s
