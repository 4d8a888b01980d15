// The end-to-end fixture: runs the real gauntlet binary (GAUNTLET_BIN) in a scratch folder,
// capturing its output and exit code. Shared by the harness's and the simulator's e2e tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Note [Loaded hosts]: users' CI hosts are busy, and a fixed timeout in a test is a verdict from
// one sample of host time. A test that must give a process a deadline (--timeout, a collective's
// timeout) scales it by slowdown(): GAUNTLET_TEST_SLOWDOWN when set (a factor >= 1), else how much
// slower than its CPU time a short busy loop ran on the wall clock here (the worst of 5 rounds,
// so a load that comes and goes counts), at most 8. On a quiet host it is 1; with two CPU hogs
// beside the tests on 2 cores, about 2 to 3.
inline double slowdown() {
  static const double factor = [] {
    if (const char* env = std::getenv("GAUNTLET_TEST_SLOWDOWN")) {
      char* end = nullptr;
      const double f = std::strtod(env, &end);
      if (end != env && f >= 1) return std::min(f, 100.0);
    }
    double worst = 1;
    for (int round = 0; round < 5; ++round) {
      timespec c0{}, c1{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      const auto w0 = std::chrono::steady_clock::now();
      volatile double x = 0;
      for (int i = 0; i < 3000000; ++i) x = x + 1e-9 * i;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      const double cpu = double(c1.tv_sec - c0.tv_sec) + double(c1.tv_nsec - c0.tv_nsec) / 1e9;
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      if (cpu > 0) worst = std::max(worst, wall / cpu);
    }
    return std::min(worst, 8.0);
  }();
  return factor;
}
// `seconds` scaled by slowdown(), as an option value ("6", "13.5").
inline std::string scaled(double seconds) {
  std::ostringstream s;
  s << seconds * slowdown();
  return s.str();
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
