// Tiling: a larger workload made of copies of one trace, for scale experiments
// (bench/scale.sh, docs/performance.md) and the scale-invariance test.
//
// Definition (TileOptions: copies K, repeats R, period P, jitter J, seed):
//  1. Copy c = 0..K-1 is the whole input side by side with the others: its own tenants
//     (quota, SLO and class as in the input) and its own nodes (as many, of the same kind,
//     owned by its copy of the tenant); nodes without an owner (a shared pool) are copied
//     too. Copy 0 keeps every name; copy c >= 1 appends "#c" to tenant, node and user names
//     (users are per copy, so that no learned history is shared between copies).
//  2. Repeat r = 0..R-1 is the input again, shifted by r x P in time (the same site in the
//     next period; same tenants, nodes and users).
//  3. Copy c's arrivals are shifted by a jitter d_c seconds: d_0 = 0, and d_c for c >= 1 is
//     a uniform integer in [0, J] drawn in copy order from Rng(seed) (core/rng.hpp:
//     portable, so the same seed gives the same workload everywhere). J = 0: copies arrive
//     in lockstep.
//  4. Jobs are ordered by submit time; equal times keep (repeat, copy, input order). Job
//     names: the input's for (c, r) = (0, 0), else "<name>#c.r". K = R = 1 (any J) gives the
//     input itself.
// write_venus() writes a workload as a Lucid-prepared Venus CSV (the columns load_venus
// reads; lucid_vc_order = the row, which keeps the order of equal submit times) and its
// vc_config.csv, so that `deepshare simulate --format venus` replays a tiled trace through
// the real command. It requires whole seconds, 8-GPU nodes owned by tenants and tenants
// whose quota is their nodes' GPUs (as every Venus-format workload has).
#pragma once

#include <cstdint>
#include <string>

#include "model/workload.hpp"

namespace ds {

struct TileOptions {
  int copies = 1;               // K
  int repeats = 1;              // R
  Time period = 30 * kDay;      // P: shift between repeats
  Time jitter = 600 * kSecond;  // J: largest per-copy arrival shift (whole seconds)
  std::uint64_t seed = 1;
};

// Throws InputError on options out of range (K, R >= 1; P > 0; J >= 0).
Workload tile_workload(const Workload& w, const TileOptions& o);

// Writes `jobs_csv` and `vc_config_csv` (see above); throws InputError when the workload
// cannot be expressed in the Venus format, or a file cannot be written.
void write_venus(const Workload& w, const std::string& jobs_csv, const std::string& vc_config_csv);

}  // namespace ds
