// The end-to-end fixture: runs the real gauntlet binary (GAUNTLET_BIN) in a scratch folder,
// capturing its output and exit code. Shared by the harness's and the simulator's e2e tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace e2e {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class E2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet_e2e_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the binary with `args` (a shell fragment) and `env` (VAR=value ... before it); captures
  // stdout, stderr and the exit code (128 + the signal for a process a signal killed).
  Result gauntlet(const std::string& args, const std::string& env = "") {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd =
        env + " " + std::string(GAUNTLET_BIN) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);  // sh reports 128+sig too
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // A suites dir: the real suites plus the given extra files.
  fs::path suites_with(const std::map<std::string, std::string>& files) {
    fs::path d = dir_ / "suites";
    fs::create_directories(d);
    for (const auto& e : fs::directory_iterator(fs::path(GAUNTLET_SOURCE_DIR) / "suites/yaml")) {
      fs::copy_file(e.path(), d / e.path().filename(), fs::copy_options::overwrite_existing);
    }
    for (const auto& [name, text] : files) std::ofstream(d / name) << text;
    return d;
  }

  static void expect_one_line_error(const Result& r, const std::string& needle) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("gauntlet: error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }

  fs::path dir_;
};

}  // namespace e2e
