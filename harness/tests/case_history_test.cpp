// Per-case change points across releases (Note [Case history] in harness/analysis/regress.cpp),
// on a database written through the Store: ten releases of `sim`, r1 to r10.
//   mm   : simulated time 20% up from r5 on, and stays there   -> speed-shift since r5
//   add  : max_abs_err 1.6x a release, never 4x in one step     -> error-shift
//   sub  : slower r4 to r6, fixed from r7 on                    -> nothing
//   abs  : constant                                             -> nothing
//   relu : host time only, ±8% noise per run, the whole host 30% slower from r6 on (drift)
//                                                               -> nothing
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/splitmix.h"
#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

std::string key_of(const std::string& op, int n) {
  const std::string shape = std::to_string(n) + "x" + std::to_string(n);
  return "op/" + op + "/f32/" + shape + "," + shape + "/contig/eager";
}

const char* const kOps[] = {"mm", "add", "sub", "abs", "relu"};
constexpr int kPerOp = 24;  // relu: enough host cases for the drift (>= 20)
constexpr int kReleases = 10;

// A number in [0, 1) for (a, b), the same on every platform.
double noise(int a, int b) {
  return SplitMix64(static_cast<std::uint64_t>(a) * 1000003u + static_cast<std::uint64_t>(b)).uniform();
}

class CaseHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_case_history_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "h.db").string();
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    for (int r = 1; r <= kReleases; ++r) add_run(*store, r);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void add_run(Store& store, int release) {
    RunInfo info;
    info.release = "r" + std::to_string(release);
    info.backend = "sim";
    info.backend_version = "sim-1.0";
    info.suite = "smoke";
    info.started_at = "2026-11-" + std::string(release < 10 ? "0" : "") + std::to_string(release) + "T10:00:00Z";
    const std::int64_t run = store.begin_run(info);
    for (const std::string op : kOps) {
      for (int n = 1; n <= kPerOp; ++n) {
        Outcome o;
        o.status = Status::Pass;
        o.atol = 1e-5;
        o.rtol = 1.3e-6;
        const double base = 10.0 + n;
        o.timing.median_us = 1;
        if (op == "mm") {
          o.sim_time_us = release >= 5 ? base * 1.2 : base;
        } else if (op == "add") {
          o.sim_time_us = base;
          o.metrics.max_abs_err = 1e-7 * std::pow(1.6, release - 1);
        } else if (op == "sub") {
          o.sim_time_us = release >= 4 && release <= 6 ? base * 1.3 : base;
        } else if (op == "abs") {
          o.sim_time_us = base;
        } else {  // relu: host time only, with run-to-run noise and a host 30% slower from r6
          const double host = release >= 6 ? 1.3 : 1.0;
          o.timing.median_us = base * host * (0.92 + 0.16 * noise(release, n));
          o.timing.reps = 5;
          for (int i = 0; i < 5; ++i) o.timing.samples_us.push_back(o.timing.median_us * (1 + 0.001 * i));
        }
        store.add_result(run, CaseKey::parse(key_of(op, n)), o);
      }
    }
    store.flush();
    store.finish_run(run, info.started_at);
  }

  // Findings of `change` by op.
  static std::map<std::string, int> by_op(const RunComparison& c, Change change) {
    std::map<std::string, int> out;
    for (const Finding& f : c.findings) {
      if (f.change != change) continue;
      const std::string op = f.key.substr(3, f.key.find('/', 3) - 3);
      ++out[op];
    }
    return out;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(CaseHistoryTest, DatesAStepThatStayedAndACreepingError) {
  const RunComparison c = compare_runs(db_, 0, std::nullopt, CompareOptions{});
  ASSERT_EQ(c.candidate.release, "r10");
  ASSERT_EQ(c.baseline.release, "r9");
  EXPECT_EQ(by_op(c, Change::SpeedShift), (std::map<std::string, int>{{"mm", kPerOp}}));
  EXPECT_EQ(by_op(c, Change::ErrorShift), (std::map<std::string, int>{{"add", kPerOp}}));
  for (const Finding& f : c.findings) {
    // r9 -> r10 changes nothing: every finding is history, none gates.
    EXPECT_FALSE(f.gating()) << f.key << ": " << f.detail;
    if (f.change == Change::SpeedShift) {
      EXPECT_NE(f.detail.find("since release r5, over 10 releases"), std::string::npos) << f.detail;
      EXPECT_NEAR(f.ratio, 1.2, 1e-9);
      EXPECT_LE(f.p_value, 0.05);
    }
    if (f.change == Change::ErrorShift) {
      EXPECT_GT(f.ratio, 4.0) << f.detail;  // 1.6x a release adds up past error_growth
      EXPECT_NE(f.detail.find("max_abs_err"), std::string::npos);
    }
  }
  EXPECT_EQ(by_op(c, Change::ErrorGrowth).size(), 0u);  // never 4x in one step
}

TEST_F(CaseHistoryTest, OnlyWhenAskedForAndWithEnoughReleases) {
  CompareOptions none;
  none.history = 0;
  const RunComparison c = compare_runs(db_, 0, std::nullopt, none);
  EXPECT_TRUE(by_op(c, Change::SpeedShift).empty());
  EXPECT_TRUE(by_op(c, Change::ErrorShift).empty());
  // r4 as the candidate: four releases, too short a series to date anything.
  CompareOptions all;
  const RunComparison early = compare_runs(db_, 4, std::nullopt, all);
  EXPECT_TRUE(by_op(early, Change::SpeedShift).empty());
  EXPECT_TRUE(by_op(early, Change::ErrorShift).empty());
}

TEST(CaseHistoryNames, ShiftsAreHistoryNotRegressions) {
  EXPECT_EQ(change_name(Change::SpeedShift), "speed-shift");
  EXPECT_EQ(change_name(Change::ErrorShift), "error-shift");
  EXPECT_EQ(change_gate(Change::SpeedShift), Gate::Speed);
  EXPECT_EQ(change_gate(Change::ErrorShift), Gate::Accuracy);
  EXPECT_FALSE(is_regression(Change::SpeedShift));
  EXPECT_FALSE(is_regression(Change::ErrorShift));
}

}  // namespace
}  // namespace gauntlet
