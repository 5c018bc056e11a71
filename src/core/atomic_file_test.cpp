#include "core/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/temp_dir_test_util.hpp"

namespace ds {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  return ds::read_file(p.string());
}

struct TempDir : testing::ScratchDir {
  TempDir() : ScratchDir("deepshare-atomic-") {}
};

TEST(AtomicFile, ReplacesTheTargetOnlyOnCommit) {
  TempDir d;
  const fs::path target = d.path / "out.csv";
  std::ofstream(target) << "old";
  {
    AtomicFile f(target.string());
    f.write("new ");
    f.write(std::string(200'000, 'x'));  // larger than the buffer
    EXPECT_EQ(read(target), "old");      // not yet
    f.commit();
  }
  EXPECT_EQ(read(target).size(), 200'004u);
  EXPECT_EQ(d.entries(), 1u);  // no temporary file left
}

TEST(AtomicFile, AnUncommittedFileLeavesNothingBehind) {
  TempDir d;
  {
    AtomicFile f((d.path / "a.csv").string());
    f.write("partial");
  }
  EXPECT_EQ(d.entries(), 0u);
}

TEST(AtomicFile, AFailedRenameIsAnErrorAndRemovesTheTemporaryFile) {
  TempDir d;
  fs::create_directories(d.path / "taken" / "inner");  // a non-empty folder cannot be replaced
  AtomicFile f((d.path / "taken").string());
  f.write("x");
  EXPECT_THROW(f.commit(), InputError);
  EXPECT_EQ(d.entries(), 1u);
}

TEST(ReadFile, ReadsTheWholeFileAndNamesAFileItCannotRead) {
  TempDir d;
  write_file_atomic((d.path / "a.txt").string(), std::string("x\0y", 3));
  EXPECT_EQ(read_file((d.path / "a.txt").string()), std::string("x\0y", 3));
  try {
    read_file((d.path / "missing.txt").string());
    FAIL() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.txt: cannot read"), std::string::npos)
        << e.what();
  }
}

TEST(AtomicFile, AMissingFolderIsAnError) {
  TempDir d;
  EXPECT_THROW(AtomicFile((d.path / "no" / "such.csv").string()), InputError);
}

// A write that fails (here: beyond the file-size limit, as on a full disk) is an error,
// and neither the target nor a temporary file is left. Runs in a child process so that
// the limit does not touch the test runner.
TEST(AtomicFile, AFailedWriteIsAnErrorAndLeavesNoFile) {
  TempDir d;
  const fs::path target = d.path / "jobs.csv";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of a signal
    rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    int code = 1;
    try {
      AtomicFileSet set;
      set.add((d.path / "small.txt").string()).write("fits");
      set.add(target.string()).write(std::string(100'000, 'x'));
      set.commit();
    } catch (const InputError& e) {
      code =
          std::string(e.what()).find("jobs.csv: cannot write: File too large") != std::string::npos
              ? 0
              : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(d.entries(), 0u);  // neither file: the set is all or nothing
}

}  // namespace
}  // namespace ds
