// The reports of `gauntlet compare` (Markdown, JUnit XML, JSON) and the gate verdict; and the
// names of gates, changes and metrics they print (regress.h).
//
// Approval tests: a report rendered from a fixed RunComparison is compared byte for byte with its
// approved copy in harness/tests/approved/. On a mismatch the test fails, says where the first
// difference is, and writes what it rendered next to the test binary as
// compare_report.received.md (or .json); `diff -u` the two to review. To accept a change in a
// report (re-bless), run
//   GAUNTLET_BLESS=1 build/dev/harness/tests/gauntlet_analysis_tests --gtest_filter='Report*'
// which overwrites the approved files; review their diff before committing it.
//
// The JUnit report is validated against harness/tests/junit.xsd with xmllint (Debian's
// libxml2-utils, installed by ci/setup.sh); without xmllint that test fails.
#include "gauntlet/analysis/reports.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "approval.h"
#include "gauntlet/base/text.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

using approval::build_dir;
using approval::expect_approved;
using approval::kXsd;
using approval::lines_of;
using approval::run_command;
using approval::write_file;
const std::string kScript = "<script>alert(1)</script>";

// ---- The fixed input: one finding of every kind of change, two of them waived (one waiver
// expired), one whose key and detail carry markup, quotes, a control byte and invalid UTF-8.

Finding finding(std::string key, Change change, double baseline, double candidate, double ratio, double p_value,
                std::string detail, std::optional<WaiverRef> waiver = {}) {
  Finding f;
  f.key = std::move(key);
  f.change = change;
  f.baseline = baseline;
  f.candidate = candidate;
  f.ratio = ratio;
  f.p_value = p_value;
  f.detail = std::move(detail);
  f.waiver = std::move(waiver);
  return f;
}

const WaiverRef kWaived{"waivers.yaml:12", "bf16 matmul accumulates in fp32 on sim 0.9.2", "numerics-team",
                        "2099-12-31", false};
const WaiverRef kExpired{"waivers.yaml:30", "erfinv half precision is flaky", "alice", "2024-01-31", true};

