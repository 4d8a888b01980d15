// Note [Run reporters]: what `gauntlet run` writes besides its database, for CI systems and
// people. Each is a run listener (Note [Run listeners] in gauntlet/run/listener.h) in a file of its
// own under harness/run/, registered once in reporters.cpp's table with the option that names
// its file; `gauntlet run` offers one `--<flag> FILE` per registered reporter.
//   --json-lines FILE  one JSON object per result (outcome_json.h's fields, plus "run", "repro" and
//                      "json_schema_version"), written as results are committed: a line is queued
//                      with each result and the queue written, flushed, each time the run commits
//                      the database, so a killed run's file holds what its database holds (at most
//                      the last quarter second less). A resumed run rewrites the file from the
//                      run's stored results first: the file covers the whole run, each case once.
//   --junit FILE       JUnit XML of every result of the run (gauntlet/analysis/run_reports.h has the mapping
//   --markdown FILE    of statuses), and Markdown; both read back from the database when the run
//                      ends or stops, so a resumed run's reports are exact and complete.
//   --failed-keys FILE the keys of the run's failing cases, one a line, for `run --keys-file`.
// An empty shard writes no run, but the report files asked for exist, with no testcase, so that a
// CI step reading every shard's reports finds each. The report functions are pure
// (harness/analysis/run_reports.cpp, approval-tested); the reporters only read and write.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/case_key.h"
#include "gauntlet/run/listener.h"

namespace gauntlet {

struct RunReporterEntry {
  std::string flag;    // "junit": `run --junit FILE`
  std::string help;    // the option's help text
  bool allows_stdout;  // FILE may be "-" (stdout)
  // Makes the reporter writing `path`; throws gauntlet::Error naming the problem when it cannot.
  std::function<std::unique_ptr<RunListener>(const std::string& path)> make;
};
// The registered reporters, in the order their options are listed.
const std::vector<RunReporterEntry>& run_reporters();

// The reporters asked for (flag -> path; "" or absent: not asked), checked before anything runs:
// a path that is a folder, lies in a folder that does not exist, or is "-" where stdout is not
// allowed is an Error naming the option. Each made reporter is added to `to`.
void add_run_reporters(const std::map<std::string, std::string>& paths, RunListeners& to);
void check_run_reporter_paths(const std::map<std::string, std::string>& paths);

// The registered reporters' factories, one file each under harness/run/.
std::unique_ptr<RunListener> json_lines_reporter(const std::string& path);
std::unique_ptr<RunListener> junit_reporter(const std::string& path);
std::unique_ptr<RunListener> markdown_reporter(const std::string& path);
std::unique_ptr<RunListener> failed_keys_reporter(const std::string& path);
// --failed-keys's text: the failing keys of `r`, sorted, one a line ("" when none failed).
std::string failed_keys_text(const RunReport& r);

// Writes a report to `path` ("-": stdout); one that cannot be written is an Error naming it and
// `what` ("JUnit").
void write_report_file(const std::string& path, const std::string& text, const char* what);
// A reporter that writes one file when the run ends or stops: `render` makes its text.
std::unique_ptr<RunListener> report_at_end(std::string path, const char* what,
                                           std::function<std::string(const RunEnd&)> render);

// Note [GitHub Actions]: whether to write the step summary and annotations: `flag` (--github), or
// $GITHUB_ACTIONS is "true" (GitHub sets it in every job).
bool github_enabled(bool flag);
// Appends Markdown to the file $GITHUB_STEP_SUMMARY names (a note on stderr when it is unset).
void append_step_summary(const std::string& markdown);
// compare's step summary and annotations (Note [GitHub Actions]); `hollow`: Note [Hollow runs]'s
// reason when the candidate is hollow, else "".
void write_compare_github(const RunComparison& c, const ReportOptions& ro, const std::string& hollow);
// `file` relative to the repository ($GITHUB_WORKSPACE, else the working directory), for an
// annotation's file=; "" when it lies outside.
std::string repository_path(const std::string& file);
// Note [GitHub Actions]: the step summary and one workflow command per failing case (::error with
// --gate, ::warning without), written when the run ends.
std::unique_ptr<RunListener> github_run_reporter();

// The progress display: on a terminal one live line (done/total, cases/s, ETA, counts) with
// failing keys printed above it as they come; otherwise a plain line every 10 s, on stderr. The
// remaining time weighs each case by `expected_case_us` (the plan's estimate: estimated_case_us in
// gauntlet/core/session/plan.h, which this torch-free library cannot call itself).
std::unique_ptr<RunListener> progress_display(std::function<double(const CaseKey&)> expected_case_us);

}  // namespace gauntlet
