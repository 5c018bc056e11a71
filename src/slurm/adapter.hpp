// The Slurm adapter: what is Slurm's in the Slurm controller, and only that (the driver
// core, src/driver/core.hpp, does the rest). It implements the driver's Actuator port
// (driver/ports.hpp) over the Slurm-level ports (ports.hpp: SlurmApi or the fake cluster):
//  - observe(): the job table -> an engine-neutral Observation: jobs of the partition only,
//    DeepShare's record read from the AdminComment (record.hpp; a malformed one, a job
//    without the gate's record, a pin in the user-writable Comment are reported once),
//    array tasks expanded, Slurm's states mapped to phases, the pin of the current run
//    (restart count) as the run's decision; new jobs are admitted here or refused (unknown
//    account, a job that cannot be requeued beyond its quota, a GRES request DeepShare did
//    not write, a GPU model no node has); a record with a newer epoch deposes this controller;
//  - eligible(): Slurm's own rules for a pending job: not held by its user, dependencies
//    satisfied, its --begin passed, its array's %N throttle not reached, and (a job whose GRES
//    request is fixed) its GPU indices idle on some node;
//  - the actions (adapter_act.cpp): the pin and release (BeginTime=now, priority in decision
//    order, GRES on the first start) only once Slurm shows the GPUs free and slurmd's
//    credential revocation has passed; park again (BeginTime 2100); requeue-hold; x= + cancel;
//    how a start is expressed in GRES (gres.hpp: fixed indices, gpushare slots).
// Every action goes through the leader fence and carries the lease epoch (e=).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/core.hpp"
#include "driver/fence.hpp"
#include "driver/ports.hpp"
#include "slurm/config.hpp"
#include "slurm/feasible.hpp"
#include "slurm/gres.hpp"
#include "slurm/headroom.hpp"
#include "slurm/ports.hpp"
#include "slurm/record.hpp"
#include "slurm/reservations.hpp"
#include "slurm/tenants.hpp"

namespace ds::slurm {

// Whether a held job is held by DeepShare's own preemption (requeue-hold), not by its user or
// an administrator (adapter.cpp).
bool our_hold(const JobInfo& j, const Record& r);
// Parked by DeepShare (BeginTime far ahead: the gate's or the controller's); not handed over.
bool parked(const JobInfo& j);

struct AdapterCounters {
  std::uint64_t untrusted_pins = 0;
  std::uint64_t bad_records = 0;
  std::uint64_t ungated = 0;
  std::uint64_t refused = 0;  // jobs cancelled with a reason before they were admitted
};

class SlurmAdapter final : public driver::Actuator {
 public:
  SlurmAdapter(const ControllerConfig& cfg, driver::Log& log, driver::Journal& journal,
               driver::Fence& fence, slurm::Actuator& act, Tenants& tenants);
  // The partition's nodes (from Slurm's node list at start), with their GPU models (the
  // Features that gpu_models lists, models.hpp); throws InputError when none.
  void load_nodes(const std::vector<NodeInfo>& nodes);
  [[nodiscard]] const Cluster& cluster() const { return cluster_; }
  [[nodiscard]] NodeId node_id(const std::string& name) const {
    return NodeId(static_cast<std::uint32_t>(node_index_.at(name)));
  }
  [[nodiscard]] std::vector<driver::EngineNode> engine_nodes(
      const std::vector<NodeInfo>& nodes) const;
  // The core it serves (after load_nodes: the core is built on the cluster).
  void attach(driver::Core& core) { core_ = &core; }
  void set_kill_wait_s(int s) { kill_wait_s_ = s; }
  // What Slurm counts as held on a node by the jobs there (headroom.hpp).
  void set_consumable(Consumable c) { consumable_ = c; }

  // The cycle's time (controller clock) and wall time.
  void set_time(Time now, std::int64_t wall_ms, const driver::DriverClock& clock) {
    now_ = now;
    wall_ = wall_ms;
    clock_ = clock;
  }
  // This cycle's job table -> the observation the core folds in (the table outlives it).
  driver::Observation observe(const std::vector<JobInfo>& jobs);
  // GPUs Slurm holds for jobs the model does not run, into the core's state.
  void sync_held(const std::vector<JobInfo>& jobs);
  [[nodiscard]] const AdapterCounters& counters() const { return counters_; }
  // Re-reads the tenants (an account Slurm lists that DeepShare does not know yet); at most
  // once per observation.
  std::function<void()> refresh_tenants;

  // --- driver::Actuator ---
  void admitted(JobId, const driver::EngineJob&) override;
  void observed(JobId, const driver::EngineJob&) override;
  void forgotten(JobId) override;
  WaitReason eligible(JobId, const driver::EngineJob&) override;
  void hold_back(JobId, const driver::EngineJob&) override;
  void became_candidate(JobId) override;
  void preempt_confirmed(JobId, const driver::EngineJob&) override;
  void requeued_by_engine(JobId, const driver::EngineJob&) override;
  void adopted(JobId, const driver::EngineJob&) override;
  void lent_out(JobId) override;
  Handover hand_over(JobId) override;
  void take_back(JobId) override;
  void repeat_preempt(JobId) override;
  [[nodiscard]] driver::Log::Fields start_details(JobId) const override;
  bool reject(JobId, const std::string& reason) override;
  Preemption preempt(JobId, const driver::EngineJob&) override;
  void preempted(JobId) override;
  std::optional<Placement> place(const StartJob& d) override;
  void decided(const StartJob& applied, Time queued_since, bool moved) override;

