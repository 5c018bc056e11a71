// Replays the fuzz targets' seeds and every input that once crashed one (see
// fuzz_target.hpp), in the release and ASan+UBSan builds: a fixed bug stays fixed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

namespace ds::fuzz {
namespace {
namespace fs = std::filesystem;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void replay(Target target, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), {});
  target(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
}

class FuzzTarget : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzTarget, SeedsAreValidInputs) {
  const Target target = registry().at(GetParam());
  const auto seeds = files_in(fs::path(DEEPSHARE_FUZZ_DIR) / "corpus" / GetParam());
  ASSERT_FALSE(seeds.empty()) << "no seed for " << GetParam();
  strict() = true;  // a seed that does not load is no good start for the fuzzer
  for (const auto& f : seeds) EXPECT_NO_THROW(replay(target, f)) << f;
  strict() = false;
}

TEST_P(FuzzTarget, FormerCrashesStayFixed) {
  const Target target = registry().at(GetParam());
  for (const auto& f : files_in(fs::path(DEEPSHARE_FUZZ_DIR) / "regressions" / GetParam()))
    EXPECT_NO_THROW(replay(target, f)) << f;
}

INSTANTIATE_TEST_SUITE_P(
    Parsers, FuzzTarget,
    ::testing::Values("csv", "venus", "helios", "openb", "native", "cluster_file", "run_folder",
                      "replay_folder", "cluster_placement", "slurm_record", "slurm_gres",
                      "controller_config", "slurm_sacct", "slurm_assoc", "slurm_nodes", "k8s_pods"),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(FuzzTargets, EveryTargetIsReplayed) {
  EXPECT_EQ(registry().size(), 16u);  // a new target must be added to the list above
}

}  // namespace
}  // namespace ds::fuzz
