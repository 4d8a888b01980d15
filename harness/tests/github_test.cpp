// GitHub Actions output (gauntlet/analysis/github.h): workflow command escaping, annotation lines and their
// cap, which findings of a run and of a comparison become annotations, and compare's step summary
// (approval test, approval.h).
#include "gauntlet/analysis/github.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "approval.h"

namespace gauntlet {
namespace {

TEST(GitHubEscape, DataAndProperties) {
  EXPECT_EQ(github_escape_data("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b");
  EXPECT_EQ(github_escape_property("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext%3A a%2Cb");
}

TEST(GitHubAnnotation, Line) {
  EXPECT_EQ(annotation_line({Annotation::Level::Error, "suites/yaml/smoke.yaml", "FAIL op/add/f32/_,_/contig/eager",
                             "FAIL op/add: 1 of 4 elements\nrepro: gauntlet repro 'op/add'"}),
            "::error file=suites/yaml/smoke.yaml,title=FAIL op/add/f32/_%2C_/contig/eager::FAIL op/add: 1 of 4 "
            "elements%0Arepro: gauntlet repro 'op/add'\n");
  EXPECT_EQ(annotation_line({Annotation::Level::Warning, "", "", "x"}), "::warning::x\n");
  EXPECT_EQ(annotation_line({Annotation::Level::Notice, "", "t", "x"}), "::notice title=t::x\n");
}

TEST(GitHubAnnotation, CappedWithOneLineForTheRest) {
  std::vector<Annotation> all(7, Annotation{Annotation::Level::Error, "", "t", "m"});
  const std::string out = annotation_lines(all, 5, "gauntlet show --db x.db --run 1");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6);
  EXPECT_NE(out.find("::notice title=gauntlet::2 more findings not annotated (at most 5 are): gauntlet show --db x.db "
                     "--run 1\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(annotation_lines(all, 7, "").find("::notice"), std::string::npos);
}

RunReport run_sample(bool gate) {
  RunReport r;
  r.id = 2;
  r.backend = "sim";
  r.db_path = "g.db";
  r.gate = gate;
  Outcome pass, fail, crash;
  pass.key = "op/a";
  fail.key = "op/c";
  fail.status = Status::Fail;
  fail.error = "mismatch\ndetail";
  crash.key = "op/b";
  crash.status = Status::Crash;
  crash.error = "signal 11";
  r.results = {pass, fail, crash};
  return r;
}

TEST(GitHubAnnotation, RunFailuresAreErrorsWithTheGateElseWarnings) {
  const std::vector<Annotation> gated = run_annotations(run_sample(true), "suites/yaml/smoke.yaml");
  ASSERT_EQ(gated.size(), 2u);
  EXPECT_EQ(gated[0].level, Annotation::Level::Error);
  EXPECT_EQ(gated[0].title, "CRASH op/b");  // sorted by key
  EXPECT_EQ(gated[1].message, "FAIL op/c: mismatch\nrepro: gauntlet repro 'op/c' --db g.db --run 2");
  EXPECT_EQ(gated[1].file, "suites/yaml/smoke.yaml");
  const std::vector<Annotation> ungated = run_annotations(run_sample(false), "");
  ASSERT_EQ(ungated.size(), 2u);
  EXPECT_EQ(ungated[0].level, Annotation::Level::Warning);
  RunReport hollow = run_sample(true);
  hollow.hollow = "no case passed";
  EXPECT_EQ(run_annotations(hollow, "").front().message, "run 2 is hollow: no case passed");
}

RunComparison comparison() {
  RunComparison c;
  c.db_path = "g.db";
  c.baseline = {1, "a", "sim", "sim 0.9", "smoke", "2024-01-01T00:00:00Z", {}};
  c.candidate = {2, "b", "sim", "sim 0.9", "smoke", "2024-02-01T00:00:00Z", {}};
  c.common_cases = 4;
  c.baseline_counts = {{Status::Pass, 3}, {Status::Fail, 1}};
  c.candidate_counts = {{Status::Pass, 1}, {Status::Fail, 3}};
  Finding acc;
  acc.key = "op/mm/f32";
  acc.change = Change::StatusChange;
  acc.detail = "PASS -> FAIL: max_abs_err 0.5";
  Finding waived = acc;
  waived.key = "op/mv/f32";
  waived.waiver = WaiverRef{"waivers.yaml:3", "known", "team", "2099-01-01", false};
  Finding cov;
  cov.key = "op/exp/f32";
  cov.change = Change::NewFallback;
  cov.detail = "falls back to the CPU: aten::exp.out";
  Finding fixed;
  fixed.key = "op/sub/f32";
  fixed.change = Change::Fixed;
  fixed.detail = "FAIL -> PASS";
  c.findings = {acc, waived, cov, fixed};
  c.known_failures = {{"op/div/f16", Status::Fail, Status::Fail, "1 of 64 elements outside tolerance"}};
  return c;
}

TEST(GitHubAnnotation, CompareGatingRegressionsAreErrorsOthersWarnings) {
  ReportOptions o;
  o.gates = {Gate::Accuracy};
  o.db_path = "g.db";
  const std::vector<Annotation> a = compare_annotations(comparison(), o);
  ASSERT_EQ(a.size(), 2u);  // the waived regression, the fixed case and the known failure: none
  EXPECT_EQ(a[0].level, Annotation::Level::Error);
  EXPECT_EQ(a[0].title, "status-change op/mm/f32");
  EXPECT_EQ(
      a[0].message,
      "status-change op/mm/f32: PASS -> FAIL: max_abs_err 0.5\nrepro: gauntlet repro 'op/mm/f32' --db g.db --run 2");
  EXPECT_EQ(a[1].level, Annotation::Level::Warning);
  EXPECT_NE(a[1].message.find("(not gated: --gate coverage not asked for)"), std::string::npos);
}

TEST(GitHubStepSummary, CompareMatchesApprovedCopy) {
  ReportOptions o;
  o.gates = {Gate::Accuracy};
  o.db_path = "g.db";
  const RunComparison c = comparison();
  approval::expect_approved("compare_step_summary", "md", compare_step_summary(c, o, gate_verdict(c, o.gates).summary));
}

}  // namespace
}  // namespace gauntlet
