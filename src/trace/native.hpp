// Importer for DeepShare's own documented CSV ("native"), and for any CSV whose columns can
// be mapped onto it with FIELD=COLUMN pairs (--columns submit_s=SubmitTime,...).
//
// Assumptions (docs/formats.md, "native", says the same for users):
//  1. Required fields: job_id, tenant, submit_s, duration_s, gpus. Optional: user, state,
//     model, gpu_util, gmem_mib, gpu_milli, qos, gpu_type. A field is read from the column of the
//     same name unless a mapping names another column; extra columns are ignored.
//  2. submit_s and duration_s are seconds, decimals allowed, both >= 0, rounded to the nearest
//     millisecond. gpus >= 1; rows with gpus = 0 are CPU jobs, skipped and counted in notes.
//  3. state: COMPLETED / CANCELLED / FAILED, anything else Other; absent or empty: COMPLETED.
//     gpu_util in percent 0..100; gmem_mib >= 0; gpu_milli 1..1000, < 1000 only with gpus = 1;
//     qos LS / BE / Burstable / Guaranteed; gpu_type the GPU model(s) the job needs ("A100",
//     alternatives "V100M16|V100M32"). Empty optional cells mean unknown.
//  4. The format carries no cluster: load_native() makes one tenant per distinct tenant name
//     (first-seen order) and no nodes; load_trace() requires a cluster file (--cluster) for
//     this format, which supplies the nodes and tenants (no sizing rule is guessed).
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"

namespace ds {

struct NativeField {
  const char* name;
  bool required;
  const char* meaning;
};

// The fields of the native format, in documentation order.
const std::vector<NativeField>& native_fields();

struct NativeOptions {
  // "FIELD=COLUMN" mappings; an entry may hold several, separated by commas.
  std::vector<std::string> columns;
};

Workload load_native(const std::string& path, const NativeOptions& options = {});

}  // namespace ds