RunComparison sample() {
  RunComparison c;
  c.baseline = {41, "2.3.0", "sim", "sim 0.9.1", "nightly", "2024-05-01T02:00:00Z", 1.25};
  c.candidate = {57, "2.4.0-rc1", "sim", "sim 0.9.2", "nightly", "2024-06-01T02:00:00Z", 1.5};
  c.baseline_cases = 1203;
  c.candidate_cases = 1204;
  c.common_cases = 1202;
  c.baseline_counts = {{Status::Pass, 1183}, {Status::Fail, 3}, {Status::Skip, 7}, {Status::XFail, 10}};
  c.candidate_counts = {{Status::Pass, 1180},     {Status::Fail, 5}, {Status::Error, 1},
                        {Status::Unsupported, 2}, {Status::Skip, 7}, {Status::XFail, 9}};
  const double nan = std::nan("");
  c.findings = {
      finding("op/add/float32/shape=[2,3]", Change::StatusChange, 0, 0, 0, -1,
              "PASS -> FAIL: max_abs_err 0.5 (rtol 1.3e-06, atol 1e-05)"),
      finding("op/" + kScript + "|x/float32", Change::StatusChange, 0, 0, 0, -1,
              "PASS -> ERROR: " + kScript +
                  " | \"quoted\" & 'single' \x01 ctrl \xff byte\n"
                  "second line"),
      finding("op/matmul/bfloat16/m=64,n=64,k=64", Change::ErrorGrowth, 0.0012, 0.0098, 8.1666667, -1,
              "max_abs_err 0.0012 -> 0.0098 (8.2x, more than 4x)", kWaived),
      finding("op/erfinv/float16/n=1024", Change::XPass, 0, 0, 0, -1,
              "XFAIL -> XPASS: the expectation is stale (expectations.yaml:40)", kExpired),
      finding("op/sub/int32/n=7", Change::Fixed, 0, 0, 0, -1, "FAIL -> PASS"),
      finding("op/conv2d/float32/n=8,c=64,h=56,w=56", Change::Slower, 812.5, 1020.25, 1.2557, 0.00031,
              "median 812.5 µs -> 1.02 ms (+25.6%, outside the noise band ±3.1%)"),
      finding("op/relu/float32/n=1048576", Change::Faster, 150, 120, 0.8, 0.0021, "median 150 µs -> 120 µs (-20.0%)"),
      finding("op/acosh/float32/n=1024", Change::NewFallback, 0, 1, 0, -1, "falls back to the CPU: aten::acosh.out"),
      finding("model/mlp/compile/batch=32", Change::GraphBreaks, 0, 2, 0, -1, "graph breaks 0 -> 2"),
      finding("model/mlp/compile/batch=64", Change::Recompiles, 1, 3, 3, -1, "recompiles 1 -> 3"),
      finding("model/resnet18/compile/batch=8", Change::CompileTime, 4.2e6, 5.6e6, 1.3333, -1,
              "compile time 4.2 s -> 5.6 s (+33.3%)"),
      finding("model/resnet18/eager/batch=8", Change::FirstRun, 21000, 27500, 1.3095, -1,
              "first run 21 ms -> 27.5 ms (+31.0%)"),
      finding("model/resnet18/eager/batch=8", Change::PeakMemory, 1610612736, 1879048192, 1.1667, -1,
              "peak memory 1.5 GiB -> 1.75 GiB (+16.7%)"),
      finding("op/`odd`'key/float32", Change::Missing, 0, nan, 0, -1,
              "in baseline run 41 (PASS), not in candidate run 57"),
      finding("op/new_op/float32/n=16", Change::New, 0, 0, 0, -1, "new in the candidate: PASS"),
      finding("op/softmax/float32/n=4096", Change::SpeedShift, 40, 46, 1.15, 0.005,
              "sim time 40 µs -> 46 µs (+15.0%) since release 2.2.0, over 6 releases"),
      finding("op/cumsum/float32/n=65536", Change::ErrorShift, 2e-6, 1.1e-5, 5.5, 0.01,
              "max_abs_err 2e-06 -> 1.1e-05 (5.5x) since release 2.2.0, over 6 releases"),
  };
  for (Finding& f : c.findings) {
    if (f.change == Change::Slower) f.work_items = std::int64_t{8} * 64 * 56 * 56;  // conv2d's output elements
  }
  // Failing in both runs, no worse (2 of the baseline's 3 FAIL).
  c.known_failures = {{"op/div/float16/n=64", Status::Fail, Status::Fail, "3 of 64 elements outside tolerance"},
                      {"op/lgamma/float32/n=8", Status::Fail, Status::Fail, "RuntimeError: " + kScript}};
  c.throughput = {
      {"samples", 40, 1520.5, 1480.25, {0.9735, 0.951, 0.996}, 0.2284, 0.2815, {1.2327, 1.2048, 1.2618}},
      {"elements", 1140, 2.31e9, 2.24e9, {0.9697, 0.958, 0.981}, 1.503e-4, 1.86e-4, {1.2375, 1.2232, 1.2526}}};
  c.speed.metric = "sim";
  c.speed.compared = 1180;
  c.speed.unjudged = 12;
  c.speed.geomean = {1.034, 1.021, 1.047};
  c.speed.history = {{"1.9.0", 1.0, false},   {"2.0.0", 1.002, false}, {"2.1.0", 1.0, false},
                     {"2.2.0", 0.991, false}, {"2.3.0", 1.002, false}, {"2.4.0-rc1", 1.036, true}};
  return c;
}

ReportOptions options(std::vector<Gate> gates = {Gate::Accuracy, Gate::Speed}) {
  ReportOptions o;
  o.gates = std::move(gates);
  o.db_path = "results/nightly.db";
  o.gauntlet_version = "0.1.0";
  return o;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// Cells of a GitHub table row: split on `|` not escaped by a backslash (GitHub's rule).
std::size_t table_cells(const std::string& row) {
  std::size_t pipes = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\') {
      ++i;
    } else if (row[i] == '|') {
      ++pipes;
    }
  }
  return pipes - 1;
}

