// A file kept open and read whole from offset 0 each time.
#include "signals/proc_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace edgeshed::signals {
namespace {

class ProcFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/edgeshed-procfile-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/f";
  }
  void TearDown() override {
    (void)std::remove(path_.c_str());
    (void)rmdir(dir_.c_str());
  }
  // Rewrites the file in place, as the kernel's text changes under one fd.
  void write(const std::string& text) const { std::ofstream(path_, std::ios::trunc) << text; }

  std::string dir_, path_;
};

TEST_F(ProcFileTest, EachReadSeesTheWholeCurrentText) {
  write("some avg10=0.00\n");
  ProcFile f(path_);
  auto first = f.read();
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(*first, "some avg10=0.00\n");
  write("some avg10=12.50 avg60=3.00\n");
  auto second = f.read();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, "some avg10=12.50 avg60=3.00\n");
}

TEST_F(ProcFileTest, AFileLargerThanTheFirstBufferIsReadWhole) {
  const std::string big(10000, 'x');
  write(big);
  ProcFile f(path_);
  auto text = f.read();
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, big);
}

TEST_F(ProcFileTest, AMissingFileIsAnErrorUntilItAppears) {
  ProcFile f(path_);
  auto missing = f.read();
  ASSERT_FALSE(missing);
  EXPECT_EQ(f.failed_errno(), ENOENT);
  EXPECT_NE(missing.error().message.find(path_), std::string::npos);
  write("TcpExt: ListenDrops\nTcpExt: 3\n");
  auto text = f.read();
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "TcpExt: ListenDrops\nTcpExt: 3\n");
}

// An operator's tool writes a new file and renames it over the path.
TEST_F(ProcFileTest, AFileOpenedForEachReadSeesOneRenamedOverIt) {
  write("1\n");
  ProcFile f(path_, ProcFile::Reopen::kEachRead);
  ASSERT_TRUE(f.read());
  const std::string fresh = dir_ + "/fresh";
  std::ofstream(fresh) << "2.5\n";
  ASSERT_EQ(std::rename(fresh.c_str(), path_.c_str()), 0);
  auto text = f.read();
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "2.5\n");
}

}  // namespace
}  // namespace edgeshed::signals
