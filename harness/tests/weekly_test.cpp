// gauntlet report --weekly (gauntlet/analysis/weekly.h) on a database written through the Store: ten daily
// releases of `sim`, where r7 makes every mm case 30% slower, r8 sends an add to the CPU and r9
// fails two add cases; a re-run, a run after the window and another backend around them.
#include "gauntlet/analysis/weekly.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

std::string fmt_key(const std::string& op, int n) {
  const std::string shape = std::to_string(n) + "x" + std::to_string(n);
  return "op/" + op + "/f32/" + shape + "," + shape + "/contig/eager";
}

// Two families of eight cases each: op/mm/... (slowed by r7) and op/add/... (r8, r9).
std::vector<std::string> case_keys() {
  std::vector<std::string> keys;
  for (int n = 1; n <= 8; ++n) keys.push_back(fmt_key("mm", n));
  for (int n = 1; n <= 8; ++n) keys.push_back(fmt_key("add", n));
  return keys;
}

class WeeklyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_weekly_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "w.db").string();
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    // release, day of November 2026, and what it changes from then on.
    add_run(*store, "r1", 1);
    add_run(*store, "r2", 2);
    add_run(*store, "r3", 3);
    add_run(*store, "r4", 4);
    add_run(*store, "r5", 5, /*fail_adds=*/1);  // a bad first run of r5, run again the same day
    add_run(*store, "r5", 5);
    add_run(*store, "r6", 6);
    add_run(*store, "r7", 7, 0, /*slow_mm=*/true);
    add_run(*store, "r8", 8, 0, true, /*fallback=*/true);
    add_run(*store, "r9", 9, 2, true, true);
    add_run(*store, "r10", 10, 2, true, true);
    add_run(*store, "r11", 12, 8, true, true);  // after the window
    add_run(*store, "2.0|<rc>", 9, 0, false, false, "cpu");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void add_run(Store& store, const std::string& release, int day, int fail_adds = 0, bool slow_mm = false,
                      bool fallback = false, const std::string& backend = "sim") {
    RunInfo info;
    info.release = release;
    info.backend = backend;
    info.backend_version = backend + "-1.0";
    info.suite = "smoke";
    info.started_at = "2026-11-" + two_digits(day) + "T10:00:00Z";
    const std::int64_t run = store.begin_run(info);
    int adds = 0;
    for (const std::string& text : case_keys()) {
      const bool mm = text.rfind("op/mm/", 0) == 0;
      Outcome o;
      o.status = Status::Pass;
      const double base = 10.0 + static_cast<double>(text.size());  // a time of its own per case
      o.sim_time_us = mm && slow_mm ? base * 1.3 : base;
      o.timing.median_us = 1;
      if (!mm) {
        if (adds < fail_adds) {
          o.status = Status::Fail;
          o.error = "out0: 3 of 64 elements outside tolerance";
        }
        if (fallback && adds == 7) o.fallback_ops = {"aten::add.Tensor"};
        ++adds;
      }
      store.add_result(run, CaseKey::parse(text), o);
    }
    store.flush();
    store.finish_run(run, info.started_at);
  }
  static std::string two_digits(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

  WeeklyReport report(const std::string& since = "", const std::string& until = "") const {
    WeeklyOptions o;
    o.window = weekly_window(since, until, "2026-11-10");
    return weekly_report(db_, o);
  }

  fs::path dir_;
  std::string db_;
};

