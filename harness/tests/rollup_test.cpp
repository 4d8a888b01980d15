// Rollups (Note [Rollups] in harness/analysis/rollup.cpp), on a database written through the
// Store: two runs of `sim` over 40 `add`, 20 `mul` and 10 `exp` cases (f32, eager), simulated time.
// The candidate makes every `add` case 20% slower, one `mul` case 30% slower, and 5 `exp` cases
// fail with one error whose numbers differ from case to case. The suite's speed moves too (a
// finding of its own, key suite:smoke).
#include "gauntlet/analysis/rollup.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gauntlet/analysis/compare_console.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/waivers.h"
#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

class RollupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_rollup_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "r.db").string();
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    add_run(*store, 1);
    add_run(*store, 2);
    add_run(*store, 3);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void add_run(Store& store, int release) {
    RunInfo info;
    info.release = "r" + std::to_string(release);
    info.backend = "sim";
    info.backend_version = "sim-1.0";
    info.suite = "smoke";
    info.started_at = fmt::format("2026-11-0{}T10:00:00Z", release);
    const std::int64_t run = store.begin_run(info);
    const bool candidate = release == 2;  // r3 is r1 again
    auto add = [&](const std::string& op, int n, double factor, bool fail) {
      Outcome o;
      o.status = fail ? Status::Fail : Status::Pass;
      o.atol = 1e-5;
      o.rtol = 1.3e-6;
      o.sim_time_us = (10.0 + n) * factor;
      o.timing.median_us = 5;
      if (fail) o.error = fmt::format("out0: {} of 527 elements outside tolerance (rtol=1.3e-06, atol=1e-05)", 500 + n);
      store.add_result(run, CaseKey::parse(fmt::format("op/{}/f32/{}x8/contig/eager", op, n)), o);
    };
    for (int n = 1; n <= 40; ++n) add("add", n, candidate ? 1.2 : 1.0, false);
    for (int n = 1; n <= 20; ++n) add("mul", n, candidate && n == 7 ? 1.3 : 1.0, false);
    for (int n = 1; n <= 10; ++n) add("exp", n, 1.0, candidate && n % 2 == 0);
    store.flush();
    store.finish_run(run, info.started_at);
  }

  fs::path dir_;
  std::string db_;
};

TEST(CaseGroup, DropsWhatTheSuiteVaries) {
  EXPECT_EQ(case_group("op/softmax/bf16/17x31/t/eager-bwd/dim=-1"), "op/softmax/bf16/eager-bwd");
  EXPECT_EQ(case_group("op/add/f32/7x1x5,1x3x5/contig/compile"), "op/add/f32/compile");
  EXPECT_EQ(case_group("coll/all_reduce/bf16/1048576/contig/w4/op=sum"), "coll/all_reduce/bf16/w4");
  EXPECT_EQ(case_group("model/gru/f32/small/compile/infer/seq=4"), "model/gru/f32/small/compile/infer");
  EXPECT_EQ(case_group("not-a-key"), "not-a-key");
  EXPECT_EQ(case_target("op/softmax/bf16/17x31/t/eager-bwd/dim=-1"), "op/softmax");
  EXPECT_EQ(case_target("model/gru/f32/small/compile/infer/seq=4"), "model/gru");
}

TEST_F(RollupTest, OneSlowedOpIsOneGroupWithItsCountAndMedianAndOneFailureCauseIsOneGroup) {
  const RunComparison c = compare_runs(db_, 2, 1, CompareOptions{});
  const std::vector<FindingGroup> groups = group_findings(c);
  for (const FindingGroup& g : groups) SCOPED_TRACE(group_line(g));
  ASSERT_EQ(groups.size(), 4u) << compare_console_text(c, Waivers{});
  // accuracy first: the five exp failures, one cause though each error's numbers differ
  EXPECT_EQ(groups[0].change, Change::StatusChange);
  EXPECT_EQ(groups[0].group, "op/exp");
  EXPECT_EQ(groups[0].moved, 5);
  EXPECT_EQ(groups[0].cases, 10);
  EXPECT_NE(groups[0].cause.find("elements outside tolerance"), std::string::npos) << groups[0].cause;
  // then speed: add before mul (40 cases moved against 1)
  EXPECT_EQ(groups[1].change, Change::Slower);
  EXPECT_EQ(groups[1].group, "op/add/f32/eager");
  EXPECT_EQ(groups[1].moved, 40);
  EXPECT_EQ(groups[1].cases, 40);
  EXPECT_NEAR(groups[1].median, 1.2, 1e-9);
  EXPECT_EQ(groups[2].group, "op/mul/f32/eager");
  EXPECT_EQ(groups[2].moved, 1);
  EXPECT_EQ(groups[2].cases, 20);
  EXPECT_NEAR(groups[2].median, 1.3, 1e-9);
  EXPECT_EQ(groups[3].group, "suite:smoke");  // the suite's own speed finding, a group of its own
  EXPECT_EQ(group_line(groups[3]), "suite:smoke: slower, median +11.4%");

  // compare's console names them in its first lines
  const std::string text = compare_console_text(c, Waivers{});
  const std::size_t add = text.find("op/add/f32/eager: 40 of 40 cases slower, median +20.0%");
  ASSERT_NE(add, std::string::npos) << text;
  EXPECT_NE(text.find("op/exp: 5 of 10 cases fail: PASS -> FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("op/mul/f32/eager: 1 of 20 cases slower, median +30.0%"), std::string::npos) << text;
  EXPECT_LT(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(add), '\n'), 8) << text;

  // the Markdown report's table, and the JSON report's groups pointing at their findings
  const std::string md = markdown_report(c, ReportOptions{});
  EXPECT_NE(md.find("| speed | `op/add/f32/eager` | 40 of 40 | slower | +20.0% | +20.0% .. +20.0% |"),
            std::string::npos)
      << md;
  EXPECT_LT(md.find("## Regressions by group"), md.find("## Accuracy regressions"));
  const std::string json = json_report(c, ReportOptions{});
  EXPECT_NE(json.find("\"group\": \"op/add/f32/eager\""), std::string::npos);
}

TEST_F(RollupTest, NoFindingsNoGroupsAndNoKeysRead) {
  const RunComparison c = compare_runs(db_, 3, 1, CompareOptions{});
  EXPECT_TRUE(group_findings(c).empty());
  EXPECT_TRUE(c.group_cases.empty());
  EXPECT_EQ(compare_console_text(c, Waivers{}).find("by group"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet
