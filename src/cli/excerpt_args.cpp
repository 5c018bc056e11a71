#include "cli/excerpt_args.hpp"

#include <CLI/CLI.hpp>

namespace ds {

void add_excerpt_options(CLI::App* cmd, ExcerptArgs& a) {
  cmd->add_option("--config", a.config, "Controller YAML; tenants name their trace tenant")
      ->required();
  cmd->add_option("--trace", a.trace, "Trace file")->required();
  cmd->add_option("--format", a.format, "Trace format")->capture_default_str();
  cmd->add_option("--excerpt", a.excerpt, "from=N,jobs=N,load=F,min=WALL_S,max=WALL_S")
      ->capture_default_str();
  cmd->add_option("--time-scale", a.time_scale, "Trace seconds per wall second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
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
