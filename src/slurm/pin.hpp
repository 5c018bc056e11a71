// DeepShare's per-job record inside Slurm: the job Comment, "ds:k=v;k=v;...".
//
// Why the Comment: it lives in slurmctld's own state, so a restarted controller rebuilds
// every placement decision from Slurm alone, and the TaskProlog (scripts/slurm/
// task-prolog.sh) on the compute node reads the GPU pin from it. Keys:
//   r  restart count the pin belongs to (a pin with r != Slurm's restart count is stale)
//   b  1 = borrowed (preemptible)      s  1 = shared (MPS client on a partner's GPU)
//   g  GPUs per node: "node1@0,1/node2@3"   m  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
//   t  controller time of the decision (ms)
// Keys set at submission (u = GPU util %, mem = GPU memory MiB, trace = trace job name)
// are kept when the pin is written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ds::slurm {

struct Pin {
  std::uint32_t restart = 0;
  bool borrowed = false;
  bool shared = false;
  std::map<std::string, std::uint64_t> gpus;  // node -> GPU mask
  int mps_percent = 100;
  std::int64_t decided_ms = 0;
};

using CommentFields = std::map<std::string, std::string>;

CommentFields parse_comment(const std::string& comment);
std::string format_comment(const CommentFields& fields);
// The pin in a comment, if any (regardless of its restart count).
std::optional<Pin> read_pin(const CommentFields& fields);
// Writes the pin keys into `fields`, keeping the others.
void write_pin(CommentFields& fields, const Pin& pin);
void clear_pin(CommentFields& fields);
std::string mask_to_list(std::uint64_t mask);  // 0b1011 -> "0,1,3"

}  // namespace ds::slurm
