// `gauntlet report --weekly`: the releases of a week in a results database, per backend and suite,
// each with its pass rate, fallback rate and place on the chained speed index, the regressions
// between consecutive releases (compare_runs, gauntlet/analysis/regress.h) and the change points of the
// week (E-Divisive, gauntlet/analysis/stats.h). No torch; the database is opened read-only. See
// docs/regressions.md#a-weekly-report and Note [Weekly window] in harness/analysis/weekly.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet {

// A report that cannot be made: a bad date, no such database, not a gauntlet database. One line.
class WeeklyError : public Error {
 public:
  using Error::Error;
};

// The days a report covers, both inclusive, "YYYY-MM-DD" (UTC, the dates runs.started_at carry).
struct Window {
  std::string since, until;
};
// The window from --since and --until (either may be empty) and today: by default the 7 days
// ending today (since = until - 6 days); --since alone runs to today, --until alone covers the 7
// days ending then. Throws WeeklyError for a date that is not YYYY-MM-DD or not in the calendar,
// and for since after until.
Window weekly_window(const std::string& since, const std::string& until, const std::string& today);

struct WeeklyOptions {
  Window window;
  std::string backend, suite;  // only runs of this backend / suite (empty: every one)
  CompareOptions compare;      // thresholds for each pair of consecutive releases
  int top = 10;                // regressions listed per pair of releases
};

// A release as the report shows it: the latest run of that release (in the window, or before it
// for the first baseline), the same rule compare uses.
struct WeeklyRelease {
  RunRef run;
  bool before_window = false;  // the release just before the window: the first baseline only
  std::int64_t cases = 0;
  std::map<Status, std::int64_t> counts;
  std::int64_t fallback_cases = 0;  // results with a non-empty fallback_ops
  double pass_rate = 0;             // PASS / cases (0 for a run without results)
  double fallback_rate = 0;         // fallback_cases / cases
  double speed_index = 1;           // chained geomean, the group's first release = 1
  bool speed_change_point = false, pass_change_point = false;
};

// A regression between two consecutive releases, as compare found it.
struct WeeklyFinding {
  std::string key;
  Change change = Change::StatusChange;
  std::string detail;
  double ratio = 0;   // 0 where meaningless (a status change)
  std::string repro;  // `gauntlet repro ...` on the candidate's backend; "" for suite:<name>
};

// releases[i] compared with the release before it (compare_runs with an explicit baseline).
struct WeeklyPair {
  RunRef baseline, candidate;
  std::map<Gate, std::int64_t> regressions;  // every gate present, 0 when none (no waivers)
  stats::Interval geomean;                   // the candidate / baseline speed geomean
  std::int64_t compared = 0;                 // cases in it
  std::vector<WeeklyFinding> top;            // the first `top` regressions in compare's order
  std::int64_t more = 0;                     // regressions beyond them
};

struct WeeklyGroup {
  std::string backend, suite;
  // Oldest first: the release before the window (when the database has one), then the window's.
  std::vector<WeeklyRelease> releases;
  // pairs[i] has releases[i + 1] as its candidate and releases[i] as its baseline.
  std::vector<WeeklyPair> pairs;
  bool change_points_searched = false;  // false: fewer than 4 releases in the series
};

struct WeeklyReport {
  int json_schema_version = 1;
  Window window;
  std::string db_path;
  std::int64_t runs_in_window = 0;  // every run of the window that passed --backend and --suite
  std::vector<WeeklyGroup> groups;  // by backend, then suite
};

// Reads the database at `db_path` (read-only). A database with no run in the window gives a
// report without groups. Throws WeeklyError.
WeeklyReport weekly_report(const std::string& db_path, const WeeklyOptions& options);

// GitHub-flavoured Markdown: a title with the window, one section per backend and suite with
// its releases, change points and the top regressions per pair (each with a `gauntlet repro`
// command). Every text from the database is escaped as the compare reports escape it.
std::string weekly_markdown(const WeeklyReport& r, const std::string& gauntlet_version);
// JSON, "json_schema_version": 1; NaN and infinities are null, invalid UTF-8 becomes U+FFFD.
std::string weekly_json(const WeeklyReport& r, const std::string& gauntlet_version);

}  // namespace gauntlet
