#include "gauntlet/core/session/plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

const std::string kSuites = std::string(GAUNTLET_SOURCE_DIR) + "/suites/yaml";

std::vector<const Case*> all_of(const Suite& s) {
  std::vector<const Case*> v;
  for (const Case& c : s.cases) v.push_back(&c);
  return v;
}

TEST(Plan, EightShardsOfTheFullSuiteCoverEveryCaseOnceWithin5Percent) {
  const Suite full = load_suite("full", kSuites);
  const Plan p = Plan::make(full, all_of(full), 8, {}, "estimate");
  ASSERT_EQ(p.assignment.size(), 8u);
  std::set<std::uint64_t> seen;
  std::size_t total = 0;
  for (const auto& shard : p.assignment) {
    total += shard.size();
    seen.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(total, full.cases.size());
  EXPECT_EQ(seen.size(), full.cases.size()) << "a case in two shards";
  const double mean = std::accumulate(p.shard_cost_us.begin(), p.shard_cost_us.end(), 0.0) / 8;
  const double largest = *std::max_element(p.shard_cost_us.begin(), p.shard_cost_us.end());
  EXPECT_LT(largest, 1.05 * mean);
}

TEST(Plan, HistoryCostsWinOverEstimates) {
  const Suite smoke = load_suite("smoke", kSuites);
  std::map<std::uint64_t, double> history;
  history[smoke.cases[0].id] = 1e9;  // one case slower than all the others together
  const Plan p = Plan::make(smoke, all_of(smoke), 4, history, "history");
  int holder = -1;
  for (int i = 0; i < 4; ++i) {
    const auto& a = p.assignment[static_cast<std::size_t>(i)];
    if (std::find(a.begin(), a.end(), smoke.cases[0].id) != a.end()) holder = i;
  }
  ASSERT_GE(holder, 0);
  EXPECT_EQ(p.assignment[static_cast<std::size_t>(holder)].size(), 1u) << "the huge case has a shard to itself";
}

// Note [ETA from history]: a case is weighed by what it took in the latest finished run of the
// same backend and suite; one that run lacks, by its estimate scaled as that run's cases were.
TEST(Plan, ExpectedCostsComeFromTheLatestFinishedRunOfTheSameBackendAndSuite) {
  std::string pattern = ::testing::TempDir() + "gauntlet_eta_XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  auto store = Store::open((dir / "h.db").string(), Store::OpenMode::ReadWrite);
  const CaseKey a = CaseKey::parse("op/add/f32/8x8,8x8/contig/eager");
  const CaseKey b = CaseKey::parse("op/exp/f32/64/contig/eager");
  const CaseKey unseen = CaseKey::parse("op/neg/f32/4096/contig/eager");
  auto add_run = [&](const std::string& backend, double scale, bool finish) {
    RunInfo info;
    info.backend = backend;
    info.suite = "smoke";
    info.started_at = "2026-12-01T10:00:00Z";
    const std::int64_t run = store->begin_run(info);
    for (const CaseKey* k : {&a, &b}) {
      Outcome o;
      o.status = Status::Pass;
      o.timing.first_us = scale * estimated_case_us(*k);  // measured: `scale` times the estimate
      o.timing.median_us = 0;
      store->add_result(run, *k, o);
    }
    store->flush();
    if (finish) store->finish_run(run, info.started_at);
    return run;
  };
  const std::int64_t sim = add_run("sim", 40, true);
  add_run("cpu", 3, true);
  const std::int64_t now = add_run("sim", 1000, false);  // this run: unfinished, not history
  const auto cost = expected_case_cost(*store, "sim", "smoke", now);
  EXPECT_DOUBLE_EQ(cost(a), 40 * estimated_case_us(a));
  EXPECT_DOUBLE_EQ(cost(unseen), 40 * estimated_case_us(unseen)) << "scaled as run " << sim << "'s cases were";
  EXPECT_DOUBLE_EQ(expected_case_cost(*store, "cpu", "smoke", now)(a), 3 * estimated_case_us(a));
  EXPECT_DOUBLE_EQ(expected_case_cost(*store, "plugin:x.so", "smoke", now)(a), estimated_case_us(a)) << "no history";
  store.reset();
  fs::remove_all(dir);
}

TEST(Plan, SavedPlanLoadsBackAndSelectsTheSameCases) {
  const Suite smoke = load_suite("smoke", kSuites);
  const Plan p = Plan::make(smoke, all_of(smoke), 3, {}, "estimate");
  const fs::path file = fs::temp_directory_path() / ("gauntlet_plan_" + std::to_string(::getpid()) + ".json");
  p.save(file.string());
  const Plan q = Plan::load(file.string());
  EXPECT_EQ(q.suite, "smoke");
  EXPECT_EQ(q.shards, 3);
  EXPECT_EQ(q.assignment, p.assignment);
  std::size_t n = 0;
  for (int i = 0; i < 3; ++i) n += q.cases_of(smoke, i, "").size();
  EXPECT_EQ(n, smoke.cases.size());
  EXPECT_LT(q.cases_of(smoke, 0, "op/add/*").size(), q.cases_of(smoke, 0, "").size());
  EXPECT_THROW(q.cases_of(smoke, 3, ""), std::invalid_argument);
  // A plan made for another suite names cases this one lacks.
  const Suite other = load_suite("nightly", kSuites);
  EXPECT_THROW(q.cases_of(other, 0, ""), std::invalid_argument);
  fs::remove(file);
}

TEST(Plan, MalformedPlansAreOneLineErrorsNamingTheFile) {
  const fs::path file = fs::temp_directory_path() / ("gauntlet_badplan_" + std::to_string(::getpid()) + ".json");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    std::ofstream(file) << text;
    try {
      Plan::load(file.string());
      ADD_FAILURE() << "no error for " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("not json", "not a JSON plan");
  expect_error(R"({"format":"other"})", "not a gauntlet plan");
  expect_error(R"({"format":"gauntlet-plan","version":99})", "plan format version 99");
  expect_error(R"({"format":"gauntlet-plan","version":1,"suite":"s","shards":2,"assignment":[]})",
               "2 shards declared, 0 listed");
  EXPECT_THROW(Plan::load("/nonexistent/plan.json"), std::invalid_argument);
  fs::remove(file);
}

}  // namespace
}  // namespace gauntlet
