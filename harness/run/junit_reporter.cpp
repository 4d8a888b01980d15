// `run --junit FILE` (Note [Run reporters] in gauntlet/run/reporters.h): JUnit XML of every result
// of the run, read back from the database when the run ends or stops.
#include "gauntlet/analysis/run_reports.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet {

std::unique_ptr<RunListener> junit_reporter(const std::string& path) {
  return report_at_end(path, "JUnit", [](const RunEnd& end) { return run_junit_report(end.report()); });
}

}  // namespace gauntlet
