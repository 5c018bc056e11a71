// The output folder (complete or absent, one writer, no input replaced), the cleanup table
// behind the signal handler, and KEY=VALUE specs.
#include "core/output_folder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/spec.hpp"
#include "core/temp_dir_test_util.hpp"

namespace ds {
namespace {
namespace fs = std::filesystem;

struct TempDir : testing::ScratchDir {
  TempDir() : ScratchDir("deepshare-outdir-") {}
};

OutputRules ours_if_only(const std::string& file) {
  OutputRules r;
  r.replaceable = [file](const fs::path& dir) -> std::string {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename() != file) return "holds " + e.path().filename().string();
    return {};
  };
  return r;
}

TEST(OutputFolder, AppearsOnlyOnCommitAndLeavesNothingOtherwise) {
  TempDir d;
  const fs::path target = d.path / "sub" / "out";
  {
    OutputFolder out(target.string(), ours_if_only("a.txt"));
    write_file_atomic(out.path("a.txt").string(), "one");
    EXPECT_FALSE(fs::exists(target));        // staged beside it
  }                                          // not committed
  EXPECT_FALSE(fs::exists(d.path / "sub"));  // the parent it created is gone again
  {
    OutputFolder out(target.string(), ours_if_only("a.txt"));
    write_file_atomic(out.path("a.txt").string(), "one");
    out.commit();
  }
  EXPECT_EQ(read_file((target / "a.txt").string()), "one");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path / "sub"), {}), 1);  // no lock, no temp
}

TEST(OutputFolder, ReplacesAnEarlierFolderWholeAndRefusesOthers) {
  TempDir d;
  const fs::path target = d.path / "out";
  fs::create_directories(target);
  std::ofstream(target / "a.txt") << "old";
  {
    OutputFolder out(target.string(), ours_if_only("a.txt"));
    write_file_atomic(out.path("b.txt").string(), "new");
    out.commit();
  }
  EXPECT_FALSE(fs::exists(target / "a.txt"));  // no stale file of the earlier run
  EXPECT_EQ(read_file((target / "b.txt").string()), "new");
  // b.txt is not "ours" by these rules: refused, and the folder is untouched.
  EXPECT_THROW(OutputFolder(target.string(), ours_if_only("a.txt")), InputError);
  EXPECT_TRUE(fs::exists(target / "b.txt"));
  // An input inside a folder that would be replaced.
  OutputRules r = ours_if_only("b.txt");
  r.inputs = {(target / "b.txt").string()};
  try {
    OutputFolder out(target.string(), r);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("an input of this command"), std::string::npos);
  }
  EXPECT_THROW(OutputFolder(".", ours_if_only("x")), InputError);
  EXPECT_EQ(d.entries(), 1u);
}

TEST(OutputFolder, ASecondWriterOfTheSameTargetIsRefused) {
  TempDir d;
  const fs::path target = d.path / "out";
  OutputFolder first(target.string(), {});
  try {
    OutputFolder second(target.string(), {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another deepshare command is writing"),
              std::string::npos);
  }
  first.commit();
  OutputRules again;
  again.replaceable = [](const fs::path&) { return std::string(); };
  OutputFolder third(target.string(), again);  // the lock is free again
  third.commit();
}

TEST(Cleanup, StaleTemporaryNamesAreThoseOfDeadProcesses) {
  EXPECT_FALSE(is_stale_temp(temp_name_for("jobs.csv")));  // this process's own
  EXPECT_FALSE(is_stale_temp("jobs.csv"));
  EXPECT_FALSE(is_stale_temp(".jobs.csv.tmp-x-1"));
  // A pid beyond pid_max (at most 2^22 on Linux) belongs to no process.
  EXPECT_TRUE(is_stale_temp(".jobs.csv.tmp-99999999-3"));
  EXPECT_TRUE(is_transient_name(temp_name_for("out")));  // alive or not
  EXPECT_TRUE(is_transient_name(".fidelity.lock"));
  EXPECT_FALSE(is_transient_name("fidelity.lock"));
  EXPECT_FALSE(is_transient_name(".lock"));
  TempDir d;
  const fs::path tree = d.path / ".out.tmp-1-1";
  fs::create_directories(tree / "run");
  std::ofstream(tree / "run" / "jobs.csv") << "x";
  remove_tree_signal_safe(tree.c_str());
  EXPECT_EQ(d.entries(), 0u);
}

TEST(KeyValueSpec, EveryValueIsRangeChecked) {
  const KeyValueSpec kv("--excerpt", "from=3,jobs=200,,load=1.5", {"from", "jobs", "load", "min"});
  EXPECT_EQ(kv.unsigned_in("from", 0, 0, 10, "a job"), 3u);
  EXPECT_EQ(kv.unsigned_in("min", 7, 0, 10, "a job"), 7u);  // absent: the fallback
  EXPECT_DOUBLE_EQ(kv.number_in("load", 1, 0.001, 1000, "a load"), 1.5);
  try {
    (void)KeyValueSpec("--excerpt", "jobs=-1", {"jobs"}).unsigned_in("jobs", 1, 1, 100, "a count");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--excerpt 'jobs=-1': expected a count in 1..100, got '-1'");
  }
  EXPECT_THROW((void)KeyValueSpec("--x", "a=nan", {"a"}).number_in("a", 1, 0, 2, "n"), InputError);
  EXPECT_THROW((void)KeyValueSpec("--x", "a=5x", {"a"}).unsigned_in("a", 1, 0, 9, "n"), InputError);
  EXPECT_THROW(KeyValueSpec("--x", "a=1,a=2", {"a"}), InputError);
  EXPECT_THROW(KeyValueSpec("--x", "b=1", {"a"}), InputError);
  EXPECT_THROW(KeyValueSpec("--x", "a", {"a"}), InputError);
}

}  // namespace
}  // namespace ds
