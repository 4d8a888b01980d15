// The dashboard's data (gauntlet/analysis/dashboard.h, dashboards/FORMAT.md) from a database written
// through the Store: six weekly releases of `sim` (r4 makes every mm case 30% slower, r5 sends an
// add to the CPU, r6 fails two adds with an error text holding markup) and two of `cpu`.
#include "gauntlet/analysis/dashboard.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kHostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">";

std::string key_of(const std::string& op, int n) {
  const std::string shape = std::to_string(n) + "x" + std::to_string(n);
  return "op/" + op + "/f32/" + shape + "," + shape + "/contig/eager";
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_dashboard_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "d.db").string();
    {
      auto store = Store::open(db_, Store::OpenMode::ReadWrite);
      for (int r = 1; r <= 6; ++r) add_run(*store, "r" + std::to_string(r), r, "sim");
      add_run(*store, "c1", 1, "cpu");
      add_run(*store, "c2", 2, "cpu");
    }
    // A key no suite could make, as a foreign or damaged database may hold: shown as text.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE cases SET key = 'op/add/" + std::string(kHostile) + "' WHERE key = '" + key_of("add", 8) + "'";
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_close(db);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void add_run(Store& store, const std::string& release, int week, const std::string& backend) {
    RunInfo info;
    info.release = release;
    info.backend = backend;
    info.backend_version = backend + "-1.0";
    info.suite = "smoke";
    // Mondays, a week apart: 2026-10-05 is a Monday of ISO week 41.
    const int day = 5 + 7 * (week - 1);
    info.started_at = day <= 31 ? fmt_date(10, day) : fmt_date(11, day - 31);
    const std::int64_t run = store.begin_run(info);
    for (int n = 1; n <= 8; ++n) {
      for (const char* op : {"mm", "add"}) {
        Outcome o;
        o.status = Status::Pass;
        const double base = 10.0 * n;
        const bool mm = std::string(op) == "mm";
        o.sim_time_us = mm && week >= 4 && backend == "sim" ? base * 1.3 : base;
        o.timing.median_us = base;
        o.metrics.max_abs_err = 1e-7 * n;
        if (!mm && backend == "sim") {
          if (week >= 5 && n == 7) o.fallback_ops = {"aten::add.Tensor"};
          if (week >= 6 && n >= 7) {
            o.status = Status::Fail;
            o.metrics.max_abs_err = 0.5;
            o.error = std::string("out0: outside tolerance ") + kHostile + " \xe2\x80\xa8 end";
          }
        }
        store.add_result(run, CaseKey::parse(key_of(op, n)), o);
      }
    }
    store.flush();
    store.finish_run(run, info.started_at);
  }
  // One more sim release of the fixture's 16 cases, dated 2026-11-16, each outcome made by `make`.
  void add_sim_release(const std::string& release,
                       const std::function<void(const std::string& op, int n, Outcome& o)>& make) {
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    RunInfo info;
    info.release = release;
    info.backend = "sim";
    info.backend_version = "sim-1.0";
    info.suite = "smoke";
    info.started_at = fmt_date(11, 16);
    const std::int64_t run = store->begin_run(info);
    for (int n = 1; n <= 8; ++n) {
      for (const char* op : {"mm", "add"}) {
        Outcome o;
        o.status = Status::Pass;
        make(op, n, o);
        store->add_result(run, CaseKey::parse(key_of(op, n)), o);
      }
    }
    store->flush();
    store->finish_run(run, info.started_at);
  }
  static std::string fmt_date(int month, int day) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-%02d-%02dT10:00:00Z", month, day);
    return buf;
  }

  DashboardSummary write(DashboardOptions o = {}) {
    o.generated_at = "2026-11-30T00:00:00Z";
    o.gauntlet_version = "test";
    o.family = [](std::string_view, std::string_view target) {
      return std::string(target == "mm" ? "matmul" : "binary");
    };
    return write_dashboard_data(db_, (dir_ / "site").string(), o);
  }

  // A data file's payload: gauntletData("<name>", <json>);
  json read(const std::string& name) const {
    std::ifstream in(dir_ / "site" / "data" / (name + ".js"), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string head = "gauntletData(\"" + name + "\", ";
    EXPECT_EQ(text.substr(0, head.size()), head);
    EXPECT_EQ(text.substr(text.size() - 3), ");\n");
    return json::parse(text.substr(head.size(), text.size() - head.size() - 3));
  }

  const json& group(const json& overview, const std::string& backend) const {
    for (const json& g : overview["groups"]) {
      if (g["backend"] == backend) return g;
    }
    throw std::runtime_error("no group " + backend);
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(DashboardTest, OverviewHasOneEntryPerReleaseWithRatesSpeedAndRegressions) {
  const DashboardSummary s = write();
  EXPECT_EQ(s.groups, 2);
  EXPECT_EQ(s.releases, 8);
  EXPECT_EQ(s.results, 8 * 16);
  const json overview = read("overview");
  EXPECT_EQ(overview["schema_version"], 1);
  EXPECT_EQ(overview["db"], "d.db");
  const json& sim = group(overview, "sim");
  EXPECT_EQ(sim["suite"], "smoke");
  EXPECT_EQ(sim["metric"], "sim");
  ASSERT_EQ(sim["releases"].size(), 6u);
  const json& r = sim["releases"];
  EXPECT_EQ(r[0]["release"], "r1");
  EXPECT_EQ(r[0]["week"], "2026-W41");
  EXPECT_EQ(r[5]["week"], "2026-W46");
  EXPECT_TRUE(r[0]["speed"].is_null());
  EXPECT_TRUE(r[0]["regressions"].is_null());
  EXPECT_DOUBLE_EQ(r[0]["pass_rate"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r[5]["pass_rate"].get<double>(), 14.0 / 16.0);
  EXPECT_DOUBLE_EQ(r[4]["fallback_rate"].get<double>(), 1.0 / 16.0);
  EXPECT_EQ(r[5]["counts"]["FAIL"], 2);
  // r4: half the cases 30% slower -> geomean sqrt(1.3).
  EXPECT_NEAR(r[3]["speed"]["ratio"].get<double>(), std::sqrt(1.3), 1e-9);
  EXPECT_EQ(r[3]["speed"]["n"], 16);
  EXPECT_NEAR(r[5]["speed_index"].get<double>(), std::sqrt(1.3), 1e-9);
  EXPECT_EQ(r[3]["regressions"]["speed"], 8 + 1);  // every mm case, and the suite's geomean
  EXPECT_EQ(r[4]["regressions"]["coverage"], 1);
  EXPECT_EQ(r[5]["regressions"]["accuracy"], 2);
  EXPECT_EQ(sim["latest"]["release"], "r6");
  EXPECT_EQ(sim["latest"]["baseline"], "r5");
  EXPECT_EQ(sim["weeks"].size(), 6u);
  EXPECT_EQ(sim["weeks"][0]["start"], "2026-10-05");
  EXPECT_EQ(sim["facets"]["family"], json({"binary", "matmul"}));
  EXPECT_EQ(sim["facets"]["status"], json({"FAIL", "PASS"}));
  EXPECT_EQ(sim["cases"], 16);
  const json& cpu = group(overview, "cpu");
  EXPECT_EQ(cpu["metric"], "sim");
  EXPECT_EQ(cpu["releases"].size(), 2u);
}

TEST_F(DashboardTest, OnlyTheNewestPairsAreJudgedByCompare) {
  DashboardOptions o;
  o.compare_pairs = 2;
  write(o);
  const json overview = read("overview");
  const json& r = group(overview, "sim")["releases"];
  EXPECT_TRUE(r[3]["regressions"].is_null());
  EXPECT_FALSE(r[4]["regressions"].is_null());
  EXPECT_FALSE(r[3]["speed"].is_null());  // the speed series is computed for every release
}

TEST_F(DashboardTest, LatestListsRegressionsWithReproAndTheirCaseFile) {
  DashboardOptions o;
  o.per_file = 5;
  write(o);
  const json overview = read("overview");
  const std::string g = group(overview, "sim")["id"];
  const json latest = read(g + "/latest");
  EXPECT_EQ(latest["baseline"]["release"], "r5");
  EXPECT_EQ(latest["candidate"]["release"], "r6");
  EXPECT_EQ(latest["counts"]["accuracy"], 2);
  ASSERT_EQ(latest["regressions_total"], 2);
  const json index = read(g + "/cases/index");
  EXPECT_EQ(index["per_file"], 5);
  for (const json& f : latest["regressions"]) {
    EXPECT_EQ(f["gate"], "accuracy");
    EXPECT_EQ(f["change"], "status-change");
    EXPECT_EQ(f["status"], "FAIL");
    EXPECT_EQ(f["family"], "binary");
    const std::string key = f["key"];
    EXPECT_NE(f["repro"].get<std::string>().find("gauntlet repro"), std::string::npos);
    // The case file holds the key's history.
    const auto& keys = index["keys"];
    const auto at = std::find(keys.begin(), keys.end(), key) - keys.begin();
    ASSERT_LT(at, static_cast<long>(keys.size()));
    EXPECT_EQ(f["case_file"], at / 5);
    const json file = read(g + "/cases/" + std::to_string(at / 5));
    const json& c = file["cases"][static_cast<std::size_t>(at - file["first"].get<long>())];
    EXPECT_EQ(c["key"], key);
    EXPECT_EQ(c["status"], json({"PASS", "PASS", "PASS", "PASS", "PASS", "FAIL"}));
    EXPECT_EQ(c["error"][0], nullptr);
    EXPECT_NE(c["error"][5].get<std::string>().find(kHostile), std::string::npos);
  }
  const json coverage = read(g + "/coverage");
  ASSERT_EQ(coverage["fallback_ops"].size(), 1u);
  EXPECT_EQ(coverage["fallback_ops"][0]["op"], "aten::add.Tensor");
  EXPECT_EQ(coverage["fallback_ops"][0]["cases"], json({0, 0, 0, 0, 1, 1}));
  const json breakdown = read(g + "/breakdown");
  EXPECT_NEAR(breakdown["by"]["family"]["matmul"][5]["speed_index"].get<double>(), 1.3, 1e-9);
  EXPECT_DOUBLE_EQ(breakdown["by"]["family"]["binary"][5]["pass_rate"].get<double>(), 6.0 / 8.0);
  // FORMAT.md's fallback_rate per facet: add n=7 falls back from the fifth release on.
  EXPECT_DOUBLE_EQ(breakdown["by"]["family"]["binary"][3]["fallback_rate"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(breakdown["by"]["family"]["binary"][4]["fallback_rate"].get<double>(), 1.0 / 8.0);
  EXPECT_DOUBLE_EQ(breakdown["by"]["family"]["matmul"][5]["fallback_rate"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(breakdown["by"]["dtype"]["f32"][5]["fallback_rate"].get<double>(), 1.0 / 16.0);
}

TEST_F(DashboardTest, MarkupFromTheDatabaseNeverAppearsRawInAnyFile) {
  write();
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "site" / "data")) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    EXPECT_EQ(text.find('<'), std::string::npos) << e.path();
    EXPECT_EQ(text.find("\xe2\x80\xa8"), std::string::npos) << e.path();
  }
  EXPECT_GT(files, 5u);
  // ... and it reads back as written.
  const json overview = read("overview");
  const json index = read(group(overview, "sim")["id"].get<std::string>() + "/cases/index");
  const auto& keys = index["keys"];
  EXPECT_NE(std::find(keys.begin(), keys.end(), std::string("op/add/") + kHostile), keys.end());
}

TEST_F(DashboardTest, SinceBackendAndSuiteSelectRuns) {
  DashboardOptions o;
  o.since = "2026-10-26";  // r4 onwards (and no cpu run)
  write(o);
  const json overview = read("overview");
  ASSERT_EQ(overview["groups"].size(), 1u);
  EXPECT_EQ(overview["since"], "2026-10-26");
  EXPECT_EQ(overview["groups"][0]["releases"].size(), 3u);
  o = {};
  o.backend = "cpu";
  write(o);
  EXPECT_EQ(read("overview")["groups"].size(), 1u);
  // Filters that select no run are refused (issue 23: an empty site, exit 0, hid a mistyped suite).
  o = {};
  o.suite = "nightly";
  try {
    write(o);
    ADD_FAILURE() << "no error for a suite without runs";
  } catch (const DashboardError& e) {
    EXPECT_NE(std::string(e.what()).find("no runs of suite 'nightly' among the database's"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.exit_code(), kExitBadInput);
  }
}

TEST_F(DashboardTest, BadInputIsOneLineNamingIt) {
  auto error = [&](const std::string& db, DashboardOptions o) {
    try {
      write_dashboard_data(db, (dir_ / "site").string(), o);
    } catch (const DashboardError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  DashboardOptions bad_date;
  bad_date.since = "2026-13-01";
  EXPECT_EQ(error(db_, bad_date), "--since: '2026-13-01' is not a date (YYYY-MM-DD)");
  EXPECT_EQ(error((dir_ / "none.db").string(), {}), (dir_ / "none.db").string() + ": no such database");
  const std::string text = (dir_ / "text.db").string();
  std::ofstream(text) << "not a database";
  EXPECT_NE(error(text, {}).find(text + ": "), std::string::npos);
}

// Note [Output folders]: a folder of the user's is refused and left as it was; a folder the
// dashboard wrote, or an empty one, is written; `/` is refused.
TEST_F(DashboardTest, AFolderOfOtherFilesIsRefusedAndLeftUntouched) {
  const fs::path theirs = dir_ / "theirs";
  fs::create_directories(theirs / "data");
  std::ofstream(theirs / "notes.txt") << "mine";
  std::ofstream(theirs / "data" / "keep.csv") << "1,2";
  try {
    write_dashboard_data(db_, theirs.string(), {});
    ADD_FAILURE() << "a folder of other files was written";
  } catch (const DashboardError& e) {
    EXPECT_EQ(std::string(e.what()), theirs.string() +
                                         ": the folder holds files Gauntlet did not write (no .gauntlet-dashboard in "
                                         "it); name a new or empty folder");
    EXPECT_EQ(e.exit_code(), kExitBadInput);
  }
  EXPECT_TRUE(fs::exists(theirs / "notes.txt"));
  EXPECT_TRUE(fs::exists(theirs / "data" / "keep.csv"));
  EXPECT_FALSE(fs::exists(theirs / "data" / "overview.js"));
  EXPECT_FALSE(fs::exists(theirs / ".gauntlet-dashboard"));

  EXPECT_THROW(write_dashboard_data(db_, "/", {}), DashboardError);

  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  write_dashboard_data(db_, empty.string(), {});
  EXPECT_TRUE(fs::exists(empty / ".gauntlet-dashboard"));
  EXPECT_TRUE(fs::exists(empty / "data" / "overview.js"));
  std::ofstream(empty / "data" / "stale.js") << "old";
  write_dashboard_data(db_, empty.string(), {});  // ours: replaced again
  EXPECT_FALSE(fs::exists(empty / "data" / "stale.js"));
}

TEST(DashboardScript, EscapesMarkupAndLineSeparators) {
  EXPECT_EQ(dashboard_script("a/b", "{\"k\":\"<\\/x>&\xe2\x80\xa8\xe2\x80\xa9\"}"),
            "gauntletData(\"a/b\", {\"k\":\"\\u003c\\/x\\u003e\\u0026\\u2028\\u2029\"});\n");
}

// Note [Release pages]: every judged release has a page against the release before it, with its
// failures grouped by op, status and error (numbers aside), its fixes and what still fails.
TEST_F(DashboardTest, EveryJudgedReleaseHasAPageWithItsFailuresGroupedByCause) {
  // r7: add n=6 fails anew and n=7 still fails, both with errors that differ in numbers only;
  // n=8 (the hostile key) is fixed.
  add_sim_release("r7", [](const std::string& op, int n, Outcome& o) {
    o.sim_time_us = 10.0 * n * (op == "mm" ? 1.3 : 1.0);
    o.timing.median_us = 10.0 * n;
    if (op == "add" && (n == 6 || n == 7)) {
      o.status = Status::Fail;
      o.error = n == 6 ? "out0: max_abs_err 0.75 at [3, 1] (atol 1e-05)\nmore"
                       : "out0: max_abs_err 2.5e-3 at [0, 12] (atol 1e-05)";
    }
  });
  write();
  const json overview = read("overview");
  const json& sim = group(overview, "sim");
  const std::string g = sim["id"];
  ASSERT_EQ(sim["releases"].size(), 7u);
  for (int r = 1; r <= 6; ++r) {
    const json page = read(g + "/releases/" + std::to_string(r));
    EXPECT_EQ(page["index"], r);
    EXPECT_EQ(page["baseline"]["release"], "r" + std::to_string(r));
    EXPECT_EQ(page["candidate"]["release"], "r" + std::to_string(r + 1));
  }
  EXPECT_EQ(read(g + "/releases/6"), read(g + "/latest"));
  EXPECT_FALSE(fs::exists(dir_ / "site" / "data" / g / "releases" / "0.js"));
  EXPECT_EQ(read(g + "/releases/3")["counts"]["speed"], 8 + 1);  // the mm step, at r4

  // r6: add n=7 and n=8 fail anew with one error: one cause.
  const json r6 = read(g + "/releases/5");
  ASSERT_EQ(r6["causes"].size(), 1u);
  EXPECT_EQ(r6["causes"][0]["op"], "add");
  EXPECT_EQ(r6["causes"][0]["status"], "FAIL");
  EXPECT_EQ(r6["causes"][0]["count"], 2);
  EXPECT_EQ(r6["causes"][0]["new"], 2);
  EXPECT_EQ(r6["causes"][0]["still"], 0);
  EXPECT_EQ(r6["causes"][0]["keys"].size(), 2u);
  EXPECT_EQ(r6["still_failing_total"], 0);
  EXPECT_EQ(r6["fixes_total"], 0);

  // r7: n=6 (new) and n=7 (still failing) differ in numbers only: one cause, its first case's
  // message and repro; n=8 is fixed.
  const json r7 = read(g + "/releases/6");
  ASSERT_EQ(r7["causes"].size(), 1u) << r7["causes"].dump();
  const json& cause = r7["causes"][0];
  EXPECT_EQ(cause["count"], 2);
  EXPECT_EQ(cause["new"], 1);
  EXPECT_EQ(cause["still"], 1);
  EXPECT_EQ(cause["pattern"], "out#: max_abs_err # at [#, #] (atol #)");
  EXPECT_EQ(cause["message"], "out0: max_abs_err 0.75 at [3, 1] (atol 1e-05)");  // first line
  EXPECT_EQ(cause["keys"], json({key_of("add", 6), key_of("add", 7)}));
  EXPECT_NE(cause["repro"].get<std::string>().find("gauntlet repro '" + key_of("add", 6) + "'"), std::string::npos);
  EXPECT_EQ(r7["still_failing_total"], 1);
  ASSERT_EQ(r7["fixes_total"], 1);
  EXPECT_EQ(r7["fixes"][0]["detail"], "FAIL -> PASS");
  EXPECT_EQ(r7["fixes"][0]["status"], "PASS");

  // Older pairs than --compare-pairs have no page.
  DashboardOptions o;
  o.compare_pairs = 2;
  write(o);
  EXPECT_FALSE(fs::exists(dir_ / "site" / "data" / g / "releases" / "4.js"));
  EXPECT_TRUE(fs::exists(dir_ / "site" / "data" / g / "releases" / "5.js"));
  EXPECT_TRUE(fs::exists(dir_ / "site" / "data" / g / "releases" / "6.js"));
}

// Issue 23's chart defects, in the data: unmeasured graph breaks are null, not 0; the pass rate
// of the cases that ran beside the share that ran; change points on every series, and none on a
// weekly series too short for the method.
// Note [Status grid]: a string per release with a character per case slot of cases/index.js.
TEST_F(DashboardTest, TheStatusGridHoldsEveryCasesStatusInTheNewestReleases) {
  {
    // c3: only mm/1 ran; the other 15 cases of cpu are absent from it.
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    RunInfo info;
    info.release = "c3";
    info.backend = "cpu";
    info.backend_version = "cpu-1.0";
    info.suite = "smoke";
    info.started_at = fmt_date(10, 19);
    const std::int64_t run = store->begin_run(info);
    Outcome o;
    o.status = Status::Unsupported;
    store->add_result(run, CaseKey::parse(key_of("mm", 1)), o);
    store->flush();
    store->finish_run(run, info.started_at);
  }
  DashboardOptions o;
  o.grid_releases = 4;
  write(o);
  const json overview = read("overview");
  const json& sim = group(overview, "sim");
  const std::string id = sim["id"];
  const json grid = read(id + "/grid");
  const json index = read(id + "/cases/index");
  const std::size_t n = index["keys"].size();
  ASSERT_EQ(n, 16u);
  // The newest 4 of 6 releases, oldest first.
  EXPECT_EQ(grid["first"], 2);
  EXPECT_EQ(grid["releases"], json({"r3", "r4", "r5", "r6"}));
  ASSERT_EQ(grid["status"].size(), 4u);
  EXPECT_EQ(grid["codes"].size(), 9u);
  std::map<std::string, char> code;
  for (const auto& [c, name] : grid["codes"].items()) {
    ASSERT_EQ(c.size(), 1u);
    EXPECT_TRUE(code.emplace(name.get<std::string>(), c[0]).second) << "one code per status";
  }
  EXPECT_EQ(grid["absent"], "-");
  for (const json& col : grid["status"]) ASSERT_EQ(col.get<std::string>().size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = index["keys"][i];
    std::string want = "PPPP";
    if (key == key_of("add", 7)) want = {'P', 'P', 'P', code.at("FAIL")};
    if (key.find("<script>") != std::string::npos) want = {'P', 'P', 'P', code.at("FAIL")};  // add 8
    std::string got;
    for (const json& col : grid["status"]) got += col.get<std::string>()[i];
    for (char& ch : want) ch = ch == 'P' ? code.at("PASS") : ch;
    EXPECT_EQ(got, want) << key;
  }
  EXPECT_EQ(grid["dtypes"], json({"f32"}));
  EXPECT_EQ(grid["modes"], json({"eager"}));
  EXPECT_EQ(grid["dtype"], json(std::vector<int>(n, 0)));
  EXPECT_EQ(grid["mode"], json(std::vector<int>(n, 0)));

  // cpu: three releases, fewer than 4; c3 ran one case.
  const json& cpu = group(overview, "cpu");
  const json cgrid = read(cpu["id"].get<std::string>() + "/grid");
  const json cindex = read(cpu["id"].get<std::string>() + "/cases/index");
  EXPECT_EQ(cgrid["first"], 0);
  EXPECT_EQ(cgrid["releases"], json({"c1", "c2", "c3"}));
  const std::string c3 = cgrid["status"][2];
  ASSERT_EQ(c3.size(), cindex["keys"].size());
  for (std::size_t i = 0; i < c3.size(); ++i) {
    EXPECT_EQ(c3[i], cindex["keys"][i] == key_of("mm", 1) ? code.at("UNSUPPORTED") : '-') << cindex["keys"][i];
  }

  DashboardOptions none;
  none.grid_releases = 0;
  EXPECT_THROW(write(none), DashboardError);
}

// The coverage page's compile view: per target, cases with graph breaks, breaks and recompiles per
// release, and each break's reason and each recompile's failed guard as the latest release recorded
// them, the most frequent first.
TEST_F(DashboardTest, CoverageNamesEachTargetsGraphBreaksAndRecompilesWithTheirReasons) {
  add_sim_release("r7", [](const std::string& op, int n, Outcome& o) {
    o.sim_time_us = o.timing.median_us = 10.0 * n;
    o.graph_breaks = 0;
    o.recompiles = 0;
    if (op == "mm" && n <= 3) {
      o.graph_breaks = n == 1 ? 2 : 1;
      o.reason = n == 1 ? "graph breaks: aten::mm (<traced op>:2): no kernel on the device; B (m.py:9)"
                        : "graph breaks: aten::mm (<traced op>:2): no kernel on the device";
    }
    if (op == "mm" && n == 1) {
      o.recompiles = 2;
      o.reason += "; recompiles: size mismatch at index 0; size mismatch at index 0";
    }
    if (op == "add" && n == 1) {
      o.recompiles = 1;
      o.reason = "recompiles: dtype mismatch";
    }
  });
  write();
  const json cov = read(group(read("overview"), "sim")["id"].get<std::string>() + "/coverage");
  const json& t = cov["graph_breaks"];
  ASSERT_EQ(t.size(), 2u) << t.dump();
  EXPECT_EQ(t[0]["target"], "mm");
  EXPECT_EQ(t[0]["cases"].back(), 3);
  EXPECT_EQ(t[0]["breaks"].back(), 4);
  EXPECT_EQ(t[0]["recompiles"].back(), 2);
  EXPECT_EQ(t[0]["reasons"], json::parse(R"j([{"reason": "aten::mm (<traced op>:2): no kernel on the device", "n": 3},
                                             {"reason": "B (m.py:9)", "n": 1}])j"));
  EXPECT_EQ(t[0]["guards"], json::parse(R"([{"guard": "size mismatch at index 0", "n": 2}])"));
  // a target with recompiles and no graph break is listed after those with breaks
  EXPECT_EQ(t[1]["target"], "add");
  EXPECT_EQ(t[1]["cases"].back(), 0);
  EXPECT_EQ(t[1]["recompiles"].back(), 1);
  EXPECT_EQ(t[1]["reasons"], json::array());
  EXPECT_EQ(t[1]["guards"], json::parse(R"([{"guard": "dtype mismatch", "n": 1}])"));
}

TEST_F(DashboardTest, SeriesAreHonestAboutWhatWasMeasuredAndWhatRan) {
  // r7: two mm cases UNSUPPORTED, one XFAIL: 3 of 16 did not run to a verdict.
  add_sim_release("r7", [](const std::string& op, int n, Outcome& o) {
    o.status = op == "mm" && n <= 2    ? Status::Unsupported
               : op == "mm" && n == 3  ? Status::XFail
               : op == "add" && n >= 7 ? Status::Fail
                                       : Status::Pass;
    o.sim_time_us = o.timing.median_us = 10.0 * n;
  });
  write();
  const json overview = read("overview");
  const json& sim = group(overview, "sim");
  const json& r = sim["releases"];
  ASSERT_EQ(r.size(), 7u);
  for (const json& rel : r) {
    // No case of this history runs the compile path: not measured, not 0.
    EXPECT_TRUE(rel["graph_breaks"].is_null()) << rel.dump();
    EXPECT_TRUE(rel["recompiles"].is_null());
    for (const char* k : {"speed", "pass", "fallback", "breaks"}) EXPECT_TRUE(rel["change_point"].contains(k)) << k;
    EXPECT_FALSE(rel["change_point"]["breaks"].get<bool>());
  }
  for (const json& w : sim["weeks"]) EXPECT_TRUE(w["graph_breaks"].is_null());
  // r7: 11 PASS, 2 FAIL, 2 UNSUPPORTED, 1 XFAIL: 11 of 13 that ran; 13 of 16 ran.
  EXPECT_DOUBLE_EQ(r[6]["pass_rate"].get<double>(), 11.0 / 16.0);
  EXPECT_DOUBLE_EQ(r[6]["pass_rate_ran"].get<double>(), 11.0 / 13.0);
  EXPECT_DOUBLE_EQ(r[6]["ran_share"].get<double>(), 13.0 / 16.0);
  EXPECT_DOUBLE_EQ(r[0]["pass_rate_ran"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r[0]["ran_share"].get<double>(), 1.0);
  const json breakdown = read(sim["id"].get<std::string>() + "/breakdown");
  const json& mm7 = breakdown["by"]["family"]["matmul"][6];
  EXPECT_DOUBLE_EQ(mm7["pass_rate"].get<double>(), 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(mm7["pass_rate_ran"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(mm7["ran_share"].get<double>(), 5.0 / 8.0);

  // Twelve releases within one ISO week, with a speed step: change points per release, but the
  // weekly series has one point, too short for any.
  {
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    for (int k = 0; k < 12; ++k) {
      RunInfo info;
      info.release = "w" + std::to_string(k);
      info.backend = "week";
      info.backend_version = "week-1";
      info.suite = "smoke";
      info.started_at = fmt_date(10, 5 + k % 7);  // Monday 5 October to Sunday 11, twice
      const std::int64_t run = store->begin_run(info);
      for (int n = 1; n <= 8; ++n) {
        Outcome o;
        o.status = Status::Pass;
        o.sim_time_us = o.timing.median_us = 10.0 * n * (k >= 6 ? 2.0 : 1.0);
        store->add_result(run, CaseKey::parse(key_of("add", n)), o);
      }
      store->flush();
      store->finish_run(run, info.started_at);
    }
  }
  write();
  const json overview2 = read("overview");
  const json& week = group(overview2, "week");
  ASSERT_EQ(week["releases"].size(), 12u);
  bool release_cp = false;
  for (const json& rel : week["releases"]) release_cp = release_cp || rel["change_point"]["speed"].get<bool>();
  EXPECT_TRUE(release_cp) << "the doubled time is a change point of the release series";
  ASSERT_EQ(week["weeks"].size(), 1u);
  for (const char* k : {"speed", "pass", "fallback", "breaks"})
    EXPECT_FALSE(week["weeks"][0]["change_point"][k].get<bool>()) << k;

  // A change point's release is judged, and has its page, however few pairs are asked for.
  DashboardOptions one;
  one.compare_pairs = 1;
  write(one);
  const json overview3 = read("overview");
  const json& week3 = group(overview3, "week");
  for (std::size_t r = 1; r + 1 < week3["releases"].size(); ++r) {
    const json& rel = week3["releases"][r];
    EXPECT_EQ(!rel["regressions"].is_null(), rel["change_point"]["speed"].get<bool>()) << r;
    EXPECT_EQ(
        fs::exists(dir_ / "site" / "data" / week3["id"].get<std::string>() / "releases" / (std::to_string(r) + ".js")),
        rel["change_point"]["speed"].get<bool>())
        << r;
  }
}

// The issue's case: the fallback rate steps from 14.9% to 18.4% while pass rate and speed hold;
// the fallback series gets its change point like any other (Note [Change points on every series]).
TEST_F(DashboardTest, AFallbackStepIsAChangePointOfItsOwnSeries) {
  {
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    for (int k = 0; k < 10; ++k) {
      RunInfo info;
      info.release = "f" + std::to_string(k);
      info.backend = "fb";
      info.backend_version = "fb-1";
      info.suite = "smoke";
      info.started_at = fmt_date(10, 1 + 3 * k);
      const std::int64_t run = store->begin_run(info);
      for (int n = 0; n < 1000; ++n) {
        Outcome o;
        o.status = Status::Pass;
        o.sim_time_us = o.timing.median_us = 10.0 + n % 7;
        if (n < (k < 5 ? 149 : 184)) o.fallback_ops = {"aten::cumsum"};
        store->add_result(run, CaseKey::parse(key_of("add", n + 1)), o);
      }
      store->flush();
      store->finish_run(run, info.started_at);
    }
  }
  write();
  const json overview = read("overview");
  const json& fb = group(overview, "fb");
  ASSERT_EQ(fb["releases"].size(), 10u);
  for (std::size_t r = 0; r < 10; ++r) {
    const json& rel = fb["releases"][r];
    EXPECT_DOUBLE_EQ(rel["fallback_rate"].get<double>(), r < 5 ? 0.149 : 0.184);
    EXPECT_EQ(rel["change_point"]["fallback"].get<bool>(), r == 5) << r;
    EXPECT_FALSE(rel["change_point"]["pass"].get<bool>()) << r;
    EXPECT_FALSE(rel["change_point"]["speed"].get<bool>()) << r;
  }
  // The change point's release has its page, which names the new fallback.
  const json page = read(fb["id"].get<std::string>() + "/releases/5");
  ASSERT_EQ(page["new_fallbacks"].size(), 1u);
  EXPECT_EQ(page["new_fallbacks"][0]["op"], "aten::cumsum");
  EXPECT_EQ(page["new_fallbacks"][0]["cases"], 35);
}

}  // namespace
}  // namespace gauntlet
