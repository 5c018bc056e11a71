// The options that name a replay excerpt (`deepshare k8s replay`) and the ExcerptSpec they
// build: the checks of slurm_commands.cpp's own copy (`slurm replay`, `excerpt`), which is
// to use this one.
#pragma once

#include <string>

#include "replay/excerpt.hpp"

namespace CLI {
class App;
}

namespace ds {

struct ExcerptArgs {
  std::string config;
  std::string trace;
  std::string format = "venus";
  std::string excerpt = "jobs=200";
  double time_scale = 60;
};

void add_excerpt_options(CLI::App* cmd, ExcerptArgs& args);
slurm::ExcerptSpec excerpt_spec(const ExcerptArgs& args);

}  // namespace ds
