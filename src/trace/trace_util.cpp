#include "trace/trace_util.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace ds {

FinalState parse_final_state(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  if (u == "COMPLETED") return FinalState::Completed;
  if (u.starts_with("CANCELLED")) return FinalState::Cancelled;
  if (u == "FAILED") return FinalState::Failed;
  return FinalState::Other;
}

ProfileColumns::ProfileColumns(const CsvReader& csv)
    : model_(csv.find_column("model")),
      dataset_(csv.find_column("dataset")),
      batch_(csv.find_column("batchsize")),
      amp_(csv.find_column("amp")),
      util_(csv.find_column("gpu_util")),
      gmem_(csv.find_column("gmem")) {
  if (!gmem_) gmem_ = csv.find_column("gmem_mib");
}

void ProfileColumns::read(const CsvReader& csv, Workload& w, JobSpec& job) const {
  if (model_ && !csv.empty_field(*model_)) {
    Profile p;
    p.model = std::string(csv.field(*model_));
    if (dataset_) p.dataset = std::string(csv.field(*dataset_));
    if (batch_ && !csv.empty_field(*batch_)) p.batch_size = static_cast<int>(csv.get_int(*batch_));
    if (amp_ && !csv.empty_field(*amp_)) p.amp = csv.get_int(*amp_) != 0;
    job.profile = w.intern_profile(p);
  }
  if (util_ && !csv.empty_field(*util_)) {
    const double u = csv.get_double(*util_);
    if (u < 0 || u > 100) csv.fail(*util_, "a GPU utilization in percent (0..100)");
    job.gpu_util = u;
  }
  if (gmem_ && !csv.empty_field(*gmem_)) {
    const double m = csv.get_double(*gmem_);
    if (m < 0) csv.fail(*gmem_, "GPU memory in MiB >= 0");
    job.gpu_memory_mib = m;
  }
}

}  // namespace ds
