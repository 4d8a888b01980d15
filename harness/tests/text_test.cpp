// The shared text helpers (gauntlet/base/text.h) and output folders (gauntlet/base/output_dir.h).
#include "gauntlet/base/text.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gauntlet/base/error.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/base/output_dir.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

TEST(Text, FirstLineIsTheTextBeforeTheFirstNewline) {
  EXPECT_EQ(first_line("a\nb"), "a");
  EXPECT_EQ(first_line("only"), "only");
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line_cut(std::string(300, 'x'), 200).size(), 200u);
  // Cut on a UTF-8 boundary: a two-byte character at 199..200 is dropped whole.
  EXPECT_EQ(first_line_cut(std::string(199, 'x') + "\xc3\xa9", 200), std::string(199, 'x'));
}

// Note [Failure signature]: one rule for run summaries, reduce and the dashboard.
TEST(Text, TheFailureSignatureBlanksEveryNumberOfTheFirstLine) {
  EXPECT_EQ(error_signature("out0: max_abs_err 0.51 at [3, 7]\ndetails 12"), "out#: max_abs_err # at [#, #]");
  EXPECT_EQ(error_signature("out0: max_abs_err 0.49 at [0, 1]"), error_signature("out0: max_abs_err 0.51 at [3, 7]"));
  EXPECT_EQ(error_signature("shape [7, 1, 5] vs -2e-3 at 0x7ffd"), "shape [#, #, #] vs # at #");
  EXPECT_EQ(error_signature("f32 2x4x8 tensor"), "f# #x#x# tensor");
  EXPECT_NE(error_signature("index out of range"), error_signature("division by zero"));
}

// Note [Stderr tails]: the fatal line last, lines alike but for numbers or quoted names folded.
TEST(Text, AStderrTailKeepsItsEndAndFoldsLinesAlike) {
  std::string text = "loaded\n";
  for (int i = 0; i < 400; ++i)
    text += "[W12 05:00:" + std::to_string(i) + "] op 'aten::x" + std::to_string(i) + "' falls back\n";
  text += "\nfree(): invalid pointer\n";
  EXPECT_EQ(fold_stderr_tail(text, 8),
            "loaded\n[W12 05:00:399] op 'aten::x399' falls back\n[399 more lines like: [W12 05:00:399] op "
            "'aten::x399' falls back]\nfree(): invalid pointer");
  EXPECT_EQ(fold_stderr_tail("a1\nb\nc\n", 2), "[1 earlier line not shown]\nb\nc");
  EXPECT_EQ(fold_stderr_tail("", 8), "");
}

// Note [Bounded error texts]: a crash's text keeps its head and the end of its stderr.
TEST(Text, ABoundedCrashTextKeepsTheFatalLine) {
  std::string text = "worker died with SIGABRT while running the case" + std::string(kStderrMark);
  for (int i = 0; i < 100; ++i) text += "warning number " + std::to_string(i) + " with some words in it\n";
  text += "free(): invalid pointer";
  bound_error_text(text);
  EXPECT_LE(text.size(), kMaxErrorBytes);
  EXPECT_EQ(text.rfind("worker died with SIGABRT while running the case\nlast lines of its stderr:\n[", 0), 0u) << text;
  EXPECT_NE(text.find("bytes of stderr, cut to its end]\nwarning number"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 23), "free(): invalid pointer");
  std::string plain(5000, 'x');
  bound_error_text(plain);
  EXPECT_EQ(plain.substr(plain.size() - 22), " ... [5000 bytes, cut]");
}

TEST(Text, ShellArgumentsAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(shell_argument("out/run.db"), "out/run.db");
  EXPECT_EQ(shell_argument("a b"), "'a b'");
  EXPECT_EQ(shell_quoted("it's"), "'it'\\''s'");
}

class OutputDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_outdir_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Note [Output folders].
TEST_F(OutputDirTest, OnlyANewEmptyOrOwnFolderIsClaimed) {
  claim_output_dir((dir_ / "new" / "deep").string(), "bundle");
  EXPECT_TRUE(fs::exists(dir_ / "new" / "deep" / ".gauntlet-bundle"));
  claim_output_dir((dir_ / "new" / "deep").string(), "bundle");  // ours: again

  fs::create_directories(dir_ / "theirs");
  std::ofstream(dir_ / "theirs" / "x.txt") << "x";
  try {
    claim_output_dir((dir_ / "theirs").string(), "bundle");
    ADD_FAILURE() << "claimed a folder of other files";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "theirs").string() +
                                         ": the folder holds files Gauntlet did not write (no .gauntlet-bundle in it); "
                                         "name a new or empty folder");
  }
  EXPECT_FALSE(fs::exists(dir_ / "theirs" / ".gauntlet-bundle"));
  // Another command's marker does not make the folder this one's.
  EXPECT_THROW(claim_output_dir((dir_ / "new" / "deep").string(), "dashboard"), Error);
  std::ofstream(dir_ / "file") << "f";
  EXPECT_THROW(claim_output_dir((dir_ / "file").string(), "bundle"), Error);
  EXPECT_THROW(claim_output_dir("/", "bundle"), Error);
  EXPECT_THROW(claim_output_dir("", "bundle"), Error);
}

// repro --bundle checks its folder before the case runs, and writes nothing then.
TEST_F(OutputDirTest, TheCheckAloneCreatesNothing) {
  check_output_dir((dir_ / "later").string(), "bundle");
  EXPECT_FALSE(fs::exists(dir_ / "later"));
  fs::create_directories(dir_ / "theirs");
  std::ofstream(dir_ / "theirs" / "x.txt") << "x";
  EXPECT_THROW(check_output_dir((dir_ / "theirs").string(), "bundle"), Error);
  EXPECT_THROW(check_output_dir("/", "bundle"), Error);
  claim_output_dir((dir_ / "ours").string(), "bundle");
  check_output_dir((dir_ / "ours").string(), "bundle");
}

TEST_F(OutputDirTest, AFolderWrittenBeforeMarkersIsRecognisedByItsFiles) {
  fs::create_directories(dir_ / "site" / "data");
  std::ofstream(dir_ / "site" / "index.html") << "<html>";
  std::ofstream(dir_ / "site" / "data" / "overview.js") << "x";
  claim_output_dir((dir_ / "site").string(), "dashboard", {"index.html", "data/overview.js"});
  EXPECT_TRUE(fs::exists(dir_ / "site" / ".gauntlet-dashboard"));
}

}  // namespace
}  // namespace gauntlet
