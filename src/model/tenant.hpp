// A tenant: a team or virtual cluster with a guaranteed GPU quota and an SLO.
#pragma once

#include <string>

#include "core/types.hpp"

namespace ds {

enum class TenantClass : std::uint8_t { Guaranteed, BestEffort };

struct Tenant {
  TenantId id;
  std::string name;
  int quota_gpus = 0;             // guaranteed GPUs (Venus: the VC's GPUs)
  Time slo_queue = seconds(300);  // target queueing delay W_t for entitled jobs
  double max_slowdown = 1.5;      // largest tolerated sharing slowdown (run time factor)
  TenantClass cls = TenantClass::Guaranteed;
  double weight = 1.0;
  Time checkpoint_interval = 30 * kMinute;  // 0: a job checkpoints when it is preempted
};

const char* to_string(TenantClass c);

}  // namespace ds
