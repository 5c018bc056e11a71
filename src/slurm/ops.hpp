// Operations helpers of the Slurm controller that need no libslurm (unit-tested in
// ops_test.cpp): what a configuration reload (SIGHUP) may change in a running controller,
// and the journal a replay starts with. The engine-agnostic parts (Prometheus writer, RPC
// statistics, the lent / borrowed accounting, the cycle's time) are in src/driver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ds::slurm {

struct ControllerConfig;  // slurm/config.hpp

// What a reloaded configuration changes: keys applied live, keys that need a restart
// (kept at their running value), and whether the policy must be rebuilt (policy, options
// or tenant knobs changed: the rebuilt policy forgets learned run times, as on a restart).
struct ReloadPlan {
  std::vector<std::string> live;
  std::vector<std::string> restart;
  bool rebuild_policy = false;
};
ReloadPlan plan_reload(const ControllerConfig& running, const ControllerConfig& next);

// Starts a replay's journal at `path` with the given clock (Controller::load_clock_from_journal
// reads it back) and a marker line. An existing file is replaced only if it carries that
// marker (an earlier replay into the same folder wrote it); any other file is left alone and
// the replay refused (InputError): `deepshare slurm replay` deletes no file it did not create.
void start_replay_journal(const std::string& path, std::int64_t wall0_ms, std::int64_t origin,
                          double scale);
inline constexpr const char* kReplayJournalMarker =
    "# journal of `deepshare slurm replay` (replaced by the next replay into this folder)";

}  // namespace ds::slurm