const WeeklyGroup& group(const WeeklyReport& r, const std::string& backend) {
  for (const WeeklyGroup& g : r.groups) {
    if (g.backend == backend) return g;
  }
  throw std::runtime_error("no group " + backend);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(WeeklyWindow, DefaultsToTheSevenDaysEndingToday) {
  EXPECT_EQ(weekly_window("", "", "2026-11-10").since, "2026-11-04");
  EXPECT_EQ(weekly_window("", "", "2026-11-10").until, "2026-11-10");
  EXPECT_EQ(weekly_window("", "", "2026-03-03").since, "2026-02-25");
  EXPECT_EQ(weekly_window("", "", "2028-03-03").since, "2028-02-26");  // a leap year
  EXPECT_EQ(weekly_window("", "2026-01-03", "2026-11-10").since, "2025-12-28");
  EXPECT_EQ(weekly_window("2026-11-01", "", "2026-11-10").until, "2026-11-10");
  EXPECT_EQ(weekly_window("2026-11-10", "2026-11-10", "2026-11-10").since, "2026-11-10");
}

TEST(WeeklyWindow, RejectsBadDatesInOneLine) {
  auto error = [](const std::string& since, const std::string& until) {
    try {
      weekly_window(since, until, "2026-11-10");
    } catch (const WeeklyError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("2026-02-30", ""), "--since: '2026-02-30' is not a date (YYYY-MM-DD)");
  EXPECT_EQ(error("", "11/10/2026"), "--until: '11/10/2026' is not a date (YYYY-MM-DD)");
  EXPECT_EQ(error("2026-1-5", ""), "--since: '2026-1-5' is not a date (YYYY-MM-DD)");
  EXPECT_EQ(error("2026-11-09", "2026-11-08"), "--since 2026-11-09 is after --until 2026-11-08");
  EXPECT_EQ(error("2027-02-29", "2027-03-01"), "--since: '2027-02-29' is not a date (YYYY-MM-DD)");
  EXPECT_EQ(error("2028-02-29", "2028-03-01"), "(no error)");
}

TEST_F(WeeklyTest, SelectsTheWindowsReleasesAndTheOneBefore) {
  const WeeklyReport r = report();
  EXPECT_EQ(r.window.since, "2026-11-04");
  EXPECT_EQ(r.window.until, "2026-11-10");
  EXPECT_EQ(r.runs_in_window, 9);  // r4, r5 twice, r6 .. r10, and the cpu run
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].backend, "cpu");  // by backend, then suite
  const WeeklyGroup& g = group(r, "sim");
  std::vector<std::string> releases;
  std::vector<std::int64_t> runs;
  for (const WeeklyRelease& rel : g.releases) {
    releases.push_back(rel.run.release);
    runs.push_back(rel.run.id);
  }
  // r3 is the release before the window; r5 is its second run (6); r11 started after the window.
  EXPECT_EQ(releases, (std::vector<std::string>{"r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"}));
  EXPECT_EQ(runs, (std::vector<std::int64_t>{3, 4, 6, 7, 8, 9, 10, 11}));
  EXPECT_TRUE(g.releases[0].before_window);
  for (std::size_t i = 1; i < g.releases.size(); ++i) EXPECT_FALSE(g.releases[i].before_window);
  ASSERT_EQ(g.pairs.size(), 7u);
  EXPECT_EQ(g.pairs[0].baseline.id, 3);
  EXPECT_EQ(g.pairs[0].candidate.id, 4);

  // Another window: --until alone covers the 7 days ending then.
  const WeeklyReport early = report("", "2026-11-05");
  ASSERT_EQ(early.groups.size(), 1u);
  EXPECT_EQ(early.groups[0].releases.size(), 5u);  // r1 .. r5, none before the window
  EXPECT_FALSE(early.groups[0].releases[0].before_window);
  EXPECT_EQ(early.groups[0].releases.back().run.id, 6);
}

TEST_F(WeeklyTest, RowsPerRelease) {
  const WeeklyReport r = report();
  const WeeklyGroup& g = group(r, "sim");
  const WeeklyRelease& r6 = g.releases[3];
  EXPECT_EQ(r6.run.release, "r6");
  EXPECT_EQ(r6.run.started_at, "2026-11-06T10:00:00Z");
  EXPECT_EQ(r6.cases, 16);
  EXPECT_EQ(r6.counts.at(Status::Pass), 16);
  EXPECT_DOUBLE_EQ(r6.pass_rate, 1.0);
  EXPECT_DOUBLE_EQ(r6.fallback_rate, 0.0);
  EXPECT_DOUBLE_EQ(r6.speed_index, 1.0);

  const WeeklyRelease& r9 = g.releases[6];
  EXPECT_EQ(r9.run.release, "r9");
  EXPECT_EQ(r9.counts.at(Status::Pass), 14);
  EXPECT_EQ(r9.counts.at(Status::Fail), 2);
  EXPECT_DOUBLE_EQ(r9.pass_rate, 14.0 / 16);
  EXPECT_EQ(r9.fallback_cases, 1);
  EXPECT_DOUBLE_EQ(r9.fallback_rate, 1.0 / 16);

  // The index: half the cases 30% slower from r7 on, so 1.3^(8/16).
  const double slow = std::pow(1.3, 0.5);
  for (std::size_t i = 0; i < g.releases.size(); ++i) {
    EXPECT_NEAR(g.releases[i].speed_index, i < 4 ? 1.0 : slow, 1e-9) << g.releases[i].run.release;
  }
}

