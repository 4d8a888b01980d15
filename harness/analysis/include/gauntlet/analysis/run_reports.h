// The reports of `gauntlet run` (Note [Run reporters] in gauntlet/run/reporters.h): every
// result of one run rendered as JUnit XML for CI test views and as Markdown for people, and the
// run's verdict. Pure functions of their inputs, like compare's reports (gauntlet/analysis/reports.h, whose
// escaping they share): the same RunReport gives the same bytes, so they are approval-tested
// (harness/tests/run_reports_test.cpp). No torch, no database: the caller reads the run's results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/base/outcome.h"

namespace gauntlet {

// A run as its reports name it, and every result it stored.
struct RunReport {
  std::int64_t id = 0;
  std::string release, backend, backend_version, suite, started_at, finished_at;  // finished_at "": unfinished
  std::int64_t planned = 0;  // cases the run planned (0: unknown); more than results: unfinished
  std::string db_path;       // for the repro and show commands ("": repro with --backend)
  std::string gauntlet_version;
  bool gate = false;   // run --gate: failing cases fail the run
  std::string hollow;  // why --gate found the run hollow (Note [Hollow runs]), else ""
  std::vector<Outcome> results;
};

// The run's verdict: exit code 1 when --gate was asked and a case failed (is_failure) or the run is
// hollow, else 0; and one line, e.g.
//   "gate: FAIL: 3 of 120 cases failed (FAIL 1, CRASH 2)"
//   "gate: PASS: 118 of 120 cases passed, 2 skipped or unsupported, none failed"
//   "no gate: 3 of 120 cases failed (FAIL 1, CRASH 2)"
// An unfinished run adds "; unfinished: 80 of 120 cases have results".
struct RunVerdict {
  int exit_code = 0;
  std::string summary;
};
RunVerdict run_verdict(const RunReport& r);

// The time a testcase took, in seconds: the first call, the timed repetitions and the golden, as
// the run measured them (what `gauntlet plan` takes as a case's cost); 0 for a case that did not
// run to its timing (a crash, a timeout, a skip).
double case_seconds(const Outcome& o);

// Where a crash's or a timeout's stderr tail starts in its error text ("\nlast lines of its
// stderr:\n", which the orchestrator appends), or npos.
std::size_t stderr_tail_at(const std::string& error);

// JUnit XML, valid against harness/tests/junit.xsd: testsuites > one testsuite per case kind (op,
// model, coll, ...) > one testcase per result, sorted by key, each with its `time` (case_seconds).
// The mapping of statuses:
//   PASS              passed
//   XFAIL             passed, with <system-out> saying it failed as expected, and why
//   SKIP, UNSUPPORTED <skipped message="STATUS: reason"/>
//   FAIL, XPASS       <failure message type="STATUS"> (the case ran and its result is wrong, or an
//                     expected failure passed: a stale expectation)
//   ERROR, CRASH,     <error message type="STATUS"> (the case could not run to a result)
//   TIMEOUT
// A failure's or error's text holds the error, the numbers compared, and the repro command; a
// stderr tail goes to <system-err>. Each testsuite has <properties>: json_schema_version,
// gauntlet_version, run, release, backend, backend_version, suite, started_at, finished_at,
// gated, verdict.
std::string run_junit_report(const RunReport& r);

// Markdown (GitHub-flavoured): title, verdict, the run's record, counts and time by status; then
// failures (with repro commands), expected failures, skipped and unsupported cases and passed
// cases, each table stopping after `top` rows with "... and N more"; then the stderr tails of the
// first `top` failures that have one. Text is escaped as compare's report escapes it.
std::string run_markdown_report(const RunReport& r, int top = 100);

// The short Markdown for a CI job's step summary (Note [GitHub Actions]): title, verdict, counts
// by status, and the first `top` failures with their repro commands.
std::string run_step_summary(const RunReport& r, int top = 20);

}  // namespace gauntlet
