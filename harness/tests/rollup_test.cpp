// Rollups (Note [Rollups] in harness/analysis/rollup.cpp) and triage (Note [Triage] in
// harness/analysis/triage.cpp), on a database written through the Store: runs of `sim` over 40 `add`, 20 `mul` and 10
// `exp` cases (f32, eager), simulated time. The candidate makes every `add` case 20% slower, one `mul` case 30% slower,
// and 5 `exp` cases fail with one error whose numbers differ from case to case. The suite's speed moves too (a finding
// of its own, key suite:smoke). r3 is r1 again; r4 makes `add` 40% slower (twice r2's).
#include "gauntlet/analysis/rollup.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gauntlet/analysis/compare_console.h"
#include "gauntlet/analysis/judged.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/triage.h"
#include "gauntlet/analysis/waivers.h"
#include "gauntlet/store/acks.h"
#include "gauntlet/store/store.h"
#include "gauntlet/store/store_reader.h"

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
    add_run(*store, 4);
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
    const double add_factor = release == 2 ? 1.2 : release == 4 ? 1.4 : 1.0;
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
    for (int n = 1; n <= 40; ++n) add("add", n, add_factor, false);
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

[[noreturn]] void fail(const std::string& message, int exit_code) { throw Error(message, exit_code); }

std::int64_t count_acknowledged(const RunComparison& c) {
  return std::count_if(c.findings.begin(), c.findings.end(), [](const Finding& f) { return f.acknowledged(); });
}

class TriageTest : public RollupTest {
 protected:
  // `gauntlet triage ack SUBJECT` against run 2 (r2 vs r1), as the command makes it.
  std::vector<Ack> ack(const std::string& subject, const std::string& until = "") {
    const RunComparison c = compare_runs(db_, 2, 1, CompareOptions{});
    std::vector<Ack> acks = make_acks(c, subject, "");
    for (Ack& a : acks) {
      a.note = "known: the add rewrite";
      a.by = "alice";
      a.at = "2026-12-07T10:00:00Z";
      a.until = until;
      a.id = add_ack(db_, a, fail);
    }
    return acks;
  }
  RunComparison judged(std::int64_t run, std::int64_t baseline, bool honour = false) {
    RunComparison c = compare_runs(db_, run, baseline, CompareOptions{});
    apply_acks(c, read_acks(db_, fail), StoreReader(db_, fail).runs(), honour);
    return c;
  }
};

TEST_F(TriageTest, AnAcknowledgedGroupIsListedApartWithItsNoteAndGatesOnlyWhenAcksAreNotHonoured) {
  EXPECT_TRUE(read_acks(db_, fail).empty());  // no table yet: no acks
  const std::vector<Ack> made = ack("op/add/f32/eager");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].moved, 40);
  EXPECT_NEAR(made[0].worst, 1.2, 1e-9);
  const std::vector<Ack> stored = read_acks(db_, fail);  // in the database, as a restart reads it
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].subject, "op/add/f32/eager");
  EXPECT_EQ(stored[0].change, "slower");
  EXPECT_EQ(stored[0].by, "alice");

  const RunComparison c = judged(2, 1);
  EXPECT_EQ(count_acknowledged(c), 40);
  const std::string text = compare_console_text(c, Waivers{});
  const std::size_t apart = text.find("acknowledged (40 regressions in 1 group");
  ASSERT_NE(apart, std::string::npos) << text;
  EXPECT_NE(text.find("[ack 1 by alice on 2026-12-07: known: the add rewrite]", apart), std::string::npos) << text;
  EXPECT_EQ(text.substr(0, apart).find("op/add/f32/eager"), std::string::npos) << "not among the open ones:\n" << text;
  EXPECT_EQ(gate_verdict(c, {Gate::Speed}).summary,
            "gate speed: FAIL: 42 speed regressions (5 regressions outside the gates, 40 acknowledged, gating "
            "without --honour-acks)");
  EXPECT_EQ(gate_verdict(judged(2, 1, true), {Gate::Speed}).summary,
            "gate speed: FAIL: 2 speed regressions (5 regressions outside the gates, 40 acknowledged)");
  const std::string md = markdown_report(c, ReportOptions{});
  EXPECT_NE(md.find("| speed | `op/add/f32/eager` | 40 of 40 | slower | +20.0% | [ack 1 by alice"), std::string::npos)
      << md;
}

