// DeepShare's record of a job inside Slurm: the job's AdminComment, "ds:k=v;k=v;...".
//
// Why the AdminComment: only Slurm operators can write it (a user's sbatch or
// `scontrol update AdminComment=` is refused by slurmctld), every user can read it, and it
// lives in slurmctld's own state. So a restarted controller rebuilds its decisions from
// Slurm alone, and nothing a user writes can forge one. Two writers, two key sets:
//   the submission gate (deploy/slurm/job_submit.lua), at submit:
//     v  record version (1)        gpus  GPUs in all        n  nodes (whole nodes if > 1)
//     nr 1 = cannot be preempted (--no-requeue, interactive): never borrows
//     mem GPU memory MiB per GPU, u GPU utilisation % (hints for sharing)
//     begin  the user's --begin (Unix seconds); the job itself waits parked (BeginTime 2100)
//     trace  replay only: the trace job it stands in for
//     gm  the GPU model(s) the job needs: "a100" or "a100|v100" (JobSpec::gpu_type)
//   the controller, when it starts the job (the pin):
//     r  restart count the pin belongs to (a pin with r != Slurm's Restarts is stale)
//     b  1 = borrowed (preemptible)      s  1 = shared (colocated on a partner's GPUs)
//     g  GPUs per node "node1@0,1/node2@3"   m  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
//     l  MPS memory limit MiB (0: none)      t  controller time of the decision (ms)
//     p  restart count at which DeepShare requeued the job (its hold is DeepShare's)
//     x  why DeepShare refused the job (written before it cancels it)
//     e  the lease epoch of the controller that wrote the record last (lease.hpp): a
//        controller that sees a newer epoch than its own was deposed and stops acting
// Every value is validated with explicit ranges; a record that fails is reported, never
// guessed at (DESIGN §2a, trust boundary). The keys, kinds and ranges are the gate's table
// gate.KEYS (deploy/slurm/job_submit.lua), compiled in (record_keys.cmake): the gate accepts
// exactly what this parser reads; the site's bounds (the partition's GPUs, GPU memory) come
// on top (RecordLimits).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ds::slurm {

// BeginTime the gate gives a job that waits for DeepShare (2100-01-01T00:00:00Z).
constexpr std::int64_t kParkedBegin = 4102444800;

using RecordFields = std::map<std::string, std::string>;

// "ds:k=v;..." -> fields; empty when the text is not a DeepShare record.
RecordFields parse_fields(const std::string& text);
// Request keys first (gate order), then the rest in key order.
std::string format_fields(const RecordFields& fields);

// What the gate recorded at submit.
struct Request {
  int gpus = 0;
  int nodes = 1;
  bool no_requeue = false;
  double mem_mib = 0;  // 0: unknown
  double util = -1;    // -1: unknown
  std::int64_t begin_s = 0;
  std::string trace;
  std::string gpu_model;  // gm: "" any model, "A" or "A|B" (names: is_gpu_model)
};

// The controller's pin.
struct Pin {
  std::uint32_t restart = 0;
  bool borrowed = false;
  bool shared = false;
  std::map<std::string, std::uint64_t> gpus;  // node -> GPU mask
  int mps_percent = 100;
  std::int64_t mem_limit_mib = 0;
  std::int64_t decided_ms = 0;
};

struct Record {
  Request request;
  std::optional<Pin> pin;
  std::optional<std::uint32_t> preempted_at;  // p
  std::string refused;                        // x
  std::optional<std::uint64_t> epoch;         // e
};

struct RecordLimits {
  int max_gpus = 4096;
  double max_mem_mib = 1 << 20;
};

// The record in `text` (an AdminComment). nullopt when there is none; throws InputError
// naming the key when a value is out of range or malformed.
std::optional<Record> parse_record(const std::string& text, const RecordLimits& limits = {});
// Writes the pin (and p/x) into the fields, keeping the gate's keys.
void write_pin(RecordFields& fields, const Pin& pin);
void clear_pin(RecordFields& fields);

// True when a user-writable text (the job Comment) carries pin keys: a forged pin.
bool has_pin_keys(const std::string& comment);
// The begin time a user's `scontrol update StartTime=` left in the job's Comment (the gate
// writes it there: Slurm lets no user update carry an AdminComment); 0: none; nullopt when
// the Comment has no (valid) begin. It only ever delays or frees the user's own job.
std::optional<std::int64_t> comment_begin(const std::string& comment);

std::string mask_to_list(std::uint64_t mask);  // 0b1011 -> "0,1,3"

// A GPU model name as the gate and the controller's gpu_models accept it: letters, digits,
// '.', '_', '-' (no '|': that separates alternatives in gm=), and not a GPU index type g0..gN.
bool is_gpu_model(std::string_view name);

}  // namespace ds::slurm
