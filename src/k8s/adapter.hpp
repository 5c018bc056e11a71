// The Kubernetes adapter: what is Kubernetes' in `deepshare k8s run`, and only that (the
// driver core, src/driver/core.hpp, does the rest; the Slurm adapter, src/slurm/adapter.hpp,
// is the other engine). It implements the driver's ports (driver/ports.hpp) over the API:
//  - observe(): this cycle's pods (the informer's cache, informer.hpp), grouped into jobs
//    (groups.hpp: a pod, or a gang of pods placed all-or-nothing), -> an Observation of the
//    jobs whose pods' spec.schedulerName is DeepShare's: key = the pod's UID (a gang's
//    "gang:NS/NAME", a Job's "job:UID": jobs.hpp), ref = NS/NAME, tenant = the namespace (a
//    namespace without a tenant, a pod asking for no nvidia.com/gpu or for more than any node has,
//    a gang the cluster cannot hold or whose pods disagree: refused, see below), GPUs = the pods'
//    nvidia.com/gpu or their DRA claims' GPUs (read_claims); phase: unbound -> waiting, bound ->
//    running, terminating and bound -> ending (it holds its GPUs until it is gone),
//    Succeeded/Failed -> ended (a gang's: groups.hpp); the placement from DeepShare's annotations
//    (pods.hpp) or, for a pod bound by someone else, GPUs of its node the model leaves free. A job
//    is preemptible when a controller (a Job) owns its pods: an evicted bare pod would be lost;
//  - nodes(): Node objects with allocatable nvidia.com/gpu; usable = Ready and not cordoned;
//  - sync_held(): the GPUs that pods the model does not run hold on each node (other
//    schedulers' pods, DeepShare's own ending ones), as kube-scheduler counts them;
//  - the actions (adapter_act.cpp): place = whole pods on nodes (each node of the decision
//    holds a whole number of the job's pods, else the pods are placed on the nodes whose GPUs
//    the model leaves free, or the start is deferred); hand_over = POST pods/NAME/binding for
//    each pod of the job, with the decision annotations on the Binding (the API server sets
//    both in one update; sent by the binder's threads when there is one, binder.hpp, the pod
//    counted bound until the outcome says otherwise), only once the API shows the nodes'
//    nvidia.com/gpu free for them
//    (bound, not ended pods + binds the cache does not show yet <= allocatable): a victim's
//    GPUs are reused only after the API shows it gone or ended; preempt = the Eviction API for
//    each bound pod (policy/v1, the pod's own grace period bounded by its tenant's: grace.hpp),
//    re-issued until confirmed; a gang that lost a pod while running has its other pods
//    evicted and starts again as a whole; reject / refuse = a Warning Event (FailedScheduling)
//    and the condition PodScheduled=False with the reason on each pod, left unbound for its
//    owner to delete.
// Every write to the API (annotate, bind, evict, Event, condition) goes through the leader
// fence (driver/fence.hpp, a Lease: leader.hpp) and the decision carries its epoch; a bound
// pod whose decision has a newer epoch than ours means another leader acts: this one stops.
// GPUs as nvidia.com/gpu or as DRA devices (dra.hpp: a pod's claims give its GPUs; bind()
// writes their allocation first). Whole GPUs only (no MPS): docs/kubernetes.md §8.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/clock.hpp"
#include "driver/core.hpp"
#include "driver/fence.hpp"
#include "driver/journal.hpp"
#include "driver/log.hpp"
#include "driver/ports.hpp"
#include "driver/prometheus.hpp"
#include "k8s/binder.hpp"
#include "k8s/client.hpp"
#include "k8s/dra.hpp"
#include "k8s/grace.hpp"
#include "k8s/groups.hpp"
#include "k8s/jobs.hpp"
#include "k8s/pods.hpp"
#include "k8s/work_slots.hpp"

namespace ds::k8s {

struct AdapterCounters {
  std::uint64_t refused = 0;          // pods refused before admission (Event + condition)
  std::uint64_t binds = 0;            // bindings the API accepted
  std::uint64_t evictions = 0;        // evictions the API accepted
  std::uint64_t api_failures = 0;     // calls the API refused or that got no answer
  std::uint64_t waits_for_gpus = 0;   // hand-overs deferred: the API shows the GPUs held
  std::uint64_t wait_conditions = 0;  // PodScheduled=False conditions written for waiting pods
  // Bindings sent by the binder: from the hand-over to the API's answer (its queue included).
  driver::Histogram bind_seconds{driver::latency_buckets()};
};

class K8sAdapter final : public driver::ClusterSource, public driver::Actuator {
 public:
  // `ns_tenants`: namespace -> tenant; `scheduler`: the schedulerName DeepShare serves;
  // `fence`: asked before every write (it outlives the adapter).
  K8sAdapter(Client& client, driver::Log& log, driver::Journal& journal, driver::Fence& fence,
             std::map<std::string, TenantId> ns_tenants, std::string scheduler = "deepshare");