// A Markdown line without its code spans (a run of n backticks up to the next run of exactly n).
std::string without_code_spans(const std::string& line) {
  std::string out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    std::size_t n = 0;
    while (i + n < line.size() && line[i + n] == '`') ++n;
    const std::string fence(n, '`');
    std::size_t close = line.find(fence, i + n);
    while (close != std::string::npos && close + n < line.size() && line[close + n] == '`') {
      close = line.find(fence, line.find_first_not_of('`', close));
    }
    if (close == std::string::npos) {
      out += line.substr(i);
      break;
    }
    i = close + n;
  }
  return out;
}

// ---- Names (regress.h) ----

TEST(RegressNames, RoundTripCaseInsensitively) {
  for (Gate g : kAllGates) {
    EXPECT_EQ(parse_gate(gate_name(g)), g);
    std::string upper(gate_name(g));
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(parse_gate(upper), g);
  }
  EXPECT_EQ(parse_gate("Coverage"), Gate::Coverage);
  EXPECT_FALSE(parse_gate("speedy"));
  EXPECT_FALSE(parse_gate(""));
  EXPECT_EQ(parse_metric("SIM"), Metric::Sim);
  EXPECT_EQ(parse_metric("auto"), Metric::Auto);
  EXPECT_EQ(parse_metric("Host"), Metric::Host);
  EXPECT_FALSE(parse_metric("wall"));
  EXPECT_EQ(metric_name(Metric::Host), "host");
}

TEST(RegressNames, ChangesNameTheirGate) {
  const std::vector<std::pair<Change, std::string>> names = {{Change::StatusChange, "status-change"},
                                                             {Change::ErrorGrowth, "error-growth"},
                                                             {Change::XPass, "xpass"},
                                                             {Change::NewFallback, "new-fallback"},
                                                             {Change::GraphBreaks, "graph-breaks"},
                                                             {Change::Recompiles, "recompiles"},
                                                             {Change::CompileTime, "compile-time"},
                                                             {Change::FirstRun, "first-run"},
                                                             {Change::PeakMemory, "peak-memory"},
                                                             {Change::Missing, "missing"},
                                                             {Change::Slower, "slower"},
                                                             {Change::Faster, "faster"},
                                                             {Change::Fixed, "fixed"},
                                                             {Change::New, "new"},
                                                             {Change::ErrorShift, "error-shift"},
                                                             {Change::SpeedShift, "speed-shift"}};
  for (const auto& [change, name] : names) EXPECT_EQ(change_name(change), name);
  EXPECT_EQ(change_gate(Change::ErrorGrowth), Gate::Accuracy);
  EXPECT_EQ(change_gate(Change::Fixed), Gate::Accuracy);
  EXPECT_EQ(change_gate(Change::Faster), Gate::Speed);
  EXPECT_EQ(change_gate(Change::Slower), Gate::Speed);
  EXPECT_EQ(change_gate(Change::Missing), Gate::Coverage);
  EXPECT_EQ(change_gate(Change::PeakMemory), Gate::Coverage);
  EXPECT_TRUE(is_regression(Change::Missing));
  EXPECT_FALSE(is_regression(Change::Faster));
  EXPECT_FALSE(is_regression(Change::Fixed));
  EXPECT_FALSE(is_regression(Change::New));
}

TEST(RegressNames, GatingCountsSkipWaived) {
  const auto counts = sample().gating_counts();
  EXPECT_EQ(counts.at(Gate::Accuracy), 3);  // two status changes, the expired-waiver xpass
  EXPECT_EQ(counts.at(Gate::Speed), 1);
  EXPECT_EQ(counts.at(Gate::Coverage), 7);
}

// ---- The gate verdict ----

TEST(GateVerdict, NoGatesNeverFail) {
  const GateVerdict v = gate_verdict(sample(), {});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.summary, "gate none: PASS: no gating regressions (11 regressions outside the gates)");
}

TEST(GateVerdict, GatingRegressionsInAskedGatesFail) {
  const GateVerdict v = gate_verdict(sample(), {Gate::Speed, Gate::Accuracy});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.summary,
            "gate accuracy,speed: FAIL: 3 accuracy regressions, 1 speed regression (1 waived, 1 "
            "with an expired waiver, 7 regressions outside the gates)");
}

