// The reports of `gauntlet run` (gauntlet/analysis/run_reports.h): JUnit XML, Markdown, the step summary and
// the verdict. Approval tests (approval.h): each report of a fixed RunReport is compared with its
// approved copy in harness/tests/approved/; the JUnit report is validated against junit.xsd.
#include "gauntlet/analysis/run_reports.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "approval.h"
#include "gauntlet/base/text.h"

namespace gauntlet {
namespace {

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

Outcome outcome(std::string key, Status status, std::string error = "", std::string reason = "") {
  Outcome o;
  o.key = std::move(key);
  o.status = status;
  o.error = std::move(error);
  o.reason = std::move(reason);
  return o;
}

// One result of every status, in no particular order; one key and error with markup, quotes, a
// control byte and invalid UTF-8; a crash with a stderr tail holding backticks.
RunReport sample() {
  RunReport r;
  r.id = 7;
  r.release = "2.4.0-rc1";
  r.backend = "sim";
  r.backend_version = "sim 0.9.2";
  r.suite = "smoke";
  r.started_at = "2024-06-01T02:00:00Z";
  r.finished_at = "2024-06-01T02:03:10Z";
  r.planned = 9;
  r.db_path = "out/qualify/gauntlet.db";
  r.gauntlet_version = "0.1.0";
  r.gate = true;

  Outcome pass = outcome("op/add/f32/8x8,8x8/contig/eager", Status::Pass);
  pass.timing.first_us = 120;
  pass.timing.median_us = 10;
  pass.timing.reps = 5;
  pass.timing.golden_us = 30;
  Outcome fail = outcome("op/mm/f32/64x64,64x64/contig/eager", Status::Fail, "1 of 4096 elements outside tolerance");
  fail.metrics = {0.5, 0.01, 1, 4096, 12, true, "out0[17]"};
  fail.rtol = 1.3e-6;
  fail.atol = 1e-5;
  fail.tolerance_profile = "tolerances.yaml:12";
  fail.timing.first_us = 2000;
  Outcome crash = outcome("op/lgamma/f32/64/contig/eager", Status::Crash,
                          "worker died: signal 11 (SIGSEGV)\nlast lines of its stderr:\n"
                          "sim: fault at 0x10\n``` fenced ```\nbacktrace: <frame> & \"more\"");
  Outcome timeout = outcome("coll/all_reduce/f32/1048576/w4/sum", Status::Timeout, "no result after 60 s");
  Outcome error = outcome("op/<script>x|y/f32/4/contig/eager", Status::Error,
                          "bad <script> & \"quoted\" \x01 ctrl \xff byte\nsecond line");
  Outcome xpass =
      outcome("op/erfinv/f16/64/contig/eager", Status::XPass, "", "expectations.yaml:40: erfinv f16 is inexact");
  Outcome xfail = outcome("op/sort/bf16/64/contig/eager", Status::XFail, "2 of 64 elements outside tolerance",
                          "expectations.yaml:12: stable sort of bf16 ties");
  Outcome skip = outcome("model/mlp/f32/b32-h1024/compile/train", Status::Skip, "", "compile tests run nightly");
  Outcome unsupported = outcome("op/exp/f64/64/contig/eager", Status::Unsupported,
                                "NotImplementedError: no kernel for aten::exp on PrivateUse1");
  r.results = {xfail, crash, pass, skip, timeout, fail, unsupported, error, xpass};
  return r;
}

TEST(RunReportJUnit, MatchesApprovedCopy) {
  approval::expect_approved("run_report", "xml", run_junit_report(sample()));
}

TEST(RunReportJUnit, ValidatesAgainstTheSchema) {
  EXPECT_EQ(approval::junit_schema_errors(run_junit_report(sample()), "run_report.junit.xml"), "");
  EXPECT_EQ(approval::junit_schema_errors(run_junit_report(RunReport{}), "run_report.empty.junit.xml"), "");
  RunReport unfinished = sample();
  unfinished.finished_at.clear();
  unfinished.gate = false;
  EXPECT_EQ(approval::junit_schema_errors(run_junit_report(unfinished), "run_report.unfinished.junit.xml"), "");
}

// A testcase per result, each with its time; FAIL and XPASS are failures, ERROR, CRASH and TIMEOUT
// errors, SKIP and UNSUPPORTED skipped, XFAIL passes with a note.
TEST(RunReportJUnit, StatusMapping) {
  const std::string xml = run_junit_report(sample());
  EXPECT_EQ(count(xml, "<testcase "), 9u);
  EXPECT_EQ(count(xml, " time=\""), 9u + 3u + 1u);  // testcases, testsuites (op, coll, model), testsuites
  EXPECT_EQ(count(xml, "<failure "), 2u);
  EXPECT_EQ(count(xml, "<error "), 3u);
  EXPECT_EQ(count(xml, "<skipped "), 2u);
  EXPECT_NE(xml.find("<testsuites name=\"gauntlet run 7\" tests=\"9\" failures=\"2\" errors=\"3\" skipped=\"2\""),
            std::string::npos)
      << xml;
  // The passing case's time: first call 120 µs + 5 x 10 µs + golden 30 µs.
  EXPECT_NE(xml.find("name=\"op/add/f32/8x8,8x8/contig/eager\" time=\"0.000200\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"SKIP: compile tests run nightly\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<system-out>XFAIL: failed as expected"), std::string::npos);
  EXPECT_NE(xml.find("repro: gauntlet repro 'op/mm/f32/64x64,64x64/contig/eager' --db out/qualify/gauntlet.db --run 7"),
            std::string::npos);
  EXPECT_NE(
      xml.find("<system-err>sim: fault at 0x10\n``` fenced ```\nbacktrace: &lt;frame&gt; &amp; \"more\"</system-err>"),
      std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
}

TEST(RunReportMarkdown, MatchesApprovedCopy) {
  approval::expect_approved("run_report", "md", run_markdown_report(sample()));
}

TEST(RunReportMarkdown, TablesStopAtTop) {
  const std::string md = run_markdown_report(sample(), 1);
  EXPECT_NE(md.find("... and 4 more (see the JUnit report)"), std::string::npos) << md;  // 5 failures
  EXPECT_NE(md.find("... and 1 more (see the JUnit report)"), std::string::npos) << md;  // 2 skipped
}

TEST(RunReportStepSummary, MatchesApprovedCopy) {
  approval::expect_approved("run_step_summary", "md", run_step_summary(sample()));
}

TEST(RunReportVerdict, GateFailuresHollowAndUnfinished) {
  RunReport r = sample();
  RunVerdict v = run_verdict(r);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.summary, "gate: FAIL: 5 of 9 cases failed (FAIL 1, ERROR 1, CRASH 1, TIMEOUT 1, XPASS 1)");
  r.gate = false;
  EXPECT_EQ(run_verdict(r).exit_code, 0);
  EXPECT_EQ(run_verdict(r).summary.rfind("no gate: 5 of 9 cases failed", 0), 0u);

  RunReport clean;
  clean.id = 3;
  clean.gate = true;
  clean.finished_at = "2024-06-01T00:00:00Z";
  clean.results = {outcome("op/a", Status::Pass), outcome("op/b", Status::Skip, "", "why")};
  EXPECT_EQ(run_verdict(clean).summary, "gate: PASS: 1 of 2 cases passed, 1 skipped or unsupported, none failed");
  clean.hollow = "only 1 of 2 cases ran";
  EXPECT_EQ(run_verdict(clean).exit_code, 1);
  EXPECT_EQ(run_verdict(clean).summary.rfind("gate: FAIL: run 3 is hollow: only 1 of 2 cases ran; ", 0), 0u);
  clean.hollow.clear();
  clean.finished_at.clear();
  clean.planned = 10;
  EXPECT_EQ(
      run_verdict(clean).summary,
      "gate: PASS: 1 of 2 cases passed, 1 skipped or unsupported, none failed; unfinished: 2 of 10 cases have results");
}

// Note [Failing stage]: an ERROR, CRASH or TIMEOUT names the stage it failed in, in every report.
TEST(RunReportStage, ACrashNamesTheStageItDiedIn) {
  RunReport r = sample();
  for (Outcome& o : r.results) {
    if (o.status == Status::Crash) o.stage = "outputs";
    if (o.status == Status::Fail) o.stage = "compare";
  }
  const std::string stage = "worker died: signal 11 (SIGSEGV) [stage: copying outputs to the host]";
  EXPECT_NE(run_junit_report(r).find(stage), std::string::npos) << run_junit_report(r);
  EXPECT_NE(run_markdown_report(r).find(markdown_text(stage)), std::string::npos) << run_markdown_report(r);
  // A FAIL is always a comparison: its line says nothing more.
  EXPECT_EQ(run_junit_report(r).find("[stage: comparing"), std::string::npos);
}

TEST(RunReportTime, CaseSeconds) {
  Outcome o;
  EXPECT_EQ(case_seconds(o), 0.0);
  o.timing.first_us = 1e6;
  o.timing.median_us = 0.5e6;
  o.timing.reps = 4;
  EXPECT_DOUBLE_EQ(case_seconds(o), 3.0);
  o.timing.first_us = std::nan("");
  EXPECT_EQ(case_seconds(o), 0.0);
}

}  // namespace
}  // namespace gauntlet
