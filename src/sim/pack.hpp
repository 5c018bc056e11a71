// The packing experiment of the FGD paper, on any trace and policy: tasks arrive one
// by one in trace order onto the cluster and never leave; we measure how many are
// admitted and how fragmented the cluster gets as it fills.
//
// Algorithm:
//  1. Copy the workload; task i arrives at i x `interval` and runs "forever" (100 years).
//  2. Simulate under the policy. Each task gets one interval to be placed, long enough for
//     policies that wait before reclaiming (DeepShare's SLO deadline is 270 s); a task still
//     pending when the next one arrives counts as not admitted (a policy may keep it queued:
//     with nothing ever leaving, it only starts when the "forever" runs end).
//  3. Before each arrival, record the allocated GPUs and the FGD fragmentation of the free
//     capacity (sim/fragmentation.hpp).
//  4. Admitted = started within its interval; shares per QoS class, by tasks and by GPUs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/workload.hpp"
#include "policy/policy.hpp"

namespace ds {

struct PackPoint {
  std::size_t arrived = 0;     // tasks arrived so far
  double requested_gpus = 0;   // their GPU requests (milli / 1000 x GPUs)
  double allocated_gpus = 0;   // capacity in use
  double fragmented_gpus = 0;  // FGD fragmentation of the free capacity
};

struct PackClassResult {
  std::size_t tasks = 0, admitted = 0;
  double requested_gpus = 0, admitted_gpus = 0;
};

struct PackResult {
  std::vector<PackPoint> curve;                   // ~200 points
  std::map<std::string, PackClassResult> by_qos;  // "LS", "BE", ..., and "all"
  int capacity_gpus = 0;
};

// `make` builds the policy for the transformed workload (arrival times differ).
using PackPolicyFactory = std::function<std::unique_ptr<Policy>(const Workload&)>;
PackResult run_packing(const Workload& workload, const PackPolicyFactory& make,
                       Time interval = seconds(600));

}  // namespace ds