TEST(GateVerdict, OnlyWaivedRegressionsPass) {
  RunComparison c;
  c.findings = {finding("op/a", Change::StatusChange, 0, 0, 0, -1, "PASS -> FAIL", kWaived),
                finding("op/b", Change::Slower, 1, 2, 2, 0.001, "slower", kWaived),
                finding("op/c", Change::Faster, 2, 1, 0.5, 0.001, "faster")};
  const GateVerdict v = gate_verdict(c, {kAllGates[0], kAllGates[1], kAllGates[2]});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.summary, "gate accuracy,speed,coverage: PASS: no gating regressions (2 waived)");
}

TEST(GateVerdict, RegressionInAGateNotAskedPasses) {
  RunComparison c;
  c.findings = {finding("op/a", Change::PeakMemory, 1, 2, 2, -1, "memory up")};
  EXPECT_EQ(gate_verdict(c, {Gate::Accuracy, Gate::Speed}).exit_code, 0);
  EXPECT_EQ(gate_verdict(c, {Gate::Coverage}).exit_code, 1);
  EXPECT_EQ(gate_verdict(c, {Gate::Coverage}).summary, "gate coverage: FAIL: 1 coverage regression");
}

TEST(GateVerdict, ExpiredWaiverGates) {
  RunComparison c;
  c.findings = {finding("op/a", Change::XPass, 0, 0, 0, -1, "XFAIL -> XPASS", kExpired)};
  const GateVerdict v = gate_verdict(c, {Gate::Accuracy});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.summary, "gate accuracy: FAIL: 1 accuracy regression (1 with an expired waiver)");
}

TEST(GateVerdict, NoFindingsPass) {
  const GateVerdict v = gate_verdict(RunComparison{}, {Gate::Accuracy, Gate::Accuracy});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.summary, "gate accuracy: PASS: no gating regressions");
}

// ---- Markdown ----

TEST(ReportMarkdown, MatchesApproved) { expect_approved("compare_report", "md", markdown_report(sample(), options())); }

TEST(ReportMarkdown, TablesSurviveHostileKeysAndDetails) {
  const std::string md = markdown_report(sample(), options());
  // Markup shows as text: escaped outside code spans, literal inside them.
  for (const std::string& line : lines_of(md)) {
    EXPECT_EQ(without_code_spans(line).find('<'), std::string::npos) << line;
  }
  EXPECT_NE(md.find("&lt;script>alert(1)&lt;/script>"), std::string::npos);
  EXPECT_NE(md.find("`op/<script>alert(1)</script>\\|x/float32`"), std::string::npos);
  EXPECT_EQ(md.find('\x01'), std::string::npos);
  // Every row of a table has as many cells as its header.
  std::size_t cells = 0;
  for (const std::string& line : lines_of(md)) {
    if (line.empty() || line[0] != '|') {
      cells = 0;
      continue;
    }
    if (cells == 0) {
      cells = table_cells(line);
    } else {
      EXPECT_EQ(table_cells(line), cells) << line;
    }
  }
  // The key with backticks is in a longer fence; the one with `'` is quoted for the shell.
  EXPECT_NE(md.find("`` op/`odd`'key/float32 ``"), std::string::npos);
  EXPECT_NE(md.find("gauntlet repro 'op/`odd`'\\''key/float32' --backend sim"), std::string::npos);
}

TEST(ReportMarkdown, TablesStopAtTop) {
  ReportOptions o = options();
  o.top = 1;
  const std::string md = markdown_report(sample(), o);
  // Accuracy: 3 rows; coverage: 6; fixed/faster/new: 3.
  EXPECT_NE(md.find("... and 2 more (`--top N` shows more; the JSON report, `--json`, lists every one)"),
            std::string::npos);
  EXPECT_NE(md.find("... and 5 more (`--top N` shows more; the JSON report, `--json`, lists every one)"),
            std::string::npos);
  EXPECT_EQ(count(md, "`op/add/float32/shape=[2,3]`"), 1u);
  EXPECT_EQ(md.find("`op/erfinv/float16/n=1024`"), std::string::npos);
}

TEST(ReportMarkdown, EmptyComparison) {
  const std::string md = markdown_report(RunComparison{}, ReportOptions{});
  EXPECT_NE(md.find("**PASS** (exit code 0): gate none: PASS: no gating regressions"), std::string::npos);
  EXPECT_NE(md.find("No findings"), std::string::npos);
  EXPECT_NE(md.find("No case was timed by both runs"), std::string::npos);
}