  // The GPU nodes (allocatable nvidia.com/gpu > 0) of the first Node list, in natural name
  // order; throws InputError when there is none. Nodes added later are not used (restart).
  void load_nodes(const std::vector<NodeView>& nodes, std::int64_t gpu_memory_mib);
  [[nodiscard]] const Cluster& cluster() const { return cluster_; }
  void attach(driver::Core& core) { core_ = &core; }
  // Nodes of `nodes` with allocatable nvidia.com/gpu that this adapter's cluster lacks.
  [[nodiscard]] std::vector<std::string> new_gpu_nodes(const std::vector<NodeView>& nodes) const;
  // What a successor adapter (nodes added: scheduler.cpp rebuilds the model) must not lose:
  // bindings the cache does not show yet, pods told why they are refused or rejected, the
  // work items' slots, the counters.
  void inherit(const K8sAdapter& old);

  // The Jobs whose pods may be gangs (jobs.hpp), read by every set_cycle (it outlives the
  // adapter); none: every Job's pods are jobs of their own.
  void use_jobs(const JobIndex& jobs) { jobs_index_ = &jobs; }
  // Bindings, Events and waiting pods' conditions go to `binder` (binder.hpp: worker threads;
  // it outlives the adapter) and their outcomes are read at the next set_cycle; none: each is
  // sent in the call that decides it.
  void use_binder(Binder* binder) { binder_ = binder; }
  // GPUs as DRA devices (dra.hpp): this cycle's claims and the nodes' devices, updated by the
  // scheduler before each set_cycle (both outlive the adapter). Without them a pod with
  // resource claims is refused (the API serves no resource.k8s.io/v1).
  void use_dra(const ClaimIndex& claims, const NodeDeviceMap& devices, DraConfig config) {
    claims_index_ = &claims;
    devices_ = &devices;
    dra_ = std::move(config);
  }
  // The outcomes of the bindings the binder sent since the last call (set_cycle calls it): a
  // refused one is shown unbound again (its hand-over is retried or rolled back by the core).
  void collect_binds();
  // This cycle's objects (the informers' snapshots) and times. A pod object seen in the last
  // cycle (the same pointer: the informer stores a new one for each change) is not read again.
  void set_cycle(const std::vector<std::shared_ptr<const json>>& pods,
                 const std::vector<NodeView>& nodes, Time now, std::int64_t wall_ms,
                 const driver::DriverClock& clock);
  // GPUs that pods outside the model's running jobs hold, into the core's state.
  void sync_held();
  [[nodiscard]] const AdapterCounters& counters() const { return counters_; }
  // The tenants changed (tenants.hpp): a pod refused for its namespace is admitted once that
  // namespace is a tenant; a namespace dropped admits no new pod.
  void set_tenants(std::map<std::string, TenantId> ns_tenants);
  // The tenants' grace periods for evictions (grace.hpp; default: 30 s for every tenant).
  void set_grace(GracePeriods grace) { grace_ = std::move(grace); }
  // Tells a pod why DeepShare will not place it (Event + PodScheduled=False).
  void tell(const PodView& p, const std::string& reason, const char* event_reason);
  // Waiting pods told why they wait (PodScheduled=False, reason Unschedulable, the typed
  // waiting reason in the message), each only when its reason changed since it was last
  // told, at most `max_writes` per call (the rest at the next cycle): 10,000 pods that start
  // waiting at once cost 10,000 writes spread over cycles, and nothing while they wait on.
  // With a binder, at most `max_writes` wait for its workers at any time.
  void report_waits(std::size_t max_writes);

  // --- driver::ClusterSource ---
  std::optional<driver::Observation> observe() override;
  std::optional<std::vector<driver::EngineNode>> nodes() override;
  [[nodiscard]] const std::string& last_error() const override { return error_; }