 private:
  // One job as Slurm shows it this cycle (an unsplit array task shares its meta record).
  struct View {
    const JobInfo* j = nullptr;
    std::string ref;  // "123" or "123_4": also the job's key
    std::uint32_t array_job = 0;
    std::uint64_t order = 0;  // (job or array id) << 32 | task
    Record record;
  };
  // What the adapter keeps per job (ids as the core's).
  struct SlurmJob {
    std::string ref;
    std::uint32_t array_job = 0;
    Pin pin;            // of the current start, or of the adopted run
    Request request;    // what the gate recorded
    GresRequest fixed;  // Slurm's GRES request once DeepShare wrote it
    GresKind start_kind = GresKind::Whole;
    bool write_request = false;
    std::uint32_t restarts = 0;
    // The nodes of a run that was requeued, and when the job was first seen pending again.
    // slurmd refuses to launch the job on such a node with a credential created in the same
    // second as the revocation ("Job credential revoked": Slurm compares whole seconds),
    // which kills the job; so such a start waits until a second has passed.
    std::vector<std::string> requeued_from;
    std::int64_t pending_again_wall = 0;
    bool start_deferred = false;
    bool held_deferred = false;  // a start deferred for what other jobs hold on its node
    // Nodes where Slurm did not start a start it was handed (rolled back), since the job last
    // ran: later starts go elsewhere while another node can take them.
    std::vector<std::string> refused_nodes;
    // Between place() and decided() of a start: how Slurm holds it, and its partner.
    Expressed proposal;
    std::string partner_ref;
  };

  // adapter.cpp: observation
  std::vector<View> views_of(const std::vector<JobInfo>& jobs);
  [[nodiscard]] std::optional<View> view_of(const JobInfo& j, const std::string& ref,
                                            std::uint32_t array_job);
  // `allowed`: the job's node mask (feasible.hpp), read once here for spec_of.
  bool admit(const View& v, std::vector<std::uint8_t>& allowed);
  bool admit_model(const View& v);
  bool admit_feasible(const View& v, std::vector<std::uint8_t>& allowed);
  driver::EngineJob engine_job(const View& v, bool fresh, std::vector<std::uint8_t> allowed) const;
  JobSpec spec_of(const View& v, std::vector<std::uint8_t> allowed) const;
  [[nodiscard]] Placement placement_of(const JobInfo& j) const;
  [[nodiscard]] Placement placement_of(const std::map<std::string, std::uint64_t>& gpus) const;
  [[nodiscard]] bool fixed_gpus_free(const SlurmJob& sj) const;
  // adapter_act.cpp: what jobs hold on nodes besides their GPUs (headroom.hpp)
  [[nodiscard]] NodeShare share(JobId id) const;
  // What is held on node `n`: the model's jobs there and outside_.
  [[nodiscard]] NodeShare held_at(const Node& n) const;
  [[nodiscard]] std::string held_refusal_of(JobId id, const Placement& placement) const;
  void count_array_room();
  void refuse(const View& v, const std::string& why);
  void park(const View& v);
  [[nodiscard]] const View* view(const std::string& ref) const;
  [[nodiscard]] driver::Log::Fields who(JobId id) const { return core_->who(id); }
  [[nodiscard]] ClusterState& state() const { return core_->state(); }

  // adapter_act.cpp: actions
  bool act_update(Update u);
  bool act_requeue(const std::string& ref);
  bool act_cancel(const std::string& ref);
  [[nodiscard]] const std::string& act_error() const;
  [[nodiscard]] bool gpus_free_in_slurm(const SlurmJob& sj) const;
  [[nodiscard]] bool must_wait_for_revocation(const SlurmJob& sj) const;
  void note_requeue(SlurmJob& sj);
  void revoked_everywhere(SlurmJob& sj) const;
  void park_again(const SlurmJob& sj);
  std::string record_text(const SlurmJob& sj, const View* v, bool with_pin) const;
  std::optional<Expressed> express(const StartJob& s, SlurmJob& sj);

  const ControllerConfig& cfg_;
  driver::Log& log_;
  driver::Journal& journal_;
  driver::Fence& fence_;
  slurm::Actuator& act_;
  Tenants& tenants_;
  driver::Core* core_ = nullptr;
  Cluster cluster_;
  std::vector<NodeLimits> limits_;  // per node: CPUs and memory (feasible.hpp)
  // Per node: the CPUs and memory of the jobs Slurm runs there that the model does not (other
  // partitions, CPU-only jobs, DeepShare's own ending jobs), as of the last sync_held.
  std::vector<NodeShare> outside_;
  // The longest time limit of the pending jobs at the last observation (reservations.hpp).
  std::int64_t lead_s_ = kNoTimeLimit;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<SlurmJob> jobs_;                          // per JobId
  std::unordered_map<std::string, View> views_;         // this cycle's, by ref
  std::unordered_map<std::string, NodeUse> slurm_use_;  // GPUs Slurm has allocated, per node
  std::unordered_map<std::uint32_t, int> array_room_;   // %N throttle: tasks that may still go
  std::set<std::string> reported_;   // jobs whose bad record / refusal was logged
  std::set<std::string> untrusted_;  // jobs whose Comment carried pin keys (logged once)
  AdapterCounters counters_;
  bool tenants_refreshed_ = false;
  bool model_ignored_ = false;  // gpu_model_ignored reported
  std::int64_t decision_seq_ = 0;
  int kill_wait_s_ = 30;
  Consumable consumable_;
  driver::DriverClock clock_;
  Time now_ = 0;
  std::int64_t wall_ = 0;
};

}  // namespace ds::slurm