// ---- JUnit XML ----

TEST(ReportJUnit, ValidatesAgainstTheSchema) {
  ASSERT_EQ(std::system("command -v xmllint >/dev/null 2>&1"), 0)
      << "xmllint not found: run ci/setup.sh (it installs Debian's libxml2-utils)";
  for (const auto& gates : {std::vector<Gate>{}, std::vector<Gate>{Gate::Accuracy, Gate::Speed},
                            std::vector<Gate>{Gate::Accuracy, Gate::Speed, Gate::Coverage}}) {
    const fs::path file = build_dir() / "compare_report.junit.xml";
    write_file(file, junit_report(sample(), options(gates)));
    std::string output;
    EXPECT_EQ(run_command("xmllint --noout --schema '" + kXsd + "' '" + file.string() + "'", &output), 0) << output;
  }
  const fs::path empty = build_dir() / "compare_report.empty.junit.xml";
  write_file(empty, junit_report(RunComparison{}, ReportOptions{}));
  std::string output;
  EXPECT_EQ(run_command("xmllint --noout --schema '" + kXsd + "' '" + empty.string() + "'", &output), 0) << output;
}

// Cases failing in both runs are listed apart from the regressions, in every report, never gating.
TEST(ReportKnownFailures, ListedApartFromRegressions) {
  const RunComparison c = sample();
  const std::string md = markdown_report(c, options());
  const std::size_t known = md.find("## Known failures (2)");
  ASSERT_NE(known, std::string::npos) << md;
  EXPECT_GT(md.find("`op/div/float16/n=64`"), known);
  EXPECT_LT(md.find("## Accuracy regressions"), known);
  EXPECT_NE(md.find("| FAIL | FAIL | RuntimeError: &lt;script>alert(1)&lt;/script> |"), std::string::npos);
  const std::string xml = junit_report(c, options());
  EXPECT_NE(xml.find("<testsuite name=\"known-failures\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"known failure: FAIL in baseline run 41, FAIL in candidate run 57: 3 of 64"),
            std::string::npos);
  const auto j = nlohmann::json::parse(json_report(c, options()));
  ASSERT_EQ(j.at("known_failures").size(), 2u);
  EXPECT_EQ(j.at("known_failures")[1].at("detail"), "RuntimeError: " + kScript);
  EXPECT_EQ(j.at("counts").at("known_failures"), 2);
  EXPECT_EQ(gate_verdict(c, {Gate::Accuracy}).exit_code, 1);  // from the regressions alone
  RunComparison only_known = c;
  only_known.findings.clear();
  EXPECT_EQ(gate_verdict(only_known, {Gate::Accuracy, Gate::Speed, Gate::Coverage}).exit_code, 0);
}

TEST(ReportJUnit, FailuresAreGatingRegressions) {
  const std::string xml = junit_report(sample(), options());
  EXPECT_NE(xml.find("<testsuites name=\"gauntlet compare\" tests=\"19\" failures=\"4\" "
                     "errors=\"0\" skipped=\"10\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"nightly.accuracy\" "
                     "name=\"op/add/float32/shape=[2,3]\">\n      <failure message=\"status-change: "
                     "PASS -&gt; FAIL: max_abs_err 0.5 (rtol 1.3e-06, atol 1e-05)\" "
                     "type=\"status-change\">"),
            std::string::npos);
  // Waived: skipped with the waiver; expired: a failure.
  EXPECT_NE(xml.find("name=\"op/matmul/bfloat16/m=64,n=64,k=64\">\n      <skipped "
                     "message=\"waived: bf16 matmul accumulates in fp32 on sim 0.9.2 "
                     "(numerics-team, expires 2099-12-31, waivers.yaml:12)\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("name=\"op/erfinv/float16/n=1024\">\n      <failure "), std::string::npos);
  // Coverage was not asked for: its regressions are skipped, not failures.
  EXPECT_NE(xml.find("<skipped message=\"not gated (--gate coverage not asked for): peak-memory"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"baseline_release\" value=\"2.3.0\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"candidate_release\" value=\"2.4.0-rc1\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"gauntlet_version\" value=\"0.1.0\"/>"), std::string::npos);

  const std::string all = junit_report(sample(), options({kAllGates[0], kAllGates[1], kAllGates[2]}));
  EXPECT_EQ(count(all, "<failure "), 11u);
  EXPECT_EQ(count(all, "<skipped "), 3u);  // the waived regression and the two known failures
  EXPECT_NE(all.find("type=\"peak-memory\""), std::string::npos);
}

TEST(ReportJUnit, EscapesEverything) {
  const std::string xml = junit_report(sample(), options());
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  EXPECT_NE(xml.find("name=\"op/&lt;script&gt;alert(1)&lt;/script&gt;|x/float32\""), std::string::npos);
  EXPECT_NE(xml.find("&lt;script&gt;alert(1)&lt;/script&gt; | &quot;quoted&quot; &amp; "
                     "&apos;single&apos; \xEF\xBF\xBD ctrl \xEF\xBF\xBD byte"),
            std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml_escape("a\tb\nc\rd", true), "a&#9;b&#10;c&#13;d");
  EXPECT_EQ(xml_escape("a\tb\nc\rd", false), "a\tb\nc&#13;d");
  EXPECT_EQ(xml_escape("'a' & \"b\"", false), "'a' &amp; \"b\"");
  EXPECT_EQ(xml_escape("'a' & \"b\"", true), "&apos;a&apos; &amp; &quot;b&quot;");
  EXPECT_EQ(xml_escape("\x1f\xef\xbf\xbe ok \xc3\xa9 \xf0\x9f\x98\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD ok \xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(xml_escape("\xc0\xaf \xed\xa0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD"
            "\xEF\xBF\xBD");  // overlong, surrogate
}

// ---- JSON ----

TEST(ReportJson, MatchesApproved) { expect_approved("compare_report", "json", json_report(sample(), options())); }

TEST(ReportJson, FieldsAndNulls) {
  const auto j = nlohmann::json::parse(json_report(sample(), options()));
  EXPECT_EQ(j["json_schema_version"], 1);
  EXPECT_EQ(j["gauntlet_version"], "0.1.0");
  EXPECT_EQ(j["gate"]["exit_code"], 1);
  EXPECT_EQ(j["gate"]["gates"], nlohmann::json({"accuracy", "speed"}));
  ASSERT_EQ(j["findings"].size(), 17u);
  const auto& first = j["findings"][0];
  EXPECT_EQ(first["change"], "status-change");
  EXPECT_TRUE(first["gating"].get<bool>());
  EXPECT_TRUE(first["p_value"].is_null());
  EXPECT_TRUE(first["ratio"].is_null());
  EXPECT_TRUE(first["waiver"].is_null());
  EXPECT_EQ(first["repro"], "gauntlet repro 'op/add/float32/shape=[2,3]' --backend sim");
  EXPECT_EQ(j["findings"][1]["key"], "op/" + kScript + "|x/float32");
  EXPECT_FALSE(j["findings"][2]["gating"].get<bool>());  // waived
  EXPECT_EQ(j["findings"][2]["waiver"]["owner"], "numerics-team");
  EXPECT_TRUE(j["findings"][3]["gating"].get<bool>());  // waiver expired
  EXPECT_DOUBLE_EQ(j["findings"][5]["p_value"].get<double>(), 0.00031);
  EXPECT_TRUE(j["findings"][13]["candidate"].is_null());  // NaN
  EXPECT_FALSE(j["findings"][12]["gating"].get<bool>());  // coverage not asked for
  EXPECT_EQ(j["counts"]["gates"]["coverage"]["unwaived"], 7);
  EXPECT_EQ(j["counts"]["gates"]["coverage"]["gating"], 0);
  EXPECT_EQ(j["counts"]["status"]["UNSUPPORTED"]["baseline"], 0);
  EXPECT_DOUBLE_EQ(j["speed"]["geomean"]["lo"].get<double>(), 1.021);

  RunComparison c;
  c.speed.geomean = {INFINITY, NAN, NAN};
  const auto empty = nlohmann::json::parse(json_report(c, ReportOptions{}));
  EXPECT_TRUE(empty["speed"]["geomean"]["estimate"].is_null());
  EXPECT_TRUE(empty["speed"]["geomean"]["lo"].is_null());
}

}  // namespace
}  // namespace gauntlet