TEST_F(WeeklyTest, RegressionsPerPair) {
  const WeeklyReport r = report();
  const WeeklyGroup& g = group(r, "sim");
  auto counts = [&g](std::size_t pair) {
    const auto& m = g.pairs[pair].regressions;
    return std::vector<std::int64_t>{m.at(Gate::Accuracy), m.at(Gate::Speed), m.at(Gate::Coverage)};
  };
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(counts(0), (V{0, 0, 0}));  // r4 vs r3
  EXPECT_EQ(counts(1), (V{0, 0, 0}));  // r5 (its clean run) vs r4
  EXPECT_EQ(counts(2), (V{0, 0, 0}));  // r6
  EXPECT_EQ(counts(3), (V{0, 9, 0}));  // r7: the 8 mm cases, and the suite (suite:smoke)
  EXPECT_EQ(counts(4), (V{0, 0, 1}));  // r8: the add that falls back
  EXPECT_EQ(counts(5), (V{2, 0, 0}));  // r9: two adds fail
  EXPECT_EQ(counts(6), (V{0, 0, 0}));  // r10

  const WeeklyPair& r7 = g.pairs[3];
  ASSERT_EQ(r7.top.size(), 9u);
  EXPECT_EQ(r7.more, 0);
  EXPECT_NEAR(r7.geomean.estimate, std::pow(1.3, 0.5), 1e-9);
  int mm = 0;
  for (const WeeklyFinding& f : r7.top) {
    EXPECT_EQ(f.change, Change::Slower);
    if (f.key.rfind("op/mm/", 0) == 0) {
      ++mm;
      EXPECT_NEAR(f.ratio, 1.3, 1e-9);
      // Note [Repro from the record]: the run's own configuration comes back from the database.
      EXPECT_EQ(f.repro, "gauntlet repro '" + f.key + "' --db " + db_ + " --run " + std::to_string(r7.candidate.id));
    } else {
      EXPECT_EQ(f.key, "suite:smoke");
      EXPECT_EQ(f.repro, "");
    }
  }
  EXPECT_EQ(mm, 8);

  const WeeklyPair& r9 = g.pairs[5];
  ASSERT_EQ(r9.top.size(), 2u);
  EXPECT_EQ(r9.top[0].change, Change::StatusChange);
  EXPECT_EQ(r9.top[0].detail, "PASS -> FAIL: out0: 3 of 64 elements outside tolerance");
}

TEST_F(WeeklyTest, TopStopsAtItsLimit) {
  WeeklyOptions o;
  o.window = weekly_window("", "", "2026-11-10");
  o.top = 3;
  const WeeklyReport r = weekly_report(db_, o);
  const WeeklyGroup& g = group(r, "sim");
  EXPECT_EQ(g.pairs[3].top.size(), 3u);
  EXPECT_EQ(g.pairs[3].more, 6);
}

// Over the ten days (--since 2026-11-01 --until 2026-11-10): r1 .. r10, ten points. A step in a
// series this short is significant only from about nine points on (the permutation test of
// E-Divisive): the default week, r3 .. r10, is at the edge.
TEST_F(WeeklyTest, ChangePointAtTheSlowRelease) {
  const WeeklyReport r = report("2026-11-01", "2026-11-10");
  const WeeklyGroup& g = group(r, "sim");
  ASSERT_EQ(g.releases.size(), 10u);
  ASSERT_TRUE(g.change_points_searched);
  std::vector<std::string> speed, pass;
  for (const WeeklyRelease& rel : g.releases) {
    if (rel.speed_change_point) speed.push_back(rel.run.release);
    if (rel.pass_change_point) pass.push_back(rel.run.release);
  }
  EXPECT_EQ(speed, std::vector<std::string>{"r7"});
  EXPECT_EQ(pass, std::vector<std::string>{"r9"});
  // The cpu group has one release: too few for change points.
  EXPECT_FALSE(group(r, "cpu").change_points_searched);
  // Four points are searched (r6 before the window, r7 .. r10), three are not.
  const WeeklyReport four = report("2026-11-07", "2026-11-10");
  ASSERT_EQ(group(four, "sim").releases.size(), 5u);
  EXPECT_TRUE(group(four, "sim").change_points_searched);
  const WeeklyReport three = report("2026-11-09", "2026-11-10");
  ASSERT_EQ(group(three, "sim").releases.size(), 3u);  // r8, r9, r10
  EXPECT_FALSE(group(three, "sim").change_points_searched);
}

