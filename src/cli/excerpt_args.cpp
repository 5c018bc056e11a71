#include "cli/excerpt_args.hpp"

#include <CLI/CLI.hpp>

#include "cli/validators.hpp"
#include "replay/replay_folder.hpp"

namespace ds {

void add_excerpt_options(CLI::App* cmd, ExcerptArgs& a) {
  cmd->add_option("--config", a.config, "Controller YAML; tenants name their trace tenant")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--trace", a.trace, "Trace file")->required()->check(non_empty_path());
  cmd->add_option("--format", a.format, "Trace format")->capture_default_str();
  cmd->add_option("--excerpt", a.excerpt,
                  "from=N,jobs=N,load=F,min=WALL_S,max=WALL_S (each key once: from 0..1e7, jobs "
                  "1..1e7, load 0.001..1000, min and max 0..1e6 wall seconds, max 0: no cap)")
      ->capture_default_str();
  cmd->add_option("--time-scale", a.time_scale, "Trace seconds per wall second")
      ->capture_default_str()
      ->check(number_in(slurm::kMinTimeScale, slurm::kMaxTimeScale));
}

slurm::ExcerptSpec excerpt_spec(const ExcerptArgs& a) {
  slurm::ExcerptSpec spec;
  spec.trace = a.trace;
  spec.format = a.format;
  spec.time_scale = a.time_scale;
  slurm::parse_excerpt(a.excerpt, spec);
  return spec;
}

}  // namespace ds