TEST_F(TriageTest, ARegressionThatGrewPastItsAcknowledgementIsOpenAgain) {
  ack("op/add");
  const RunComparison c = judged(4, 1);  // add 40% slower against r1, where 20% was acknowledged
  EXPECT_EQ(count_acknowledged(c), 0);
  const std::vector<FindingGroup> groups = group_findings(c);
  const auto add = std::find_if(groups.begin(), groups.end(), [](const FindingGroup& g) {
    return g.group == "op/add/f32/eager" && g.change == Change::Slower;
  });
  ASSERT_NE(add, groups.end());
  EXPECT_EQ(add->reopened, 40);
  EXPECT_EQ(add->ack, nullptr);
  EXPECT_NE(group_line(*add).find("open again, 40 acknowledged in ack 1: +40.0% where at most +20.0% was acknowledged"),
            std::string::npos)
      << group_line(*add);
}

TEST_F(TriageTest, AnAckHoldsOnlyAcrossTheChangeItAcknowledgedUntilItsReleaseAndUntilRemoved) {
  ack("op/add/f32/eager", "r4");
  EXPECT_EQ(count_acknowledged(judged(2, 1)), 40);
  // r4 against r2: the baseline already has the slowdown; what changed since is a change of its own
  EXPECT_EQ(count_acknowledged(judged(4, 2)), 0);
  // r4 is the ack's --until release: it no longer holds there
  EXPECT_EQ(count_acknowledged(judged(4, 1)), 0);
  ASSERT_TRUE(remove_ack(db_, 1, "bob", "2026-12-08T09:00:00Z", fail));
  EXPECT_FALSE(remove_ack(db_, 1, "bob", "2026-12-08T09:00:00Z", fail));  // once
  EXPECT_EQ(count_acknowledged(judged(2, 1)), 0);
  const std::vector<Ack> kept = read_acks(db_, fail);  // removed, kept for the record
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].removed_by, "bob");
}

TEST_F(TriageTest, AFailingOpIsAcknowledgedByItsCauseAndNamesAreCheckedWithTheNearest) {
  const std::vector<Ack> made = ack("op/exp");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].change, "status-change");
  EXPECT_EQ(made[0].moved, 5);
  EXPECT_NE(made[0].signature.find("elements outside tolerance"), std::string::npos);
  EXPECT_EQ(count_acknowledged(judged(2, 1)), 5);
  const RunComparison c = compare_runs(db_, 2, 1, CompareOptions{});
  try {
    make_acks(c, "op/add/f32/eagr", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "triage ack: nothing regressed in run 2 (r2) against run 1 (r1) is 'op/add/f32/eagr' "
                 "(did you mean op/add/f32/eager?)");
  }
  EXPECT_THROW(make_acks(c, "op/mul/f32/eager", "status-change"), Error);
}

// Note [What was judged] in analysis/judged.cpp: one case's figures as compare judged them.
TEST_F(RollupTest, ACaseJudgementHasBothRunsFiguresAndJudgesANewMeasurementByTheSameRule) {
  const std::optional<CaseJudgement> j = judge_case(db_, 2, "op/add/f32/3x8/contig/eager");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->baseline.id, 1);
  EXPECT_DOUBLE_EQ(j->base.sim_us, 13.0);
  EXPECT_NEAR(j->stored.sim_us, 15.6, 1e-9);
  ASSERT_EQ(j->findings.size(), 1u);
  EXPECT_TRUE(judged_on_device_time(*j));
  const std::string again = judged_text(*j, j->stored);
  EXPECT_NE(again.find("    verdict   slower: +20.0% against the baseline, flagged past +5.0% (--min-effect): the "
                       "regression reproduces\n"),
            std::string::npos)
      << again;
  EXPECT_NE(judged_text(*j, j->base).find("verdict   not flagged: +0.0%"), std::string::npos);
  CaseFigures none = j->stored;
  none.sim_us = NAN;
  EXPECT_NE(judged_text(*j, none).find("no sim time: the backend reported none here"), std::string::npos);
  // a case compare did not flag
  const std::optional<CaseJudgement> mul = judge_case(db_, 2, "op/mul/f32/3x8/contig/eager");
  ASSERT_TRUE(mul.has_value());
  EXPECT_EQ(judged_text(*mul, mul->stored),
            "judged   no speed, memory, compile-time or first-run regression of run 2 against baseline run 1 (r1)\n");
  // host time: the minimum effect and the significance of the repetitions
  CaseFigures base, now;
  base.median_us = 10;
  base.samples_us = {10, 10.1, 9.9, 10.2, 9.8, 10, 10.1};
  now.median_us = 12;
  now.samples_us = {12, 12.1, 11.9, 12.2, 11.8, 12, 12.1};
  CompareOptions host;
  host.metric = Metric::Host;
  const NowVerdict v = judge_now(Change::Slower, base, now, host);
  EXPECT_NEAR(v.ratio, 1.2, 1e-12);
  EXPECT_TRUE(v.flagged);
  EXPECT_LT(v.p_value, 0.01);
  now.samples_us = {12};  // one repetition cannot be significant
  EXPECT_FALSE(judge_now(Change::Slower, base, now, host).flagged);
}

}  // namespace
}  // namespace gauntlet