  // --- driver::Actuator ---
  void admitted(JobId, const driver::EngineJob&) override;
  void observed(JobId, const driver::EngineJob&) override;
  void forgotten(JobId) override;
  WaitReason eligible(JobId, const driver::EngineJob&) override;
  Handover hand_over(JobId) override;
  void take_back(JobId) override;
  void repeat_preempt(JobId) override;
  bool reject(JobId, const std::string& reason) override;
  Preemption preempt(JobId, const driver::EngineJob&) override;
  std::optional<Placement> place(const StartJob& d) override;
  void decided(const StartJob& applied, Time queued_since, bool moved) override;

 private:
  // What the adapter keeps per job (ids as the core's).
  struct PodJob {
    std::string key, ns, name;  // name: the pod's, the gang's or the Job's
    bool gang = false, job = false;
    int size = 1, pod_gpus = 0;           // its pods, and each one's nvidia.com/gpu
    Requests pod_requests;                // each pod's CPU and memory (its first pod's)
    std::vector<std::string> host_ports;  // each pod's host ports (its first pod's)
    std::optional<StartJob> start;        // the current decision, until it is handed over
    WaitReason told = WaitReason::None;   // the waiting reason its pods' conditions say
    [[nodiscard]] std::string ref() const { return job_ref(ns, gang, job, name); }
  };
  // A binding the API accepted that the cache does not show yet.
  struct Assumed {
    std::string node;
    int gpus = 0;
    std::int64_t wall = 0;
  };

  // adapter.cpp: observation
  // Makes a pod of an Indexed Job that runs its pods together one of its Job's gang, and a pod
  // of another Job one of its work items (jobs.hpp: by its index, or `slotted`: a NonIndexed
  // Job's, whose slot set_cycle gives); false while its Job is not listed yet and it is new
  // (kJobReadMs: pods and Jobs come through two watches), so that it waits for it rather than
  // being a job of its own for a cycle.
  bool join_job(PodView& p, bool& slotted) const;
  static constexpr std::int64_t kJobReadMs = 10'000;
  // A Job's gang (key "job:UID") whose Job is finished or no longer listed: no more pods come.
  [[nodiscard]] bool job_over(const std::string& key) const;
  // A job seen the first time: true when admitted, with the nodes its pods' rules allow in
  // `allowed` (empty: every node); else told why once.
  bool admit(const PodGroup& g, std::vector<std::uint8_t>& allowed);
  // The nodes a pod may run on by its rules and, where some GPU nodes publish their GPUs as DRA
  // devices and others as nvidia.com/gpu, by how it asks for GPUs (`dra`: by claims); empty:
  // every node.
  [[nodiscard]] std::vector<std::uint8_t> allowed_nodes(const NodeRules& rules, bool dra) const;
  // A pod's DRA claims -> its GPUs, or why DeepShare cannot allocate them, or that one is not
  // listed yet (PodView::claim_refusal, claims_pending).
  void read_claims(PodView& p) const;
  // The GPUs of its node that `p`'s allocated claims name (empty: none, or not all known).
  [[nodiscard]] std::vector<int> claimed_gpus(const PodView& p) const;
  // The allocations of `p`'s claims for GPUs `gpus` of `node` (error: why there are none).
  [[nodiscard]] std::vector<ClaimWrite> claim_writes(const PodView& p, const std::string& node,
                                                     const std::vector<int>& gpus,
                                                     std::string& error) const;
  void refuse(const PodGroup& g, const std::string& why);
  driver::EngineJob engine_job(const PodGroup& g);
  // A bound pod's GPUs: DeepShare's annotation, our own decision, else GPUs of its node that
  // no other listed pod holds (`taken_`, per node).
  Placement placement_of(const PodView& p);
  [[nodiscard]] const PodView* pod(const std::string& uid) const;
  [[nodiscard]] const PodGroup* group(const std::string& key) const;
  void keep_absent_gangs();
  [[nodiscard]] bool start_in_flight(const std::string& key) const;
  [[nodiscard]] int api_free(const std::string& node) const;
  [[nodiscard]] ClusterState& state() const { return core_->state(); }

  // adapter_act.cpp: actions
  bool evict(const PodView& p);
  // Evicts the job's bound pods that are not ending yet; false when an eviction failed.
  bool evict_bound(const PodJob& j);
  // Binds one pod (decision annotations on the Binding); false when the API refused.
  bool bind(const PodJob& j, const PodView& p, const Node& node, const std::vector<int>& gpus);
  void event(const PodView& p, const char* type, const char* reason, const char* action,
             const std::string& note);
  [[nodiscard]] static EventSpec event_spec(const PodView& p, const char* type, const char* reason,
                                            const char* action, const std::string& note);
  void api_failed(const char* what, const std::string& ref, const ApiError& e);
  // Until when a write handed to the binder may still go out (the leader fence's window).
  [[nodiscard]] SendBy send_by() const;
  // PodScheduled=False with `message` (a refusal or a waiting reason).
  void condition(const PodView& p, const std::string& message);

  Client& client_;
  driver::Log& log_;
  driver::Journal& journal_;
  driver::Fence& fence_;
  std::map<std::string, TenantId> ns_tenants_;
  GracePeriods grace_;
  std::string scheduler_;
  driver::Core* core_ = nullptr;
  Cluster cluster_;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<PodJob> jobs_;  // per JobId
  // Every listed pod, by uid: its object (to tell whether it changed: the informer stores a
  // new one for each change), the view read from it, and this cycle's view (the read one, with
  // a binding the cache does not show yet and its Job's gang). An unchanged pod costs no read
  // and no copy; the entries stay where they are while the pod is listed.
  struct CachedPod {
    std::shared_ptr<const json> object;
    PodView read;
    PodView view;
    bool derived = false;     // view differs from read
    std::uint64_t cycle = 0;  // the last cycle that listed it
  };
  std::unordered_map<std::string, CachedPod> pod_cache_;
  std::unordered_map<const json*, CachedPod*> by_object_;  // each entry's object
  std::vector<CachedPod*> pods_;                           // this cycle's, by uid
  std::uint64_t cycle_ = 0;
  Grouping grouping_;  // this cycle's jobs of DeepShare's pods (into pod_cache_)
  const JobIndex* jobs_index_ = nullptr;
  WorkSlots slots_;  // NonIndexed Jobs' work items
  Binder* binder_ = nullptr;
  const ClaimIndex* claims_index_ = nullptr;  // use_dra()
  const NodeDeviceMap* devices_ = nullptr;
  DraConfig dra_;
  // Gangs listed without pods, since (wall ms): keep_absent_gangs().
  std::unordered_map<std::string, std::int64_t> absent_;
  static constexpr std::int64_t kGangAbsenceMs = 30'000;
  std::vector<NodeView> node_views_;                 // this cycle's
  std::unordered_map<std::string, int> node_alloc_;  // allocatable nvidia.com/gpu
  bool mixed_kinds_ = false;  // some GPU nodes' GPUs are DRA devices, others nvidia.com/gpu
  void set_nodes(const std::vector<NodeView>& nodes);
  std::unordered_map<std::string, int> api_used_;  // node -> GPUs the API shows held
  // Room on a node besides GPUs (node_room.hpp): what its bound pods request (as the API
  // shows them, with bindings it does not show yet), what starts decided and not bound yet
  // will (placed_, computed once a cycle when a start is placed), what it allocates.
  std::unordered_map<std::string, Requests> api_requests_;
  std::unordered_map<std::string, Requests> placed_;
  std::uint64_t placed_cycle_ = 0;
  std::unordered_map<std::string, Requests> node_allocatable_;
  // Host ports bound on a node by its pods (API) and by starts not bound yet (placed).
  std::unordered_map<std::string, std::vector<std::string>> api_ports_, placed_ports_;
  void refresh_placed();
  // Why `pods` more pods of `j` do not fit on `node` ("" when they do).
  [[nodiscard]] std::string room_refusal_on(const PodJob& j, const std::string& node, int pods,
                                            bool api_only) const;
  std::unordered_map<std::string, std::uint64_t> taken_;  // node -> GPUs placed this cycle
  std::unordered_map<std::string, Assumed> assumed_;      // uid -> binding not in the cache yet
  // Jobs told why they are not placed (never admitted): key -> the reason.
  std::map<std::string, std::string> refused_;
  std::set<std::string> told_refused_;             // their pods told so (uids)
  std::map<std::string, std::string> untenanted_;  // refused for their namespace: key -> ns
  std::set<std::string> rejected_;                 // jobs the policy rejected (no longer listed)
  AdapterCounters counters_;
  std::string error_;
  driver::DriverClock clock_;
  Time now_ = 0;
  std::int64_t wall_ = 0;
};

}  // namespace ds::k8s
