// Reader for Lucid's colocation profiles. Assumptions (PROVENANCE.md of venus-sept):
//  - colocate_info.csv: one row per measured pair of 1-GPU jobs on one GPU; speedX is
//    colocated / exclusive throughput of job X (noise makes some values exceed 1).
//    The gpu_num columns are read but not used as keys: every measured pair is 1 + 1 GPU,
//    and a multi-GPU job shares each of its GPUs with the same per-GPU pattern.
//  - single_data.csv: one row per profiled configuration (util, memory, sharing label).
//  - A pair measured twice keeps its first row (Lucid's lookup also takes the first match).
#include "model/colocation.hpp"

#include <filesystem>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPairsFile = "colocate_info.csv";
constexpr const char* kSinglesFile = "single_data.csv";

struct ProfileCols {
  std::size_t model, dataset, batch, amp;
};

Profile read_profile(const CsvReader& csv, const ProfileCols& c) {
  Profile p;
  p.model = std::string(csv.field(c.model));
  if (p.model.empty()) csv.fail(c.model, "a model name");
  p.dataset = std::string(csv.field(c.dataset));
  const auto batch = csv.get_int_lenient(c.batch);
  if (batch <= 0 || batch > 1'000'000) csv.fail(c.batch, "a batch size >= 1");
  p.batch_size = static_cast<int>(batch);
  const auto amp = csv.get_int_lenient(c.amp);
  if (amp != 0 && amp != 1) csv.fail(c.amp, "0 or 1");
  p.amp = amp == 1;
  return p;
}

double read_speed(const CsvReader& csv, std::size_t i) {
  const double v = csv.get_double(i);
  // A shared job that made no progress would have been measured as a failure, not 0.
  if (!(v > 0) || v > 100) csv.fail(i, "a normalized speed in (0, 100]");
  return v;
}

double read_nonneg(const CsvReader& csv, std::size_t i, double max, const char* what) {
  const double v = csv.get_double(i);
  if (!(v >= 0) || v > max) csv.fail(i, what);
  return v;
}

std::string pair_key(const Profile& a, const Profile& b) {
  return profile_key(a) + "#" + profile_key(b);
}

}  // namespace

std::string profile_key(const Profile& p) {
  return p.model + "|" + p.dataset + "|" + std::to_string(p.batch_size) + "|" + (p.amp ? "1" : "0");
}

bool ColocationTable::available(const std::string& aux_dir) {
  std::error_code ec;
  return !aux_dir.empty() && fs::is_regular_file(fs::path(aux_dir) / kPairsFile, ec) &&
         fs::is_regular_file(fs::path(aux_dir) / kSinglesFile, ec);
}

ColocationTable ColocationTable::load(const std::string& aux_dir) {
  ColocationTable t;
  {
    CsvReader csv = CsvReader::open((fs::path(aux_dir) / kSinglesFile).string());
    csv.read_header();
    const ProfileCols pc{csv.require_column("model"), csv.require_column("dataset"),
                         csv.require_column("batchsize"), csv.require_column("amp")};
    const auto c_speed = csv.require_column("speed");
    const auto c_util = csv.require_column("gpu_util");
    const auto c_gmem_util = csv.require_column("gmem_util");
    const auto c_gmem = csv.require_column("gmem");
    const auto c_label = csv.find_column("label");
    while (csv.next()) {
      SingleProfile s;
      s.profile = read_profile(csv, pc);
      s.speed = csv.get_double(c_speed);  // throughput (samples/s), not normalized
      if (!(s.speed > 0) || s.speed > 1e12) csv.fail(c_speed, "a throughput > 0");
      s.gpu_util = read_nonneg(csv, c_util, 100, "a GPU utilization in percent (0..100)");
      s.gmem_util = read_nonneg(csv, c_gmem_util, 100, "a memory utilization in percent (0..100)");
      s.gmem_mib = read_nonneg(csv, c_gmem, 1e7, "GPU memory in MiB >= 0");
      if (c_label) {
        const auto label = csv.get_int_lenient(*c_label);
        if (label < 0 || label > 2) csv.fail(*c_label, "a sharing label 0, 1 or 2");
        s.share_label = static_cast<int>(label);
      }
      if (t.single_index_.emplace(profile_key(s.profile), t.singles_.size()).second)
        t.singles_.push_back(std::move(s));
    }
  }
  CsvReader csv = CsvReader::open((fs::path(aux_dir) / kPairsFile).string());
  csv.read_header();
  const ProfileCols a{csv.require_column("model1"), csv.require_column("dataset1"),
                      csv.require_column("batchsize1"), csv.require_column("amp1")};
  const ProfileCols b{csv.require_column("model2"), csv.require_column("dataset2"),
                      csv.require_column("batchsize2"), csv.require_column("amp2")};
  const auto c_s1 = csv.require_column("speed1");
  const auto c_s2 = csv.require_column("speed2");
  const auto c_util = csv.require_column("gpu_util");
  const auto c_gmem = csv.require_column("gmem");
  while (csv.next()) {
    MeasuredPair m;
    m.a = read_profile(csv, a);
    m.b = read_profile(csv, b);
    m.speed_a = read_speed(csv, c_s1);
    m.speed_b = read_speed(csv, c_s2);
    m.gpu_util = read_nonneg(csv, c_util, 100, "a GPU utilization in percent (0..100)");
    m.gmem_mib = read_nonneg(csv, c_gmem, 1e7, "GPU memory in MiB >= 0");
    if (t.pair_index_.emplace(pair_key(m.a, m.b), t.pairs_.size()).second)
      t.pairs_.push_back(std::move(m));
  }
  return t;
}

ColocationTable ColocationTable::from_rows(std::vector<MeasuredPair> pairs,
                                           std::vector<SingleProfile> singles) {
  ColocationTable t;
  for (auto& s : singles)
    if (t.single_index_.emplace(profile_key(s.profile), t.singles_.size()).second)
      t.singles_.push_back(std::move(s));
  for (auto& m : pairs)
    if (t.pair_index_.emplace(pair_key(m.a, m.b), t.pairs_.size()).second)
      t.pairs_.push_back(std::move(m));
  return t;
}

std::optional<std::pair<double, double>> ColocationTable::lookup(const Profile& a,
                                                                 const Profile& b) const {
  if (auto it = pair_index_.find(pair_key(a, b)); it != pair_index_.end()) {
    const MeasuredPair& m = pairs_[it->second];
    return std::pair{m.speed_a, m.speed_b};
  }
  if (auto it = pair_index_.find(pair_key(b, a)); it != pair_index_.end()) {
    const MeasuredPair& m = pairs_[it->second];
    return std::pair{m.speed_b, m.speed_a};
  }
  return std::nullopt;
}

const SingleProfile* ColocationTable::single(const Profile& p) const {
  const auto it = single_index_.find(profile_key(p));
  return it == single_index_.end() ? nullptr : &singles_[it->second];
}

}  // namespace ds
