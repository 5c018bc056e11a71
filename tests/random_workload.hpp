// Random multi-tenant workloads for the rapidcheck property tests.
#pragma once

#include <rapidcheck.h>

#include "model/testing.hpp"

namespace ds::testing {

struct RandomWorkloadShape {
  int max_tenants = 3;
  int max_jobs = 80;
  bool profiles = false;  // give jobs GPU util and memory (so that sharing can happen)
};

// 1..max_tenants tenants with 1..3 8-GPU nodes each, jobs of 1..40 GPUs.
inline Workload random_workload(const RandomWorkloadShape& shape = {}) {
  const int tenants = *rc::gen::inRange(1, shape.max_tenants + 1);
  Workload w = make_workload(tenants, *rc::gen::inRange(1, 4), 8);
  const int jobs = *rc::gen::inRange(1, shape.max_jobs);
  for (int i = 0; i < jobs; ++i) {
    const int gpus = *rc::gen::element(1, 1, 2, 4, 8, 8, 12, 16, 24, 40);
    const double util = shape.profiles ? *rc::gen::inRange(5, 100) : -1;
    const double memory = shape.profiles ? *rc::gen::inRange(500, 16000) : 0;
    add_job(w, *rc::gen::inRange(0, tenants), gpus, *rc::gen::inRange(0, 2000),
            *rc::gen::inRange(0, 900), util, memory);
  }
  w.finalize();
  return w;
}

}  // namespace ds::testing
