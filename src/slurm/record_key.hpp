// One key of DeepShare's record: who writes it, the kind of its value, its range. The table
// of them (record_keys.hpp, kRecordKeys) is generated from the gate's gate.KEYS
// (deploy/slurm/job_submit.lua; src/slurm/record_keys.cmake), so that gate and controller
// share one definition of a valid value.
#pragma once

#include <cstdint>
#include <string_view>

namespace ds::slurm {

struct RecordKey {
  std::string_view name;
  std::string_view writer;  // user (--comment at submit), gate, pin (the controller)
  std::string_view kind;    // int, num, flag, name, models, text, gpus
  long long min = 0;
  long long max = 0;
};

}  // namespace ds::slurm
