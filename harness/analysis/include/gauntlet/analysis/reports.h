// The reports of `gauntlet compare`: one RunComparison (gauntlet/analysis/regress.h) rendered as Markdown for
// people (a CI job summary), JUnit XML for CI test views, and JSON for tools; and the gate
// verdict, the exit code the build fails on. Every report is a pure function of its inputs: the
// same RunComparison and options give the same bytes (no clock, no host, no absolute paths beyond
// those passed in), so reports are approval-tested (harness/tests/reports_test.cpp).
//
// What "gating" means everywhere here: a regression (is_regression) that is not waived, or is
// waived by an expired waiver (Finding::gating), AND whose gate (change_gate) is one of the
// `--gate` kinds asked for. Only those set the exit code, become JUnit <failure>s, and are
// counted "gating" in the Markdown and JSON. A regression whose gate was not asked is reported
// (its section in Markdown, "gating": false in JSON, a JUnit <skipped> saying "not gated").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/regress.h"

namespace gauntlet {

struct ReportOptions {
  std::vector<Gate> gates;  // the --gate kinds asked for; empty: nothing gates
  std::string db_path;      // the database compared, for the `gauntlet show` commands
  int top = 50;             // rows per table in Markdown (the JSON report has every finding)
  std::string gauntlet_version;
};

// Markdown (GitHub-flavoured): title, gate verdict, status counts, findings by change kind, the
// speed summary and its release history, then one section per kind of finding, each row with a
// `gauntlet repro` command. Tables stop after `top` rows with "... and N more (see the JSON
// report)". Keys and details are escaped so that `|`, newlines, backticks and HTML cannot break
// a table or inject markup.
std::string markdown_report(const RunComparison& c, const ReportOptions& o);

// JUnit XML (testsuites > testsuite per gate kind > testcase per finding), valid against
// harness/tests/junit.xsd. A gating regression is a <failure type="<change-name>">; a waived
// one, or one in a gate not asked for, is <skipped>; faster / fixed / new are passing
// testcases, so that a CI test view shows what was fixed. Each testsuite carries <properties>:
// json_schema_version, gauntlet_version, releases, run ids, backend, suite, and whether its gate
// was asked. Text is XML-escaped; characters XML 1.0 forbids (control bytes, invalid UTF-8) are
// replaced with U+FFFD.
std::string junit_report(const RunComparison& c, const ReportOptions& o);

// JSON: {"json_schema_version", "gauntlet_version", "baseline", "candidate", "options" (the
// CompareOptions, plus "db"), "counts" ("cases", "status", "changes", "gates"), "speed",
// "gate" {"gates", "exit_code", "summary"}, "findings" [{"key", "change", "gate",
// "regression", "gating", "baseline", "candidate", "ratio", "p_value", "detail", "waiver",
// "repro"}]}. Every finding is listed, in the RunComparison's order. NaN and infinities are
// null; ratio is null when not meaningful (0), p_value when no test was made (-1); "gating" is
// as defined above; invalid UTF-8 becomes U+FFFD.
std::string json_report(const RunComparison& c, const ReportOptions& o);

// The gate verdict: exit code 0 (clean) or 1 (gating regressions remain in a gate asked for),
// and one line saying why, e.g.
//   "gate accuracy,speed: FAIL: 3 accuracy regressions, 1 speed regression (2 waived)"
//   "gate none: PASS: no gating regressions (4 regressions outside the gates)"
// The parenthesis lists, when non-zero: regressions waived in the gates asked for, those among
// the gating ones whose waiver expired, and unwaived regressions in gates not asked for.
struct GateVerdict {
  int exit_code = 0;
  std::string summary;
};
GateVerdict gate_verdict(const RunComparison& c, const std::vector<Gate>& gates);

// Building blocks the reporters share, public for other reporters and for tests.

// The one command that reproduces a stored case, quoted for a POSIX shell; every failure Gauntlet
// prints (run, show, compare's reports, the dashboard, the weekly report) comes with it:
//   gauntlet repro '<key>' --db <db> --run <run>
// which restores the run's backend, environment, suites dir and goldens (Note [Repro from the
// record] in cli_torch/repro_command.cpp). Without a database (empty `db_path`, or run 0):
//   gauntlet repro '<key>' --backend <backend>
std::string repro_command(std::string_view key, std::string_view db_path, std::int64_t run, std::string_view backend);
// The same for a finding's case in the candidate run ("" for a whole-suite finding).
std::string repro_command(const RunComparison& c, const Finding& f);

}  // namespace gauntlet
