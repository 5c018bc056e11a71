// Readers for the text Slurm's own commands print, shared by the Slurm importer's parts
// (slurm_sacct.cpp, slurm_assoc.cpp, slurm_nodes.cpp): the `--parsable2` tables of sacct and
// sacctmgr, and the values inside them (times, durations, TRES lists, GRES lists).
//
// Assumptions (docs/formats.md, "slurm", says the same for users):
//  1. A `--parsable2` table is '|'-separated with a header line naming the columns; there is
//     no quoting, so a value holding '|' (a job name, a comment) shifts the columns: such a
//     row is an error that says to leave that field out of --format. `--parsable` (a trailing
//     '|' on every line) is accepted too. Column names match without regard to case or
//     spaces ("Def QOS" = "DefQOS"), as sacct's --format does.
//  2. Times are Slurm's default "YYYY-MM-DDTHH:MM:SS" (SLURM_TIME_FORMAT unset), read without
//     a time zone (only differences matter; run sacct with TZ=UTC for epoch seconds);
//     "Unknown", "None" and "" mean no time.
//  3. Durations (Elapsed, Timelimit) are "[D-]HH:MM:SS", "MM:SS" or "SS" (with an optional
//     ".fff" that is dropped); "UNLIMITED", "Partition_Limit", "INVALID" and "" mean no limit.
//  4. A TRES list is "name=value,..." (billing=1,cpu=8,gres/gpu=2,gres/gpu:a100=2,mem=64G):
//     only the gres/gpu and gres/gpushare entries are read, the others only checked for shape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace ds {

class PipeTable {
 public:
  // Reads a whole file (at most limits::kMaxInputBytes); `command` is the command that
  // prints it ("sacct --parsable2 ..."), named in messages about the header.
  static PipeTable open(const std::string& path, std::string command);
  PipeTable(std::string name, std::string content, std::string command);

  // The first of `names` the header has (matched without case or spaces).
  [[nodiscard]] std::optional<std::size_t> find(
      std::initializer_list<std::string_view> names) const;
  // The same, or an InputError naming the file, the column and the command to run.
  [[nodiscard]] std::size_t require(std::initializer_list<std::string_view> names) const;
  [[nodiscard]] const std::vector<std::string>& header() const { return header_; }

  // The next non-blank row; false at the end. Throws InputError on a row of the wrong width.
  bool next();
  [[nodiscard]] std::string_view field(std::size_t i) const { return fields_[i].text; }
  [[nodiscard]] std::string_view row() const { return row_; }  // the whole line
  [[nodiscard]] long line() const { return line_; }
  [[nodiscard]] SourceLocation where(std::size_t i) const;
  [[nodiscard]] const std::string& name() const { return name_; }
  // "file:line:col: field 'X': expected ..., got '...'".
  [[noreturn]] void fail(std::size_t i, const std::string& expected) const;

 private:
  struct Field {
    std::string_view text;
    long column;
  };
  void split(std::string_view line, std::vector<Field>& out) const;

  std::string name_;
  std::string content_;
  std::string command_;
  std::vector<std::string> header_;
  std::vector<Field> fields_;
  std::string_view row_;
  bool trailing_ = false;  // `--parsable`: every line ends with '|'
  std::size_t pos_ = 0;
  long line_ = 0;
};

// Assumption 2: seconds since 1970-01-01 of a time as written; nullopt for "Unknown", "None"
// or ""; throws (through `t.fail`) for anything else that is not a time.
std::optional<std::int64_t> slurm_time(const PipeTable& t, std::size_t column);
// Assumption 3: whole seconds of a duration; nullopt for no limit; throws otherwise.
std::optional<std::int64_t> slurm_duration(const PipeTable& t, std::size_t column);
// A duration text alone (for values found outside a table); nullopt when not one.
std::optional<std::int64_t> parse_slurm_duration(std::string_view s);

// The GPU entries of a TRES list (assumption 4).
struct GpuTres {
  std::int64_t gpus = 0;    // gres/gpu
  std::int64_t shares = 0;  // gres/gpushare (DeepShare's colocation slot, docs/slurm.md §3)
  std::vector<std::pair<std::string, std::int64_t>> typed;  // gres/gpu:<type> = count
  bool has_gpus = false;                                    // a gres/gpu entry was there
};
// Parses the TRES list in `column`; throws for a malformed list or GPU count.
GpuTres slurm_tres(const PipeTable& t, std::size_t column);
// The same for text found elsewhere; the error message (empty when fine) goes to `error`.
GpuTres parse_tres(std::string_view s, std::string& error);

// One entry of a node's Gres list, "gpu:a100:8(S:0-1)": name "gpu", type "a100", count 8.
struct GresEntry {
  std::string name;
  std::string type;
  std::int64_t count = 1;
};
// Splits "gpu:a100:4(S:0),gpu:v100:2,gpushare:g0:1" (commas inside parentheses belong to the
// entry); an empty list or "(null)" gives none. The error (empty when fine) goes to `error`.
std::vector<GresEntry> parse_gres(std::string_view s, std::string& error);

// True for DeepShare's per-index GPU types g0, g1, ... (docs/slurm.md §3): they name GPU
// indices, not models.
bool is_index_gpu_type(std::string_view type);

}  // namespace ds