TEST_F(WeeklyTest, MarkdownLines) {
  const WeeklyReport r = report("2026-11-01", "2026-11-10");
  const std::string md = weekly_markdown(r, "0.1.0");
  const std::vector<std::string> want = {
      "# gauntlet weekly report: 2026-11-01 to 2026-11-10",
      "## `sim`, smoke",
      "| Release | Run | Started | Cases | Pass rate | Fallback rate | Speed index | Change point "
      "| Regressions a/s/c |",
      "| r1 | 1 | 2026-11-01T10:00:00Z | 16 | 100.00% | 0.00% | 1.000 |  |  |",
      "| r6 | 7 | 2026-11-06T10:00:00Z | 16 | 100.00% | 0.00% | 1.000 |  | 0/0/0 |",
      "| r7 | 8 | 2026-11-07T10:00:00Z | 16 | 100.00% | 0.00% | 1.140 | **speed** | 0/9/0 |",
      "| r9 | 10 | 2026-11-09T10:00:00Z | 16 | 87.50% | 6.25% | 1.140 | **pass rate** | 2/0/0 |",
      "Change points (E-Divisive): speed at r7; pass rate at r9.",
      "| Release | PASS | FAIL |",
      "| r9 | 14 | 2 |",
      "### r9 vs r8 (run 10 vs run 9)",
      "| `op/add/f32/1x1,1x1/contig/eager` | status-change | PASS -> FAIL: out0: 3 of 64 elements "
      "outside tolerance | `gauntlet repro 'op/add/f32/1x1,1x1/contig/eager' --db " +
          db_ + " --run 10` |",
      "## `cpu`, smoke",
      "| 2.0\\|&lt;rc> | 13 | 2026-11-09T10:00:00Z | 16 | 100.00% | 0.00% | 1.000 |  |  |",
      "Change points: too few releases for change points (1 of the 4 needed).",
      "---",
      "gauntlet 0.1.0 · json_schema_version 1",
  };
  for (const std::string& line : want) EXPECT_TRUE(has_line(md, line)) << "missing: " << line << "\n" << md;
  const std::string pair =
      "2 regressions: 2 accuracy, 0 speed, 0 coverage. Speed: 1.000x [1.000, 1.000] over 16 "
      "cases. Compare: `gauntlet compare --db " +
      db_ + " --run 10 --baseline 9`.";
  EXPECT_NE(md.find(pair), std::string::npos) << md;
  // The default week starts with the release before it.
  const std::string week = weekly_markdown(report(), "0.1.0");
  EXPECT_TRUE(
      has_line(week, "| r3 (before the window) | 3 | 2026-11-03T10:00:00Z | 16 | 100.00% | 0.00% | 1.000 |  |  |"))
      << week;
}

TEST_F(WeeklyTest, JsonHasItsSchemaVersionAndEveryRelease) {
  const std::string json = weekly_json(report("2026-11-01", "2026-11-10"), "0.1.0");
  EXPECT_NE(json.find("\"json_schema_version\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"since\": \"2026-11-01\""), std::string::npos);
  EXPECT_NE(json.find("\"release\": \"2.0|<rc>\""), std::string::npos);
  EXPECT_NE(json.find("\"speed\": [\n          {\n            \"release\": \"r7\""), std::string::npos) << json;
}

TEST_F(WeeklyTest, NoRunsInTheWindow) {
  const WeeklyReport r = report("2027-01-01", "2027-01-07");
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(r.runs_in_window, 0);
  const std::string md = weekly_markdown(r, "0.1.0");
  EXPECT_TRUE(has_line(md, "No runs in the window.")) << md;
  EXPECT_NE(weekly_json(r, "0.1.0").find("\"groups\": []"), std::string::npos);
}

TEST_F(WeeklyTest, FiltersByBackendAndSuite) {
  WeeklyOptions o;
  o.window = weekly_window("", "", "2026-11-10");
  o.backend = "cpu";
  WeeklyReport r = weekly_report(db_, o);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].backend, "cpu");
  EXPECT_EQ(r.runs_in_window, 1);
  o.backend = "";
  o.suite = "nightly";
  EXPECT_TRUE(weekly_report(db_, o).groups.empty());
}

TEST_F(WeeklyTest, ErrorsNameTheFile) {
  WeeklyOptions o;
  o.window = weekly_window("", "", "2026-11-10");
  const std::string missing = (dir_ / "none.db").string();
  try {
    weekly_report(missing, o);
    ADD_FAILURE() << "no error";
  } catch (const WeeklyError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": no such database");
  }
  const std::string text = (dir_ / "text.db").string();
  std::ofstream(text) << "not a database";
  EXPECT_THROW(weekly_report(text, o), WeeklyError);
}

}  // namespace
}  // namespace gauntlet
